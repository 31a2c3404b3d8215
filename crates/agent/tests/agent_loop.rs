//! The agent loop against an in-process scripted provider and real registries: what the
//! model is sent, how tool calls run, and how a run ends.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use pretty_assertions::assert_eq;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use tokio_util::sync::CancellationToken;
use toolhost_agent::agent_loop::{AgentEvent, AgentLoop, RunOutcome};
use toolhost_core::conversation::{
    AssistantMessage, AssistantPart, Message, StopReason, ToolCall, Usage,
};
use toolhost_core::permission::{
    NonInteractiveApprover, PermissionPolicy, PermissionRule, RuleList,
};
use toolhost_core::{
    ContentBlock, ERROR_HINT, ToolAnnotations, ToolContext, ToolError, ToolOrigin, ToolOutput,
    ToolRegistry, ToolSpec, TypedTool,
};
use toolhost_providers::{
    DeferredLoading, EventSink, ModelProvider, ModelRequest, ProviderError, StreamEvent,
};

/// Answers from a script, one response per request, and records every request.
struct ScriptedProvider {
    responses: Mutex<Vec<AssistantMessage>>,
    requests: Mutex<Vec<ModelRequest>>,
    /// Never answers: waits until cancelled.
    hang: bool,
    context_window: Option<u64>,
    loading: DeferredLoading,
}

impl ScriptedProvider {
    fn new(responses: Vec<AssistantMessage>) -> Arc<Self> {
        Self::of_model(responses, None, DeferredLoading::Injected)
    }

    /// A model of this context window, sent deferred tools this way.
    fn of_model(
        responses: Vec<AssistantMessage>,
        context_window: Option<u64>,
        loading: DeferredLoading,
    ) -> Arc<Self> {
        Arc::new(Self {
            responses: Mutex::new(responses.into_iter().rev().collect()),
            requests: Mutex::new(Vec::new()),
            hang: false,
            context_window,
            loading,
        })
    }

    fn hanging() -> Arc<Self> {
        Arc::new(Self {
            responses: Mutex::new(Vec::new()),
            requests: Mutex::new(Vec::new()),
            hang: true,
            context_window: None,
            loading: DeferredLoading::Injected,
        })
    }

    fn requests(&self) -> Vec<ModelRequest> {
        self.requests.lock().unwrap().clone()
    }
}

#[async_trait::async_trait]
impl ModelProvider for ScriptedProvider {
    fn name(&self) -> &str {
        "scripted"
    }

    fn model(&self) -> &str {
        "script-1"
    }

    fn context_window(&self) -> Option<u64> {
        self.context_window
    }

    fn deferred_loading(&self) -> DeferredLoading {
        self.loading
    }

    async fn stream(
        &self,
        request: &ModelRequest,
        events: EventSink,
        cancel: CancellationToken,
    ) -> Result<AssistantMessage, ProviderError> {
        self.requests.lock().unwrap().push(request.clone());
        if self.hang {
            cancel.cancelled().await;
            return Err(ProviderError::Cancelled);
        }
        let response = self
            .responses
            .lock()
            .unwrap()
            .pop()
            .expect("the script is exhausted");
        for part in &response.content {
            if let AssistantPart::Text { text } = part {
                events(StreamEvent::TextDelta(text.clone()));
            }
        }
        Ok(response)
    }
}

fn text(answer: &str) -> AssistantMessage {
    AssistantMessage {
        content: vec![AssistantPart::Text {
            text: answer.into(),
        }],
        stop_reason: StopReason::EndTurn,
        usage: Usage {
            input_tokens: 10,
            output_tokens: 2,
            ..Usage::default()
        },
        model: None,
    }
}

fn calls(calls: &[(&str, &str, &str)]) -> AssistantMessage {
    AssistantMessage {
        content: calls
            .iter()
            .map(|(id, name, arguments)| {
                AssistantPart::ToolCall(ToolCall {
                    id: (*id).into(),
                    name: (*name).into(),
                    arguments: (*arguments).into(),
                })
            })
            .collect(),
        stop_reason: StopReason::ToolUse,
        usage: Usage {
            input_tokens: 10,
            output_tokens: 5,
            ..Usage::default()
        },
        model: None,
    }
}

