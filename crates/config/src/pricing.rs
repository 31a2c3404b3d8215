//! What tokens cost: per-model prices in USD per million tokens, from `[providers.NAME]
//! pricing` or a small built-in table of the hosted Anthropic and OpenAI models, and the one
//! line a run ends with.
//!
//! ```toml
//! [providers.local]
//! api = "openai-chat"
//! pricing = { input = 3.0, output = 15.0, cached_input = 0.3 }   # USD per million tokens
//! ```
//!
//! A model without a price is counted in tokens only: no cost is made up.
//!
//! ```
//! use toolhost_config::pricing::{Pricing, usage_summary};
//! use toolhost_core::conversation::Usage;
//!
//! let usage = Usage { input_tokens: 12_000, output_tokens: 800, cache_read_tokens: 10_000, cache_write_tokens: 0 };
//! let pricing = Pricing { input: 3.0, output: 15.0, cached_input: Some(0.3), cache_write: None };
//! assert_eq!(pricing.cost(&usage), 0.021);
//! assert_eq!(usage_summary(&usage, Some(&pricing)), "tokens: 12,000 in (10,000 cached), 800 out · cost $0.0210");
//! assert_eq!(usage_summary(&usage, None), "tokens: 12,000 in (10,000 cached), 800 out");
//! ```

use serde::Serialize;
use toolhost_core::conversation::Usage;

/// Prices of one model, in USD per million tokens.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Pricing {
    /// Prompt tokens neither read from nor written to a cache.
    pub input: f64,
    /// Generated tokens, reasoning included.
    pub output: f64,
    /// Prompt tokens read from the cache; `None`: charged as `input`.
    pub cached_input: Option<f64>,
    /// Prompt tokens written to the cache (Anthropic charges them above `input`); `None`:
    /// charged as `input`.
    pub cache_write: Option<f64>,
}

// Prices are checked finite and not negative when read (`Pricing::check`), so equality is an
// equivalence on every value a `Pricing` holds; `ProviderEntry` stays `Eq`.
impl Eq for Pricing {}

impl Pricing {
    /// What `usage` cost, in USD. `usage.input_tokens` counts the cached tokens too (as
    /// [`Usage`] says), so they are taken out of the uncached input before pricing them.
    pub fn cost(&self, usage: &Usage) -> f64 {
        let uncached = usage
            .input_tokens
            .saturating_sub(usage.cache_read_tokens)
            .saturating_sub(usage.cache_write_tokens);
        let per_token = |tokens: u64, price: f64| tokens as f64 * price / 1e6;
        let total = per_token(uncached, self.input)
            + per_token(
                usage.cache_read_tokens,
                self.cached_input.unwrap_or(self.input),
            )
            + per_token(
                usage.cache_write_tokens,
                self.cache_write.unwrap_or(self.input),
            )
            + per_token(usage.output_tokens, self.output);
        round_cost(total)
    }

    /// Why these prices cannot be used (a negative or non-finite number), naming the key.
    pub fn check(&self) -> Result<(), String> {
        let values = [
            ("input", Some(self.input)),
            ("output", Some(self.output)),
            ("cached_input", self.cached_input),
            ("cache_write", self.cache_write),
        ];
        for (key, value) in values {
            if let Some(value) = value
                && (!value.is_finite() || value < 0.0)
            {
                return Err(format!(
                    "pricing.{key} = {value} is not a price: give USD per million tokens, 0 or more"
                ));
            }
        }
        Ok(())
    }
}

/// `amount` without the float noise that sums of prices per million carry in the tenth
/// decimal (nobody is billed below a millionth of a dollar).
pub fn round_cost(amount: f64) -> f64 {
    (amount * 1e9).round() / 1e9
}

/// When the built-in prices were copied from the providers' published price lists.
pub const BUILT_IN_PRICES_AS_OF: &str = "2025-11";

/// Published prices of the well-known hosted models, USD per million tokens: model, input,
/// output, cache read, cache write (Anthropic's 5-minute cache; OpenAI does not charge writes).
/// As of [`BUILT_IN_PRICES_AS_OF`]; `[providers.NAME] pricing` overrides them.
const BUILT_IN: &[(&str, f64, f64, f64, Option<f64>)] = &[
    ("claude-opus-4-5", 5.0, 25.0, 0.5, Some(6.25)),
    ("claude-opus-4-1", 15.0, 75.0, 1.5, Some(18.75)),
    ("claude-opus-4", 15.0, 75.0, 1.5, Some(18.75)),
    ("claude-sonnet-4-5", 3.0, 15.0, 0.3, Some(3.75)),
    ("claude-sonnet-4", 3.0, 15.0, 0.3, Some(3.75)),
    ("claude-3-7-sonnet", 3.0, 15.0, 0.3, Some(3.75)),
    ("claude-haiku-4-5", 1.0, 5.0, 0.1, Some(1.25)),
    ("claude-3-5-haiku", 0.8, 4.0, 0.08, Some(1.0)),
    ("gpt-5", 1.25, 10.0, 0.125, None),
    ("gpt-5-mini", 0.25, 2.0, 0.025, None),
    ("gpt-5-nano", 0.05, 0.4, 0.005, None),
    ("gpt-4.1", 2.0, 8.0, 0.5, None),
    ("gpt-4.1-mini", 0.4, 1.6, 0.1, None),
    ("gpt-4.1-nano", 0.1, 0.4, 0.025, None),
    ("gpt-4o", 2.5, 10.0, 1.25, None),
    ("gpt-4o-mini", 0.15, 0.6, 0.075, None),
    ("o3", 2.0, 8.0, 0.5, None),
    ("o4-mini", 1.1, 4.4, 0.275, None),
];

