//! The system prompt: who the agent is, where it works, the tools' guidance, and the
//! project's instructions from `AGENTS.md` / `CLAUDE.md`.
//!
//! It stays the same for every turn of a run (the date has no time of day), so providers that
//! cache prompt prefixes (Anthropic, llama.cpp) reuse it.

use std::path::{Path, PathBuf};

use toolhost_catalog::skills::SkillSummary;

/// The most bytes of context files the prompt carries; a file that does not fit is cut, with a
/// note saying so and where the whole file is.
pub const CONTEXT_FILES_BUDGET: usize = 32 * 1024;

/// The project instruction files read from the workspace root, in this order.
pub const WORKSPACE_CONTEXT_FILES: [&str; 2] = ["AGENTS.md", "CLAUDE.md"];

/// What the system prompt is made of; stored with a session so a resumed run gets the same.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SystemPromptInputs {
    /// The workspace root.
    pub workspace: PathBuf,
    /// Today, as `YYYY-MM-DD`.
    pub date: String,
    /// The operating system and architecture (`linux x86_64`).
    pub platform: String,
    /// The tools offered, in order.
    pub tools: Vec<String>,
    /// The context files found, in order, with their (possibly cut) text.
    pub context_files: Vec<ContextFile>,
    /// The skills, by name and description only (progressive disclosure: `read_skill` gives
    /// the rest); listed when `read_skill` is offered.
    pub skills: Vec<SkillSummary>,
}

/// One instruction file the prompt includes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ContextFile {
    /// Where it is.
    pub path: PathBuf,
    /// Its text, cut to the budget.
    pub text: String,
    /// Whether it was cut.
    pub truncated: bool,
}

impl SystemPromptInputs {
    /// The inputs for `workspace` today, offering `tools`, with the context files found in the
    /// workspace root and under `home` (`~/.toolhost/AGENTS.md`).
    pub fn gather(workspace: &Path, home: Option<&Path>, tools: Vec<String>) -> Self {
        let mut candidates: Vec<PathBuf> = Vec::new();
        if let Some(home) = home {
            candidates.push(home.join(".toolhost").join("AGENTS.md"));
        }
        candidates.extend(
            WORKSPACE_CONTEXT_FILES
                .iter()
                .map(|name| workspace.join(name)),
        );
        Self {
            workspace: workspace.to_path_buf(),
            date: today(),
            platform: format!("{} {}", std::env::consts::OS, std::env::consts::ARCH),
            tools,
            context_files: read_context_files(&candidates, CONTEXT_FILES_BUDGET),
            skills: Vec::new(),
        }
    }

    /// The same inputs, listing these skills.
    #[must_use]
    pub fn with_skills(mut self, skills: Vec<SkillSummary>) -> Self {
        self.skills = skills;
        self
    }

    /// The prompt.
    pub fn render(&self) -> String {
        // The workspace is named as the current folder, never by its absolute path: small
        // models took the tail of that path apart and sent it back as arguments. No example
        // path either: asked to edit greeting.txt, the local model edited the example's
        // `src/main.rs` eight times (benches/model_eval, edit_word).
        let mut prompt = format!(
            "You are toolhost, a coding agent. You work in the current folder, the workspace, \
             on {platform}; today is {date}. Give every path relative to it, as the user \
             or a tool result names it (`.` is the workspace itself).\n\n\
             Use the tools to look before you answer: read files rather than guess their \
             content, and check the result of every change you make. When a tool returns an \
             error, read it and change your approach instead of repeating the same call. When \
             you have what you need, answer in plain text without calling a tool.\n",
            platform = self.platform,
            date = self.date,
        );
        let guidance = tool_guidance(&self.tools);
        if !guidance.is_empty() {
            prompt.push_str("\n# Tools\n");
            for line in guidance {
                prompt.push_str("- ");
                prompt.push_str(line);
                prompt.push('\n');
            }
        }
        if !self.skills.is_empty() && self.tools.iter().any(|tool| tool == "read_skill") {
            prompt.push_str(
                "\n# Skills\nSkills hold instructions (and files) for particular tasks. When \
                 a task matches a skill's description, call read_skill with its name first and \
                 follow what it says.\n",
            );
            for skill in &self.skills {
                let description = skill.description.split_whitespace().collect::<Vec<_>>();
                prompt.push_str(&format!("- {}: {}\n", skill.name, description.join(" ")));
            }
        }
        for file in &self.context_files {
            // A file in the workspace is named as the model would name it; the user's own
            // file (`~/.toolhost/AGENTS.md`) is not: the tools cannot reach it, and a small
            // model given its path goes searching it for the answer.
            let heading = match file.path.strip_prefix(&self.workspace) {
                Ok(relative) => format!("Instructions from {}", relative.display()),
                Err(_) => "The user's instructions".to_owned(),
            };
            prompt.push_str(&format!("\n# {heading}\n{}\n", file.text.trim_end()));
            if file.truncated {
                let whole = match file.path.strip_prefix(&self.workspace) {
                    Ok(relative) => format!("; read {} for the rest", relative.display()),
                    Err(_) => String::new(),
                };
                prompt.push_str(&format!("[cut to fit the prompt{whole}]\n"));
            }
        }
        prompt
    }
}

