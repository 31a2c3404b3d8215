//! What the chat's own commands (`/help`, `/model`, `/mode`, `/compact`, `/branch`, `/tree`,
//! `/sessions`, `/resume`, `/clear`) do and say, for both faces of `toolhost chat`: the line
//! mode prints the reply, the full screen shows it in the transcript.

use tokio_util::sync::CancellationToken;
use toolhost_agent::agent_loop::AgentEventSink;
use toolhost_agent::chat::{CHAT_COMMANDS, ChatInput, ChatSession};
use toolhost_core::permission::PermissionMode;

use crate::text::first_line_cut as one_line;

/// The chat's own commands; what they say (one or more lines). The line mode prints it, the
/// full-screen chat shows it in the transcript.
pub async fn chat_command(
    session: &mut ChatSession,
    command: ChatInput,
    events: &AgentEventSink,
    cancel: CancellationToken,
) -> String {
    match command {
        ChatInput::Help => {
            let mut lines: Vec<String> = CHAT_COMMANDS
                .iter()
                .map(|(usage, what)| format!("  {usage:<26} {what}"))
                .collect();
            lines.push(format!(
                "  {:<26} a slash command file (.toolhost/commands/, .claude/commands/, ~/…)",
                "/NAME [ARGS]"
            ));
            for (usage, what) in session.mcp_prompt_commands().await {
                lines.push(format!("  {usage:<26} {what} (MCP prompt)"));
            }
            lines.join("\n")
        }
        ChatInput::Model(None) => {
            let (provider, model) = session.model();
            format!("model: {model} ({provider})")
        }
        ChatInput::Model(Some(name)) => {
            let (provider, model) = session.model();
            let previous = (provider.to_owned(), model.to_owned());
            match session.switch_model(&name) {
                Ok(()) => {
                    session.tell_model_select(previous).await;
                    let (provider, model) = session.model();
                    format!("model: {model} ({provider})")
                }
                Err(error) => format!("error: {error}"),
            }
        }
        ChatInput::Mode(None) => format!("mode: {}", session.mode()),
        ChatInput::Mode(Some(name)) => match name.parse::<PermissionMode>() {
            Ok(mode) => match session.switch_mode(mode) {
                Ok(()) => format!("mode: {mode} (the tools follow from the next turn)"),
                Err(error) => format!("error: {error}"),
            },
            Err(error) => format!("error: {error}"),
        },
        ChatInput::Compact(instructions) => {
            match session
                .compact(instructions.as_deref(), events, cancel)
                .await
            {
                Ok(done) => format!(
                    "compacted: ~{} tokens before; {} recent messages kept",
                    done.tokens_before, done.kept_messages
                ),
                Err(error) => format!("error: {error}"),
            }
        }
        ChatInput::Branch(None) => match session.branch_points() {
            Ok(points) if points.is_empty() => "no messages to go back to yet".to_owned(),
            Ok(points) => {
                let mut lines: Vec<String> = points
                    .iter()
                    .enumerate()
                    .map(|(n, (_, text))| format!("  {:>3}  {}", n + 1, one_line(text, 70)))
                    .collect();
                lines.push("/branch N goes back to before message N".to_owned());
                lines.join("\n")
            }
            Err(error) => format!("error: {error}"),
        },
        ChatInput::Branch(Some(n)) => match n.parse::<usize>() {
            Ok(n) => match session.branch(n).await {
                Ok(()) => format!(
                    "back before message {n}; {} messages; the old branch is kept",
                    session.messages().len()
                ),
                Err(error) => format!("error: {error}"),
            },
            Err(_) => "error: /branch takes a message number, as /branch lists them".to_owned(),
        },
        ChatInput::Tree(None) => match session.branches() {
            Ok(branches) if branches.is_empty() => "no session tree yet".to_owned(),
            Ok(branches) => {
                let mut lines: Vec<String> = branches
                    .iter()
                    .enumerate()
                    .map(|(n, branch)| {
                        format!(
                            "  {:>3}{} {:>3} messages, the last: {}",
                            n + 1,
                            if branch.current { " *" } else { "  " },
                            branch.user_messages,
                            one_line(&branch.last_user_message, 60)
                        )
                    })
                    .collect();
                if !branches.iter().any(|branch| branch.current) {
                    lines.push(
                        "  (you are at a branch point: your next message starts a new branch)"
                            .to_owned(),
                    );
                }
                lines.push("/tree N goes on with branch N".to_owned());
                lines.join("\n")
            }
            Err(error) => format!("error: {error}"),
        },
        ChatInput::Tree(Some(n)) => match n.parse::<usize>() {
            Ok(n) => match session.switch_branch(n).await {
                Ok(()) => format!(
                    "on branch {n}; {} messages; the other branches are kept",
                    session.messages().len()
                ),
                Err(error) => format!("error: {error}"),
            },
            Err(_) => "error: /tree takes a branch number, as /tree lists them".to_owned(),
        },
        ChatInput::Sessions => match session.sessions() {
            Ok(list) => list
                .into_iter()
                .map(|listed| {
                    format!(
                        "  {}  {:>4} entries  {}",
                        listed.id,
                        listed.entry_count,
                        listed.title.unwrap_or_default()
                    )
                })
                .collect::<Vec<_>>()
                .join("\n"),
            Err(error) => format!("error: {error}"),
        },
        ChatInput::Resume(None) => "error: /resume takes a session id (see /sessions)".to_owned(),
        ChatInput::Resume(Some(id)) => match session.resume(&id).await {
            Ok(()) => format!(
                "resumed session {} ({} messages)",
                session.session_id().unwrap_or_default(),
                session.messages().len()
            ),
            Err(error) => format!("error: {error}"),
        },
        ChatInput::Clear => match session.clear().await {
            Ok(()) => "a new session starts with your next message".to_owned(),
            Err(error) => format!("error: {error}"),
        },
        ChatInput::Message(_) | ChatInput::Empty | ChatInput::Exit | ChatInput::Unknown(_) => {
            String::new()
        }
    }
}