/// The built-in price of `model`: a name of the table, or one followed by a date or
/// `-latest` (`claude-sonnet-4-5-20250929`, `gpt-4o-2024-08-06`). Any other suffix is
/// another model (`gpt-5-pro` is not `gpt-5`) and has no built-in price.
pub fn built_in_pricing(model: &str) -> Option<Pricing> {
    BUILT_IN
        .iter()
        .find(|(name, ..)| {
            model.strip_prefix(name).is_some_and(|rest| {
                rest.is_empty()
                    || rest == "-latest"
                    || rest
                        .strip_prefix('-')
                        .is_some_and(|date| date.chars().all(|c| c.is_ascii_digit() || c == '-'))
            })
        })
        .map(|&(_, input, output, cached, write)| Pricing {
            input,
            output,
            cached_input: Some(cached),
            cache_write: write,
        })
}

/// `tokens: 12,000 in (10,000 cached), 800 out · cost $0.0210`: what a run or a session
/// spent. Without `pricing`, the tokens alone.
pub fn usage_summary(usage: &Usage, pricing: Option<&Pricing>) -> String {
    let mut line = format!("tokens: {} in", thousands(usage.input_tokens));
    if usage.cache_read_tokens > 0 {
        line.push_str(&format!(" ({} cached)", thousands(usage.cache_read_tokens)));
    }
    line.push_str(&format!(", {} out", thousands(usage.output_tokens)));
    if let Some(pricing) = pricing {
        line.push_str(&format!(" · cost {}", dollars(pricing.cost(usage))));
    }
    line
}

/// `$0.0210` under a dollar (four decimals: a turn often costs a fraction of a cent), `$12.34`
/// above.
pub fn dollars(amount: f64) -> String {
    if amount < 1.0 {
        format!("${amount:.4}")
    } else {
        format!("${amount:.2}")
    }
}

/// `12345678` as `12,345,678`.
pub fn thousands(value: u64) -> String {
    let digits = value.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (at, digit) in digits.chars().enumerate() {
        if at > 0 && (digits.len() - at).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use pretty_assertions::assert_eq;

    fn usage(input: u64, output: u64, read: u64, write: u64) -> Usage {
        Usage {
            input_tokens: input,
            output_tokens: output,
            cache_read_tokens: read,
            cache_write_tokens: write,
        }
    }

    #[test]
    fn cached_tokens_are_taken_out_of_the_input_and_priced_as_cached() {
        let pricing = built_in_pricing("claude-sonnet-4-5").unwrap();
        // 1M prompt tokens: 600k read from the cache, 100k written to it, 300k plain.
        let cost = pricing.cost(&usage(1_000_000, 10_000, 600_000, 100_000));
        assert_eq!(cost, 1.605);
    }

    #[test]
    fn missing_cache_prices_charge_the_input_price() {
        let pricing = Pricing {
            input: 2.0,
            output: 4.0,
            cached_input: None,
            cache_write: None,
        };
        assert_eq!(pricing.cost(&usage(500_000, 250_000, 100_000, 0)), 2.0);
    }

    #[test]
    fn built_in_prices_match_dated_names_and_no_other_model() {
        assert_eq!(
            built_in_pricing("claude-sonnet-4-5-20250929"),
            built_in_pricing("claude-sonnet-4-5")
        );
        assert_eq!(built_in_pricing("gpt-4o-2024-08-06").unwrap().input, 2.5);
        assert_eq!(built_in_pricing("gpt-5-mini").unwrap().input, 0.25);
        assert_eq!(
            built_in_pricing("claude-3-5-haiku-latest").unwrap().output,
            4.0
        );
        assert_eq!(built_in_pricing("gpt-5-pro"), None);
        assert_eq!(built_in_pricing("qwen2.5-coder-1.5b"), None);
    }

    #[test]
    fn the_summary_line_gives_tokens_and_a_cost_only_when_priced() {
        let usage = usage(1_234_567, 89, 0, 0);
        assert_eq!(usage_summary(&usage, None), "tokens: 1,234,567 in, 89 out");
        let pricing = built_in_pricing("gpt-5").unwrap();
        assert_eq!(
            usage_summary(&usage, Some(&pricing)),
            "tokens: 1,234,567 in, 89 out · cost $1.54"
        );
    }

    #[test]
    fn a_negative_price_is_refused_naming_its_key() {
        let pricing = Pricing {
            input: 1.0,
            output: 1.0,
            cached_input: Some(-0.5),
            cache_write: None,
        };
        assert!(
            pricing
                .check()
                .unwrap_err()
                .starts_with("pricing.cached_input = -0.5")
        );
    }
}