/// Advice on the tools offered; only tools that are there are named.
fn tool_guidance(tools: &[String]) -> Vec<&'static str> {
    let has = |name: &str| tools.iter().any(|tool| tool == name);
    let mut lines = Vec::new();
    if has("Read") {
        lines.push(
            "A question about a file you are given the name of is answered by Read with that \
             path: read it, do not search for it.",
        );
    }
    if has("Grep") || has("Glob") {
        lines.push(
            "To find files by name use Glob (a pattern such as `**/*.py`); to find text inside \
             files use Grep. Use them rather than shell commands.",
        );
    }
    if has("Read") && (has("Edit") || has("Write")) {
        lines.push(
            "Read a file before you change it: Write refuses to replace a file you have not \
             read, and Edit's old_string must match the file exactly.",
        );
    }
    if has("Bash") {
        lines.push("Bash runs one shell command in the workspace; keep commands non-interactive.");
    }
    lines
}

/// The files that exist among `candidates`, in order, together at most `budget` bytes.
fn read_context_files(candidates: &[PathBuf], budget: usize) -> Vec<ContextFile> {
    let mut left = budget;
    let mut files = Vec::new();
    for path in candidates {
        let Ok(text) = std::fs::read_to_string(path) else {
            continue;
        };
        if text.trim().is_empty() || left == 0 {
            continue;
        }
        let (text, truncated) = cut_at_line(&text, left);
        left -= text.len();
        files.push(ContextFile {
            path: path.clone(),
            text,
            truncated,
        });
    }
    files
}

/// `text` cut to at most `max` bytes, at a line end when there is one.
fn cut_at_line(text: &str, max: usize) -> (String, bool) {
    if text.len() <= max {
        return (text.to_owned(), false);
    }
    let mut cut = max;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    let head = &text[..cut];
    let head = head.rfind('\n').map_or(head, |end| &head[..=end]);
    (head.to_owned(), true)
}

/// Today's date in UTC, `YYYY-MM-DD`.
fn today() -> String {
    let seconds = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_secs());
    let (year, month, day) = civil_from_days(i64::try_from(seconds / 86_400).unwrap_or(0));
    format!("{year:04}-{month:02}-{day:02}")
}

/// Howard Hinnant's days-to-civil conversion (proleptic Gregorian, UTC).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = u32::try_from(doy - (153 * mp + 2) / 5 + 1).unwrap_or(1);
    let month = u32::try_from(if mp < 10 { mp + 3 } else { mp - 9 }).unwrap_or(1);
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn civil_dates_match_known_days() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(20_788), (2026, 12, 1));
        assert_eq!(civil_from_days(11_016), (2000, 2, 29));
    }

    #[test]
    fn context_files_share_one_budget_and_say_when_cut() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("AGENTS.md"), "line one\nline two\n").unwrap();
        std::fs::write(dir.path().join("CLAUDE.md"), "claude one\nclaude two\n").unwrap();
        let files = read_context_files(
            &[dir.path().join("AGENTS.md"), dir.path().join("CLAUDE.md")],
            30,
        );
        assert_eq!(files.len(), 2);
        assert_eq!(files[0].text, "line one\nline two\n");
        assert!(!files[0].truncated);
        assert_eq!(files[1].text, "claude one\n");
        assert!(files[1].truncated);
    }

    #[test]
    fn the_prompt_names_the_workspace_and_includes_agents_md() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("AGENTS.md"), "Always run cargo fmt.").unwrap();
        let home = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(home.path().join(".toolhost")).unwrap();
        std::fs::write(home.path().join(".toolhost/AGENTS.md"), "Answer briefly.").unwrap();
        let prompt = SystemPromptInputs::gather(
            dir.path(),
            Some(home.path()),
            vec!["Read".into(), "Edit".into()],
        )
        .render();
        // The workspace is the current folder; its absolute path is nowhere.
        assert!(prompt.contains("You work in the current folder, the workspace"));
        // No example file name a model could take for the one it was asked about.
        assert!(!prompt.contains("src/main.rs"), "{prompt}");
        assert!(
            !prompt.contains(&dir.path().display().to_string()),
            "{prompt}"
        );
        // The workspace's file by its relative name, the user's own without its path (the
        // tools cannot reach it).
        assert!(prompt.contains("# Instructions from AGENTS.md\nAlways run cargo fmt."));
        assert!(prompt.contains("# The user's instructions\nAnswer briefly."));
        assert!(
            !prompt.contains(&home.path().display().to_string()),
            "{prompt}"
        );
        assert!(prompt.contains("Read a file before you change it"));
        assert!(prompt.contains("answered by Read with that path"));
        assert!(!prompt.contains("Bash runs"));
    }

    #[test]
    fn the_prompt_lists_skill_names_and_descriptions_only_when_read_skill_is_offered() {
        let dir = tempfile::tempdir().unwrap();
        let skills = vec![SkillSummary {
            name: "pdf".into(),
            description: "Fill in PDF\nforms.".into(),
        }];
        let with = SystemPromptInputs::gather(dir.path(), None, vec!["read_skill".into()])
            .with_skills(skills.clone())
            .render();
        assert!(with.contains("# Skills\n"), "{with}");
        assert!(with.contains("- pdf: Fill in PDF forms.\n"), "{with}");
        let without = SystemPromptInputs::gather(dir.path(), None, vec!["Read".into()])
            .with_skills(skills)
            .render();
        assert!(!without.contains("# Skills"));
    }
}