/// Parameters of the test tools.
#[derive(Deserialize, JsonSchema)]
struct Params {
    /// A label recorded in the log.
    label: String,
}

/// Records `start LABEL` and `end LABEL` around a short sleep; read-only or not.
struct Logged {
    name: &'static str,
    read_only: bool,
    log: Arc<Mutex<Vec<String>>>,
}

impl TypedTool for Logged {
    type Params = Params;

    fn describe(&self) -> ToolSpec {
        let spec = ToolSpec::new(self.name, "Logs its label.");
        if self.read_only {
            spec.with_annotations(ToolAnnotations::READ_ONLY)
        } else {
            spec
        }
    }

    async fn run(&self, params: Params, _ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        self.log
            .lock()
            .unwrap()
            .push(format!("start {}", params.label));
        tokio::time::sleep(Duration::from_millis(30)).await;
        self.log
            .lock()
            .unwrap()
            .push(format!("end {}", params.label));
        Ok(ToolOutput::text(format!("done {}", params.label)))
    }
}

/// Ends the run (`SessionsYield`-style).
struct Yield;

impl TypedTool for Yield {
    type Params = Params;

    fn describe(&self) -> ToolSpec {
        ToolSpec::new("Yield", "Ends the run.").with_annotations(ToolAnnotations::READ_ONLY)
    }

    async fn run(&self, params: Params, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        ctx.abort();
        Ok(ToolOutput::text(params.label))
    }
}

struct Fixture {
    log: Arc<Mutex<Vec<String>>>,
    registry: Arc<ToolRegistry>,
}

fn fixture(policy: Option<PermissionPolicy>) -> Fixture {
    let log = Arc::new(Mutex::new(Vec::new()));
    let mut builder = ToolRegistry::builder();
    if let Some(policy) = policy {
        builder = builder.authorizer(Arc::new(policy));
    }
    let registry = builder.build();
    for (name, read_only) in [("Look", true), ("Change", false)] {
        registry
            .register(Logged {
                name,
                read_only,
                log: Arc::clone(&log),
            })
            .unwrap();
    }
    registry.register(Yield).unwrap();
    Fixture {
        log,
        registry: Arc::new(registry),
    }
}

fn collect_events() -> (
    toolhost_agent::agent_loop::AgentEventSink,
    Arc<Mutex<Vec<AgentEvent>>>,
) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink_seen = Arc::clone(&seen);
    (
        Arc::new(move |event| sink_seen.lock().unwrap().push(event)),
        seen,
    )
}

#[tokio::test]
async fn a_text_answer_ends_the_run_after_one_turn() {
    let provider = ScriptedProvider::new(vec![text("Hello there.")]);
    let Fixture { registry, .. } = fixture(None);
    let agent = AgentLoop::new(provider.clone(), registry, "Be brief.");
    let (events, seen) = collect_events();
    let report = agent
        .run(vec![Message::user("hi")], events, CancellationToken::new())
        .await;
    assert_eq!(
        report.outcome,
        RunOutcome::Answered {
            text: "Hello there.".into()
        }
    );
    assert_eq!(report.turns, 1);
    assert_eq!(report.usage.input_tokens, 10);
    let requests = provider.requests();
    assert_eq!(requests[0].system, "Be brief.");
    assert_eq!(
        requests[0]
            .tools
            .iter()
            .map(|spec| spec.name.as_str())
            .collect::<Vec<_>>(),
        ["Look", "Change", "Yield"]
    );
    let seen = seen.lock().unwrap();
    assert!(matches!(seen.first(), Some(AgentEvent::RunStart { .. })));
    assert!(seen.contains(&AgentEvent::TextDelta {
        text: "Hello there.".into()
    }));
    assert!(matches!(
        seen.last(),
        Some(AgentEvent::RunEnd { turns: 1, .. })
    ));
}

