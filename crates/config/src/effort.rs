//! How hard a model should think: Claude Code's agent `effort`, turned by each provider into
//! its own knob (OpenAI's `reasoning_effort` / `reasoning.effort`, Anthropic's thinking
//! budget).

/// A reasoning effort, as an agent file's `effort` writes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReasoningEffort {
    /// `low`.
    Low,
    /// `medium`.
    Medium,
    /// `high`.
    High,
    /// `max` (Claude Code's highest): OpenAI's APIs have no higher level than `high`.
    Max,
}

/// Anthropic's thinking budget for each effort, in tokens (its minimum is 1024).
const THINKING_BUDGETS: [(ReasoningEffort, u32); 4] = [
    (ReasoningEffort::Low, 2_048),
    (ReasoningEffort::Medium, 8_192),
    (ReasoningEffort::High, 16_384),
    // Below Opus 4's 32 000 output tokens with the answer's room added.
    (ReasoningEffort::Max, 24_576),
];

impl ReasoningEffort {
    /// The name as written: `low`, `medium`, `high`, `max`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Low => "low",
            Self::Medium => "medium",
            Self::High => "high",
            Self::Max => "max",
        }
    }

    /// OpenAI's `reasoning_effort` value (`max` is sent as `high`, its highest).
    pub fn openai(self) -> &'static str {
        match self {
            Self::Max => "high",
            other => other.as_str(),
        }
    }

    /// Anthropic's `thinking.budget_tokens` for this effort.
    pub fn thinking_budget(self) -> u32 {
        THINKING_BUDGETS
            .iter()
            .find(|(effort, _)| *effort == self)
            .map_or(THINKING_BUDGETS[0].1, |(_, budget)| *budget)
    }
}

impl std::str::FromStr for ReasoningEffort {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text.trim().to_ascii_lowercase().as_str() {
            "low" => Ok(Self::Low),
            "medium" => Ok(Self::Medium),
            "high" => Ok(Self::High),
            "max" | "xhigh" => Ok(Self::Max),
            other => Err(format!(
                "unknown effort '{other}': write low, medium, high or max"
            )),
        }
    }
}
