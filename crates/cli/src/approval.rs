//! Who answers when a call asks: a prompt on the terminal, or the non-interactive approver.

use std::io::{BufRead as _, IsTerminal as _, Write as _};
use std::sync::Arc;

use toolhost_core::permission::{
    ApprovalAnswer, ApprovalRequest, Approver, NonInteractiveApprover,
};

/// The terminal prompt when stdin and stderr are a terminal and `--yes` was not given;
/// otherwise the non-interactive approver (approving with `--yes`).
pub fn approver_for_call(yes: bool, arguments_from_stdin: bool) -> Arc<dyn Approver> {
    if yes {
        Arc::new(NonInteractiveApprover::approving())
    } else if !arguments_from_stdin
        && std::io::stdin().is_terminal()
        && std::io::stderr().is_terminal()
    {
        Arc::new(TerminalApprover)
    } else {
        Arc::new(NonInteractiveApprover::refusing())
    }
}

/// Asks on stderr, reads the answer from stdin.
struct TerminalApprover;

#[async_trait::async_trait]
impl Approver for TerminalApprover {
    async fn approve(&self, request: &ApprovalRequest) -> ApprovalAnswer {
        let prompt = prompt_text(request);
        let answer = tokio::task::spawn_blocking(move || {
            let mut stderr = std::io::stderr().lock();
            let _ = stderr.write_all(prompt.as_bytes());
            let _ = stderr.flush();
            let mut line = String::new();
            std::io::stdin().lock().read_line(&mut line).map(|_| line)
        })
        .await;
        match answer {
            Ok(Ok(line)) => parse_answer(&line),
            _ => ApprovalAnswer::Deny {
                message: "The user could not be asked (the terminal closed).".to_owned(),
            },
        }
    }
}

fn prompt_text(request: &ApprovalRequest) -> String {
    let args = serde_json::to_string_pretty(&request.args).unwrap_or_default();
    let mut text = format!(
        "\n{} wants to run with {args}\n{}\n",
        request.tool, request.reason
    );
    for warning in &request.warnings {
        text.push_str(&format!("  warning: {warning}\n"));
    }
    let remembered = request
        .suggested_rules
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ");
    let session = if remembered.is_empty() {
        format!("allow {} for this session", request.tool)
    } else {
        format!("allow {remembered} for this session")
    };
    text.push_str(&format!(
        "[y] allow once  [a] {session}  [n] deny (type 'n: reason' to tell the model why) > "
    ));
    text
}

fn parse_answer(line: &str) -> ApprovalAnswer {
    let line = line.trim();
    match line.chars().next().map(|c| c.to_ascii_lowercase()) {
        Some('y') => ApprovalAnswer::AllowOnce,
        Some('a') => ApprovalAnswer::AllowForSession,
        _ => {
            let reason = line
                .split_once(':')
                .map(|(_, reason)| reason.trim())
                .filter(|reason| !reason.is_empty());
            ApprovalAnswer::Deny {
                message: match reason {
                    Some(reason) => format!("The user refused this call: {reason}"),
                    None => "The user refused this call. Do not retry it; ask the user what to \
                             do instead."
                        .to_owned(),
                },
            }
        }
    }
}