#[tokio::test]
async fn tool_results_go_back_to_the_model_in_call_order() {
    let provider = ScriptedProvider::new(vec![
        calls(&[
            ("c1", "Look", r#"{"label":"a"}"#),
            ("c2", "Look", r#"{"label":"b"}"#),
        ]),
        text("Both done."),
    ]);
    let Fixture { registry, log } = fixture(None);
    let agent = AgentLoop::new(provider.clone(), registry, "");
    let (events, _) = collect_events();
    let report = agent
        .run(vec![Message::user("go")], events, CancellationToken::new())
        .await;
    assert_eq!(report.turns, 2);
    let second = &provider.requests()[1].messages;
    let results: Vec<(String, String)> = second
        .iter()
        .filter_map(|message| match message {
            Message::ToolResult(result) => Some((
                result.tool_call_id.clone(),
                result.content[0].as_text().unwrap().to_owned(),
            )),
            _ => None,
        })
        .collect();
    assert_eq!(
        results,
        [
            ("c1".to_owned(), "done a".to_owned()),
            ("c2".to_owned(), "done b".to_owned())
        ]
    );
    // Read-only calls ran together: both started before either ended.
    let log = log.lock().unwrap();
    assert_eq!(&log[..2], ["start a", "start b"]);
}

#[tokio::test]
async fn calls_that_change_things_run_one_after_another_in_the_models_order() {
    let provider = ScriptedProvider::new(vec![
        calls(&[
            ("c1", "Look", r#"{"label":"look1"}"#),
            ("c2", "Change", r#"{"label":"change1"}"#),
            ("c3", "Change", r#"{"label":"change2"}"#),
            ("c4", "Look", r#"{"label":"look2"}"#),
        ]),
        text("ok"),
    ]);
    let Fixture { registry, log } = fixture(None);
    let agent = AgentLoop::new(provider, registry, "");
    let (events, _) = collect_events();
    agent
        .run(vec![Message::user("go")], events, CancellationToken::new())
        .await;
    assert_eq!(
        *log.lock().unwrap(),
        [
            "start look1",
            "end look1",
            "start change1",
            "end change1",
            "start change2",
            "end change2",
            "start look2",
            "end look2"
        ]
    );
}

#[tokio::test]
async fn unknown_tools_and_malformed_arguments_become_error_results_and_the_loop_goes_on() {
    let provider = ScriptedProvider::new(vec![
        calls(&[
            ("c1", "Lok", r#"{"label":"a"}"#),
            ("c2", "Look", r#"{"label": "trunc"#),
            ("c3", "Look", r#"{"wrong": 1}"#),
        ]),
        text("recovered"),
    ]);
    let Fixture { registry, log } = fixture(None);
    let agent = AgentLoop::new(provider.clone(), registry, "");
    let (events, _) = collect_events();
    let report = agent
        .run(vec![Message::user("go")], events, CancellationToken::new())
        .await;
    assert_eq!(
        report.outcome,
        RunOutcome::Answered {
            text: "recovered".into()
        }
    );
    assert!(log.lock().unwrap().is_empty(), "no call may have run");
    let errors: Vec<String> = provider.requests()[1]
        .messages
        .iter()
        .filter_map(|message| match message {
            Message::ToolResult(result) => {
                assert!(result.is_error);
                Some(result.content[0].as_text().unwrap().to_owned())
            }
            _ => None,
        })
        .collect();
    assert_eq!(errors.len(), 3);
    assert!(errors[0].contains("Look"), "did you mean: {}", errors[0]);
    assert!(errors[1].contains("not valid JSON"), "{}", errors[1]);
    assert!(errors[2].contains("label"), "{}", errors[2]);
    assert!(errors.iter().all(|error| error.ends_with(ERROR_HINT)));
}

#[tokio::test]
async fn the_iteration_limit_ends_a_run_that_keeps_calling_tools() {
    let provider = ScriptedProvider::new(vec![
        calls(&[("c1", "Look", r#"{"label":"1"}"#)]),
        calls(&[("c2", "Look", r#"{"label":"2"}"#)]),
        calls(&[("c3", "Look", r#"{"label":"3"}"#)]),
    ]);
    let Fixture { registry, log } = fixture(None);
    let agent = AgentLoop::new(provider, registry, "").max_iterations(2);
    let (events, _) = collect_events();
    let report = agent
        .run(vec![Message::user("go")], events, CancellationToken::new())
        .await;
    assert_eq!(report.outcome, RunOutcome::MaxIterations { limit: 2 });
    assert_eq!(report.turns, 2);
    // The second turn's call did not run, but it has a result, so the conversation can go on.
    assert_eq!(*log.lock().unwrap(), ["start 1", "end 1"]);
    assert!(matches!(
        report.messages.last(),
        Some(Message::ToolResult(result)) if result.is_error && result.tool_call_id == "c2"
    ));
}

#[tokio::test]
async fn a_denied_call_never_runs() {
    let policy = PermissionPolicy::builder()
        .rule(RuleList::Deny, PermissionRule::parse("Change").unwrap())
        .approver(Arc::new(NonInteractiveApprover::approving()))
        .build();
    let provider = ScriptedProvider::new(vec![
        calls(&[("c1", "Change", r#"{"label":"x"}"#)]),
        text("I was refused."),
    ]);
    let Fixture { registry, log } = fixture(Some(policy));
    let agent = AgentLoop::new(provider.clone(), registry, "");
    let (events, _) = collect_events();
    let report = agent
        .run(vec![Message::user("go")], events, CancellationToken::new())
        .await;
    assert!(report.outcome.is_success());
    assert!(log.lock().unwrap().is_empty());
    let Some(Message::ToolResult(result)) = provider.requests()[1].messages.last().cloned() else {
        panic!("the refusal goes back to the model");
    };
    assert!(result.is_error);
}

#[tokio::test]
async fn a_tool_that_aborts_ends_the_run_with_its_message() {
    let provider = ScriptedProvider::new(vec![calls(&[(
        "c1",
        "Yield",
        r#"{"label":"handing back"}"#,
    )])]);
    let Fixture { registry, .. } = fixture(None);
    let agent = AgentLoop::new(provider, registry, "");
    let (events, _) = collect_events();
    let report = agent
        .run(vec![Message::user("go")], events, CancellationToken::new())
        .await;
    assert_eq!(
        report.outcome,
        RunOutcome::Stopped {
            tool: "Yield".into(),
            message: "handing back".into()
        }
    );
}

#[tokio::test]
async fn cancelling_stops_a_run_waiting_for_the_model() {
    let provider = ScriptedProvider::hanging();
    let Fixture { registry, .. } = fixture(None);
    let agent = AgentLoop::new(provider, registry, "");
    let (events, _) = collect_events();
    let cancel = CancellationToken::new();
    let canceller = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(50)).await;
        canceller.cancel();
    });
    let report = tokio::time::timeout(
        Duration::from_secs(10),
        agent.run(vec![Message::user("go")], events, cancel),
    )
    .await
    .expect("the run stops when cancelled");
    assert_eq!(report.outcome, RunOutcome::Cancelled);
}

#[test]
fn tool_call_arguments_keep_the_json_text_as_received() {
    let call = ToolCall {
        id: "c".into(),
        name: "Look".into(),
        arguments: json!({"label": "x"}).to_string(),
    };
    assert_eq!(call.parsed_arguments().unwrap(), json!({"label": "x"}));
}

#[tokio::test]
async fn an_answer_imitating_a_tool_result_is_sent_back_then_a_real_call_is_made() {
    let provider = ScriptedProvider::new(vec![
        text("<tool_response>\nThe secret word is \"treasure\".</tool_response>"),
        calls(&[("c1", "Look", r#"{"label": "notes.txt"}"#)]),
        text("The secret word is pelican."),
    ]);
    let Fixture { registry, log } = fixture(None);
    let agent = AgentLoop::new(provider.clone(), registry, "Be brief.");
    let (events, _seen) = collect_events();
    let report = agent
        .run(vec![Message::user("hi")], events, CancellationToken::new())
        .await;
    assert_eq!(
        report.outcome,
        RunOutcome::Answered {
            text: "The secret word is pelican.".into()
        }
    );
    assert_eq!(report.turns, 3);
    assert_eq!(
        log.lock().unwrap().len(),
        2,
        "the real call ran (start, end)"
    );
    // The made-up reply is dropped: the model reads the question and the note, not its
    // imitation again.
    let second = &provider.requests()[1];
    assert_eq!(second.messages.len(), 2, "{:?}", second.messages);
    assert!(matches!(second.messages[1], Message::User { .. }));
    assert!(format!("{:?}", second.messages[1]).contains("imitated a tool result"));
    assert!(!format!("{:?}", second.messages).contains("treasure"));
    assert!(
        !report
            .messages
            .iter()
            .any(|message| format!("{message:?}").contains("treasure"))
    );
}

#[tokio::test]
async fn an_imitating_answer_stands_after_two_notes() {
    let fake = "<tool_response>made up</tool_response>";
    let provider = ScriptedProvider::new(vec![text(fake), text(fake), text(fake)]);
    let Fixture { registry, .. } = fixture(None);
    let agent = AgentLoop::new(provider.clone(), registry, "Be brief.");
    let (events, _seen) = collect_events();
    let report = agent
        .run(vec![Message::user("hi")], events, CancellationToken::new())
        .await;
    assert_eq!(report.outcome, RunOutcome::Answered { text: fake.into() });
    assert_eq!(report.turns, 3);
    // Two notes in place of the first two replies; the third stands.
    assert_eq!(provider.requests()[2].messages.len(), 3);
}

#[tokio::test]
async fn an_answer_describing_a_call_before_any_call_gets_one_note() {
    let provider = ScriptedProvider::new(vec![
        text("To answer, I need to call the Look function with the label notes.txt."),
        calls(&[("c1", "Look", r#"{"label": "notes.txt"}"#)]),
        text("It says pelican; I used Look."),
    ]);
    let Fixture { registry, log } = fixture(None);
    let agent = AgentLoop::new(provider.clone(), registry, "Be brief.");
    let (events, _seen) = collect_events();
    let report = agent
        .run(vec![Message::user("hi")], events, CancellationToken::new())
        .await;
    // After a real call, naming the tool in the answer is fine: the run ends there.
    assert_eq!(
        report.outcome,
        RunOutcome::Answered {
            text: "It says pelican; I used Look.".into()
        }
    );
    assert_eq!(report.turns, 3);
    assert_eq!(log.lock().unwrap().len(), 2, "the call ran");
    let second = &provider.requests()[1];
    assert!(format!("{:?}", second.messages.last()).contains("names a tool but makes no call"));

    // An answer that names no tool stands at once; one that keeps describing stands after
    // the one note.
    let plain = ScriptedProvider::new(vec![text("Looks fine to me.")]);
    let Fixture { registry, .. } = fixture(None);
    let report = AgentLoop::new(plain, registry, "Be brief.")
        .run(
            vec![Message::user("hi")],
            collect_events().0,
            CancellationToken::new(),
        )
        .await;
    assert_eq!(report.turns, 1);
    let stubborn = ScriptedProvider::new(vec![text("Call Look."), text("Call Look.")]);
    let Fixture { registry, .. } = fixture(None);
    let report = AgentLoop::new(stubborn, registry, "Be brief.")
        .run(
            vec![Message::user("hi")],
            collect_events().0,
            CancellationToken::new(),
        )
        .await;
    assert_eq!(report.turns, 2);
    assert!(report.outcome.is_success());
}

/// A custom tool (foreign, so deferrable) whose long description passes a small budget.
struct Custom(&'static str);

impl TypedTool for Custom {
    type Params = Params;

    fn describe(&self) -> ToolSpec {
        ToolSpec::new(self.0, "Exports shipment records. ".repeat(40))
            .with_origin(ToolOrigin::custom(format!("/tools/{}.js", self.0)))
    }

    async fn run(&self, params: Params, _ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput::text(params.label))
    }
}

fn names(tools: &[ToolSpec]) -> Vec<&str> {
    tools.iter().map(|spec| spec.name.as_str()).collect()
}

/// `Yield` and two custom tools.
fn custom_tools() -> Arc<ToolRegistry> {
    let registry = ToolRegistry::new();
    registry.register(Yield).unwrap();
    for name in ["export_a", "export_b"] {
        registry.register(Custom(name)).unwrap();
    }
    Arc::new(registry)
}

#[tokio::test]
async fn a_new_provider_plans_deferral_again_for_its_window_and_how_it_loads_tools() {
    let search = || calls(&[("s1", "tool_search", r#"{"query": "select:export_a"}"#)]);
    // A 2 000-token window: a budget of 200 tokens, which the two custom tools pass.
    let injected = ScriptedProvider::of_model(
        vec![search(), text("Loaded.")],
        Some(2_000),
        DeferredLoading::Injected,
    );
    let mut agent =
        AgentLoop::new(injected.clone(), custom_tools(), "Be brief.").defer_tools(None, Vec::new());
    let (events, _) = collect_events();
    let first = agent
        .run(
            vec![Message::user("Export.")],
            events.clone(),
            CancellationToken::new(),
        )
        .await;
    let sent = injected.requests();
    assert_eq!(names(&sent[0].tools), ["Yield", "tool_search"]);
    assert_eq!(names(&sent[1].tools), ["Yield", "tool_search", "export_a"]);
    assert!(sent[1].deferred_tools.is_empty());
    let Message::ToolResult(result) = &first.messages[2] else {
        panic!("{:?}", first.messages[2]);
    };
    assert_eq!(
        result.content[1..],
        [ContentBlock::tool_reference("export_a")]
    );

    // Native loading: every tool, the deferred ones flagged, the same set every request.
    let native = ScriptedProvider::of_model(
        vec![search(), text("Loaded.")],
        Some(2_000),
        DeferredLoading::Native,
    );
    agent.set_provider(native.clone());
    agent
        .run(
            first.messages.clone(),
            events.clone(),
            CancellationToken::new(),
        )
        .await;
    let sent = native.requests();
    assert_eq!(
        names(&sent[0].tools),
        ["Yield", "export_a", "export_b", "tool_search"]
    );
    assert_eq!(
        sent[0].deferred_tools.iter().collect::<Vec<_>>(),
        ["export_a", "export_b"]
    );
    assert!(std::sync::Arc::ptr_eq(&sent[0].tools, &sent[1].tools));
    assert!(std::sync::Arc::ptr_eq(
        &sent[0].deferred_tools,
        &sent[1].deferred_tools
    ));

    // A window of 200 000 tokens: the tools fit, nothing is deferred, no tool_search.
    let roomy =
        ScriptedProvider::of_model(vec![text("Hi.")], Some(200_000), DeferredLoading::Injected);
    agent.set_provider(roomy.clone());
    agent
        .run(vec![Message::user("Hi.")], events, CancellationToken::new())
        .await;
    let sent = roomy.requests();
    assert_eq!(names(&sent[0].tools), ["Yield", "export_a", "export_b"]);
    assert!(sent[0].deferred_tools.is_empty());
}

#[tokio::test]
async fn a_resumed_conversation_is_offered_what_its_searches_loaded() {
    let provider = ScriptedProvider::of_model(
        vec![text("Exported.")],
        Some(2_000),
        DeferredLoading::Injected,
    );
    let agent =
        AgentLoop::new(provider.clone(), custom_tools(), "Be brief.").defer_tools(None, Vec::new());
    let stored = vec![
        Message::user("Export."),
        Message::Assistant(calls(&[(
            "s1",
            "tool_search",
            r#"{"query": "select:export_b"}"#,
        )])),
        Message::ToolResult(toolhost_core::conversation::ToolResultMessage {
            tool_call_id: "s1".into(),
            tool_name: "tool_search".into(),
            content: vec![
                ContentBlock::text("Loaded 1 tool(s)"),
                ContentBlock::tool_reference("export_b"),
            ],
            is_error: false,
        }),
        Message::user("Again."),
    ];
    let (events, _) = collect_events();
    agent.run(stored, events, CancellationToken::new()).await;
    assert_eq!(
        names(&provider.requests()[0].tools),
        ["Yield", "tool_search", "export_b"]
    );
}
