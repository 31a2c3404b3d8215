//! What the screen's loop does with each event: the state takes it, and the actions it asks
//! for are carried out — a line sent to the session, a turn cancelled, a mode switched, a rule
//! written, a render hook or a pending action run on a task of its own.

use ratatui::crossterm::event::{Event, KeyEventKind};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use toolhost_agent::agent_loop::AgentEvent;
use toolhost_agent::chat::ChatInput;
use toolhost_core::ToolOutput;
use toolhost_script::RenderOptions;

use super::app::{Action, App, Hook};
use super::dialogs::{ApprovalDialog, Dialog, QuestionDialog};
use super::renderers::THEME;
use super::session_task::SessionCommand;
use super::transcript::NoticeKind;
use super::{Screen, UiEvent};
use toolhost_config::local_rules;
use toolhost_core::permission::RuleList;

/// One event into the state; what it asks for.
pub(super) fn handle(app: &mut App, screen: &Screen, event: UiEvent) -> Vec<Action> {
    match event {
        UiEvent::Agent(event) => {
            let ended = matches!(*event, AgentEvent::ToolCallEnd { .. });
            let actions = app.agent_event(*event);
            if ended {
                app.pending_actions(screen.host.take_pending_actions());
            }
            actions
        }
        UiEvent::Approval(request, reply) => {
            app.dialogs
                .push_back(Dialog::Approval(ApprovalDialog::new(request, reply)));
            Vec::new()
        }
        UiEvent::Question(request, reply) => {
            app.dialogs
                .push_back(Dialog::Question(QuestionDialog::new(request, reply)));
            Vec::new()
        }
        UiEvent::Notify(message, level) if level == "status" => {
            app.status.tool_status = Some(message);
            Vec::new()
        }
        UiEvent::Notify(message, level) => {
            let kind = match level.as_str() {
                "error" => NoticeKind::Error,
                "warning" => NoticeKind::Warning,
                _ => NoticeKind::Info,
            };
            app.notice(kind, message);
            Vec::new()
        }
        UiEvent::Rendered {
            call_id,
            hook,
            rendering,
        } => app.rendered(&call_id, hook, rendering),
        UiEvent::Resolved {
            id,
            applied,
            outcome,
        } => {
            app.resolved(id, applied, outcome);
            Vec::new()
        }
        UiEvent::TurnEnded { outcome, text } => {
            app.turn_ended(outcome, text);
            Vec::new()
        }
        UiEvent::Terminal(Event::Key(key)) if key.kind != KeyEventKind::Release => app.key(key),
        UiEvent::Terminal(Event::Paste(text)) => {
            app.paste(&text);
            Vec::new()
        }
        UiEvent::Terminal(_) => Vec::new(),
    }
}

/// Does what the state asked for.
pub(super) fn act(
    app: &mut App,
    screen: &Screen,
    events: &mpsc::UnboundedSender<UiEvent>,
    commands: &mpsc::UnboundedSender<SessionCommand>,
    turn: &mut Option<CancellationToken>,
    action: Action,
) {
    match action {
        Action::Submit(line) => {
            if ChatInput::parse(&line) == ChatInput::Clear {
                app.clear_transcript();
            }
            let token = CancellationToken::new();
            *turn = Some(token.clone());
            let _ = commands.send(SessionCommand::Line(line, token));
        }
        Action::CancelTurn => {
            if let Some(token) = turn.take() {
                token.cancel();
                app.notice(NoticeKind::Warning, "cancelling the turn…");
            }
        }
        Action::SwitchMode(mode) => {
            screen.policy.set_mode(mode);
            let _ = commands.send(SessionCommand::SwitchMode(mode));
            app.notice(
                NoticeKind::Info,
                format!(
                    "mode: {mode} (approvals at once; the tools offered follow from the next turn)"
                ),
            );
        }
        Action::RememberRules(rules) => {
            let path = local_rules::local_config(&screen.workspace);
            let listed = rules
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(", ");
            match local_rules::remember(&path, RuleList::Allow, &rules) {
                Ok(_) => app.notice(
                    NoticeKind::Info,
                    format!("allowed always: {listed} (added to {})", path.display()),
                ),
                Err(error) => app.notice(
                    NoticeKind::Error,
                    format!("allowed for this session only: {error}"),
                ),
            }
        }
        Action::Render { call_id, hook } => spawn_render(app, screen, events, call_id, hook),
        Action::Resolve(action, apply) => {
            let tool = screen
                .scripts
                .iter()
                .find(|tool| tool.runs_module(&action.module))
                .cloned();
            let events = events.clone();
            tokio::spawn(async move {
                let outcome = match tool {
                    Some(tool) => tool.resolve_pending_action(action.id, apply).await,
                    None => Err("the tool that proposed it is no longer loaded".to_owned()),
                };
                let _ = events.send(UiEvent::Resolved {
                    id: action.id,
                    applied: apply,
                    outcome,
                });
            });
        }
        Action::Quit => app.quit = true,
    }
}

/// Runs a render hook on its own task; its drawing comes back as [`UiEvent::Rendered`].
fn spawn_render(
    app: &App,
    screen: &Screen,
    events: &mpsc::UnboundedSender<UiEvent>,
    call_id: String,
    hook: Hook,
) {
    let Some(tool_box) = app.tool(&call_id) else {
        return;
    };
    let Some(tool) = screen
        .scripts
        .iter()
        .find(|tool| tool.name() == tool_box.call.name)
        .cloned()
    else {
        return;
    };
    let args = tool_box.args.clone();
    let (output, options) = match (&tool_box.result, &tool_box.last_update) {
        (Some(result), _) => (
            ToolOutput {
                content: result.content.clone(),
                details: result.details.clone(),
                is_error: result.is_error,
            },
            RenderOptions {
                expanded: app.expanded,
                is_partial: false,
                spinner_frame: None,
            },
        ),
        (None, Some(update)) => (
            ToolOutput {
                content: update.content.clone(),
                details: update.details.clone(),
                is_error: false,
            },
            RenderOptions {
                expanded: app.expanded,
                is_partial: true,
                spinner_frame: Some(app.spinner_frame),
            },
        ),
        (None, None) if hook == Hook::Result => return,
        (None, None) => (ToolOutput::text(""), RenderOptions::default()),
    };
    let events = events.clone();
    tokio::spawn(async move {
        let theme = THEME.as_json();
        let rendering = match hook {
            Hook::Call => tool.render_call(&args, &theme).await,
            Hook::Result => tool.render_result(&output, options, &theme, &args).await,
        };
        let _ = events.send(UiEvent::Rendered {
            call_id,
            hook,
            rendering,
        });
    });
}
