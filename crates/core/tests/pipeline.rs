//! The execution pipeline, step by step, against SPEC.md's requirement ids.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use pretty_assertions::assert_eq;
use serde_json::json;
use toolhost_core::{
    Authorization, Authorizer, CallOptions, CallRequest, ContentBlock, ERROR_HINT, ResultHandler,
    SessionEvent, SessionInfo, TRUNCATION_TAG, ToolOutput, ToolRegistry, ToolUpdate,
};
use toolhost_test_support::test_tools::*;

fn registry_with_echo() -> ToolRegistry {
    let registry = ToolRegistry::new();
    registry.register(Echo).unwrap();
    registry
}

#[tokio::test]
async fn r10_unknown_tool_lists_the_available_tools_and_suggests_one() {
    let registry = registry_with_echo();
    registry.register(Lines).unwrap();
    let result = registry.execute("c1", "echo", json!({})).await;
    assert!(result.is_error);
    assert_eq!(
        result.text(),
        format!(
            "Unknown tool 'echo'. Did you mean 'Echo'? Available tools: Echo, Lines.\n\n{ERROR_HINT}"
        )
    );
    assert_eq!(result.tool_call_id, "c1");
    assert_eq!(result.tool_name, "echo");
}

#[tokio::test]
async fn r11_strings_become_numbers_and_booleans() {
    let registry = registry_with_echo();
    let result = registry
        .execute(
            "c",
            "Echo",
            json!({"text": "hi", "count": "3", "shout": "true", "ratio": "0.5"}),
        )
        .await;
    assert!(!result.is_error, "{}", result.text());
    assert_eq!(result.text(), "HIHIHI");
    assert_eq!(
        result.details,
        Some(json!({"count": 3, "shout": true, "tags": null, "ratio": 0.5}))
    );
}

#[tokio::test]
async fn r11_json_text_becomes_an_object_and_a_lone_value_an_array() {
    let registry = registry_with_echo();
    let result = registry
        .execute(
            "c",
            "Echo",
            json!({"text": "a", "count": 2, "options": "{\"separator\": \"-\"}", "tags": "solo"}),
        )
        .await;
    assert!(!result.is_error, "{}", result.text());
    assert_eq!(result.text(), "a-a");
    assert_eq!(result.details.unwrap()["tags"], json!(["solo"]));
}

#[tokio::test]
async fn r11_json_array_text_becomes_an_array_and_numbers_become_strings() {
    let registry = registry_with_echo();
    let result = registry
        .execute("c", "Echo", json!({"text": 42, "tags": "[\"x\", 7]"}))
        .await;
    assert!(!result.is_error, "{}", result.text());
    assert_eq!(result.text(), "42");
    assert_eq!(result.details.unwrap()["tags"], json!(["x", "7"]));
}

#[tokio::test]
async fn r11_whole_arguments_sent_as_json_text_are_parsed() {
    let registry = registry_with_echo();
    let result = registry
        .execute("c", "Echo", json!("{\"text\": \"wrapped\"}"))
        .await;
    assert!(!result.is_error, "{}", result.text());
    assert_eq!(result.text(), "wrapped");
}

#[tokio::test]
async fn r11_null_for_an_optional_parameter_is_dropped() {
    let registry = ToolRegistry::new();
    registry.register(Lines).unwrap();
    let result = registry
        .execute("c", "Lines", json!({"lines": 1, "fail": null}))
        .await;
    assert!(!result.is_error, "{}", result.text());
    assert_eq!(result.text(), "line 1\n");
}

#[tokio::test]
async fn r12_missing_required_parameter_is_named() {
    let registry = registry_with_echo();
    let result = registry.execute("c", "Echo", json!({"count": 2})).await;
    assert!(result.is_error);
    let text = result.text();
    assert!(
        text.starts_with(
            "Invalid arguments for tool 'Echo':\n- 'text': missing required parameter"
        ),
        "{text}"
    );
    assert!(
        text.contains("Expected parameters: text: string (required), count: integer"),
        "{text}"
    );
    assert!(text.ends_with(ERROR_HINT));
}

#[tokio::test]
async fn r12_wrong_type_and_range_errors_name_the_parameter_and_the_expectation() {
    let registry = registry_with_echo();
    let result = registry
        .execute(
            "c",
            "Echo",
            json!({"text": "x", "count": 50, "shout": "loud"}),
        )
        .await;
    assert!(result.is_error);
    let text = result.text();
    assert!(
        text.contains("- 'count': 50 is greater than the maximum of 10"),
        "{text}"
    );
    assert!(
        text.contains("- 'shout': \"loud\" is not of type"),
        "{text}"
    );
}

#[tokio::test]
async fn r12_nested_errors_give_the_full_path() {
    let registry = registry_with_echo();
    let result = registry
        .execute(
            "c",
            "Echo",
            json!({"text": "x", "options": {"separator": ["no"]}}),
        )
        .await;
    assert!(result.is_error);
    assert!(
        result
            .text()
            .contains("- 'options.separator': [\"no\"] is not of type \"string\""),
        "{}",
        result.text()
    );
}

#[tokio::test]
async fn r3_a_failing_tool_becomes_an_error_result_with_its_details() {
    let registry = ToolRegistry::new();
    registry.register(Failing).unwrap();
    let result = registry.execute("c", "Failing", json!({})).await;
    assert!(result.is_error);
    assert_eq!(result.text(), format!("disk on fire\n\n{ERROR_HINT}"));
    assert_eq!(result.details, Some(json!({"code": 7})));
}

#[tokio::test]
async fn r3_a_panicking_tool_becomes_an_error_result_and_the_registry_lives_on() {
    let registry = registry_with_echo();
    registry.register(Panicking).unwrap();
    let result = registry.execute("c", "Panicking", json!({})).await;
    assert!(result.is_error);
    assert_eq!(
        result.text(),
        format!("Tool 'Panicking' crashed: index out of bounds in a tool\n\n{ERROR_HINT}")
    );
    let after = registry
        .execute("c2", "Echo", json!({"text": "still here"}))
        .await;
    assert_eq!(after.text(), "still here");
}

#[tokio::test]
async fn r2_updates_stream_to_the_sink_in_order() {
    let registry = ToolRegistry::new();
    registry.register(Streaming).unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink_seen = Arc::clone(&seen);
    let options = CallOptions {
        on_update: Some(Arc::new(move |update: ToolUpdate| {
            sink_seen.lock().unwrap().push(update.content);
        })),
        ..CallOptions::default()
    };
    let result = registry
        .execute_with("c", "Streaming", json!({}), options)
        .await;
    assert_eq!(result.text(), "done");
    assert_eq!(
        *seen.lock().unwrap(),
        vec![
            vec![ContentBlock::text("step 1")],
            vec![ContentBlock::text("step 2")],
            vec![ContentBlock::text("step 3")],
        ]
    );
}

#[tokio::test]
async fn r2_abort_asks_the_agent_operation_to_stop() {
    let registry = ToolRegistry::new();
    registry.register(Aborting).unwrap();
    let options = CallOptions::default();
    let abort = options.abort.clone();
    let result = registry
        .execute_with("call-9", "Aborting", json!({}), options)
        .await;
    assert_eq!(result.text(), "aborting call call-9");
    assert!(abort.is_cancelled());
}

#[tokio::test]
async fn a_cancelled_call_returns_promptly_with_an_error_that_says_so() {
    let registry = ToolRegistry::new();
    let saw_cancel = Arc::new(AtomicUsize::new(0));
    registry
        .register(WaitsForCancel {
            saw_cancel: Arc::clone(&saw_cancel),
        })
        .unwrap();
    registry.register(Sleep).unwrap();

    // A tool that ignores cancellation is still abandoned promptly.
    let options = CallOptions::default();
    let cancel = options.cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(50)).await;
        cancel.cancel();
    });
    let started = Instant::now();
    let result = registry
        .execute_with("c", "Sleep", json!({"millis": 60_000}), options)
        .await;
    assert!(started.elapsed() < Duration::from_secs(10));
    assert!(result.is_error);
    assert_eq!(
        result.text(),
        format!("Tool 'Sleep' was cancelled before it finished.\n\n{ERROR_HINT}")
    );

    // A call cancelled before it starts never runs the tool.
    let options = CallOptions::default();
    options.cancel.cancel();
    let result = registry.execute_with("c", "Wait", json!({}), options).await;
    assert!(result.is_error);
    assert!(result.text().contains("was cancelled"));
    assert_eq!(saw_cancel.load(Ordering::SeqCst), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_calls_run_at_once() {
    let registry = Arc::new(ToolRegistry::new());
    registry.register(Sleep).unwrap();
    let started = Instant::now();
    let calls: Vec<_> = (0..50)
        .map(|n| {
            let registry = Arc::clone(&registry);
            tokio::spawn(async move {
                registry
                    .execute(&format!("c{n}"), "Sleep", json!({"millis": 200}))
                    .await
            })
        })
        .collect();
    for (n, call) in calls.into_iter().enumerate() {
        let result = call.await.unwrap();
        assert_eq!(result.tool_call_id, format!("c{n}"));
        assert_eq!(result.text(), "slept 200");
    }
    // Fifty sequential calls would take ten seconds; concurrent ones take a fraction of it.
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
}

struct RewriteErrors;

#[toolhost_core::async_trait]
impl ResultHandler for RewriteErrors {
    async fn handle(&self, request: CallRequest<'_>, output: &mut ToolOutput) {
        if request.spec.name == "Failing" {
            *output = ToolOutput::text("recovered").with_details(json!({"rewritten": true}));
        }
    }
}

#[tokio::test]
async fn r6_result_handlers_rewrite_content_details_and_the_error_flag() {
    let registry = ToolRegistry::builder()
        .result_handler(Arc::new(RewriteErrors))
        .build();
    registry.register(Failing).unwrap();
    registry.register(Echo).unwrap();
    let result = registry.execute("c", "Failing", json!({})).await;
    assert!(!result.is_error);
    assert_eq!(result.text(), "recovered");
    assert_eq!(result.details, Some(json!({"rewritten": true})));
    let untouched = registry.execute("c", "Echo", json!({"text": "same"})).await;
    assert_eq!(untouched.text(), "same");
}

#[tokio::test]
async fn r14_long_output_keeps_head_and_tail_with_a_marker() {
    let registry = ToolRegistry::builder().max_chars(2_000).build();
    registry.register(Lines).unwrap();
    let result = registry
        .execute("c", "Lines", json!({"lines": 5_000}))
        .await;
    assert!(result.truncated);
    assert!(!result.is_error);
    let text = result.text();
    assert!(text.chars().count() <= 2_000);
    assert!(text.starts_with("line 1\nline 2\n"));
    assert!(text.ends_with("line 4999\nline 5000\n"));
    assert!(text.contains(TRUNCATION_TAG));
    assert!(text.contains("lines) cut from the middle"));
}

#[tokio::test]
async fn r14_default_limit_is_fifty_thousand_characters() {
    let registry = ToolRegistry::new();
    registry.register(Lines).unwrap();
    let fits = registry
        .execute("c", "Lines", json!({"lines": 4_000}))
        .await;
    assert!(!fits.truncated, "{} chars", fits.text().len());
    let big = registry
        .execute("c", "Lines", json!({"lines": 20_000}))
        .await;
    assert!(big.truncated);
    assert!(big.text().chars().count() <= 50_000);
}

#[tokio::test]
async fn r15_the_hint_follows_truncation_so_it_is_never_cut() {
    let registry = ToolRegistry::builder().max_chars(1_000).build();
    registry.register(Lines).unwrap();
    let result = registry
        .execute("c", "Lines", json!({"lines": 5_000, "fail": true}))
        .await;
    assert!(result.is_error && result.truncated);
    assert!(
        result
            .text()
            .ends_with(&format!("line 5000\n\n\n{ERROR_HINT}"))
    );
    assert_eq!(result.text().matches(ERROR_HINT).count(), 1);
}

struct DenyShouting;

#[toolhost_core::async_trait]
impl Authorizer for DenyShouting {
    async fn authorize(&self, request: CallRequest<'_>) -> Authorization {
        if request.args["shout"] == json!(true) {
            Authorization::Deny {
                reason: "Shouting is not allowed here; call Echo without `shout`.".into(),
            }
        } else {
            Authorization::Allow
        }
    }
}

#[tokio::test]
async fn the_authorizer_sees_coerced_arguments_and_can_refuse() {
    let registry = ToolRegistry::builder()
        .authorizer(Arc::new(DenyShouting))
        .build();
    registry.register(Echo).unwrap();
    let refused = registry
        .execute("c", "Echo", json!({"text": "a", "shout": "TRUE"}))
        .await;
    assert!(refused.is_error);
    assert_eq!(
        refused.text(),
        format!("Shouting is not allowed here; call Echo without `shout`.\n\n{ERROR_HINT}")
    );
    let allowed = registry.execute("c", "Echo", json!({"text": "a"})).await;
    assert_eq!(allowed.text(), "a");
}

#[tokio::test]
async fn r4_session_events_reach_every_listener_and_failures_are_reported_not_fatal() {
    let registry = ToolRegistry::new();
    let first = Arc::new(Mutex::new(Vec::new()));
    let second = Arc::new(Mutex::new(Vec::new()));
    registry
        .register(Listener {
            name: "First",
            heard: Arc::clone(&first),
            fail_on_shutdown: true,
        })
        .unwrap();
    registry.register(Panicking).unwrap();
    registry
        .register(Listener {
            name: "Second",
            heard: Arc::clone(&second),
            fail_on_shutdown: false,
        })
        .unwrap();
    let session = SessionInfo {
        session_id: Some("s1".into()),
        model: None,
        ..SessionInfo::default()
    };

    let failures = registry
        .dispatch_session_event(&SessionEvent::Start, &session)
        .await;
    assert!(failures.is_empty());
    let failures = registry
        .dispatch_session_event(&SessionEvent::Shutdown, &session)
        .await;
    assert_eq!(failures.len(), 1);
    assert_eq!(failures[0].tool, "First");
    assert_eq!(failures[0].message, "could not flush state");
    assert_eq!(*first.lock().unwrap(), vec!["start@s1", "shutdown@s1"]);
    assert_eq!(*second.lock().unwrap(), vec!["start@s1", "shutdown@s1"]);
}

/// A tool that tells the permission step which path it touches.
struct Touch;

#[toolhost_core::async_trait]
impl toolhost_core::Tool for Touch {
    fn spec(&self) -> toolhost_core::ToolSpec {
        toolhost_core::ToolSpec::new("Touch", "Touches a file.").with_parameters(json!({
            "type": "object",
            "properties": {"path": {"type": "string"}},
            "required": ["path"]
        }))
    }

    async fn execute(
        &self,
        args: serde_json::Value,
        _ctx: toolhost_core::ToolContext,
    ) -> Result<ToolOutput, toolhost_core::ToolError> {
        Ok(ToolOutput::text(format!("touched {}", args["path"])))
    }

    fn permission_subject(&self, args: &serde_json::Value) -> toolhost_core::PermissionSubject {
        support::paths(&[args["path"].as_str().unwrap_or("")])
    }
}

struct DenySecrets;

#[toolhost_core::async_trait]
impl Authorizer for DenySecrets {
    async fn authorize(&self, request: CallRequest<'_>) -> Authorization {
        match request.subject {
            toolhost_core::PermissionSubject::Paths(paths)
                if paths.iter().any(|p| p.display().starts_with("secret/")) =>
            {
                Authorization::Deny {
                    reason: format!("{} may not touch secret/", request.spec.name),
                }
            }
            _ => Authorization::Allow,
        }
    }
}

#[tokio::test]
async fn the_authorizer_matches_on_the_subject_the_tool_reports() {
    let registry = ToolRegistry::builder()
        .authorizer(Arc::new(DenySecrets))
        .build();
    registry.register(Touch).unwrap();
    let refused = registry
        .execute("c", "Touch", json!({"path": "secret/key"}))
        .await;
    assert!(refused.is_error);
    assert!(refused.text().starts_with("Touch may not touch secret/"));
    let allowed = registry
        .execute("c", "Touch", json!({"path": "src/lib.rs"}))
        .await;
    assert_eq!(allowed.text(), "touched \"src/lib.rs\"");
}

/// The typed form of a tool that reports its subject.
struct TypedTouch;

/// Parameters of TypedTouch.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct TouchParams {
    /// The file to touch.
    path: String,
}

impl toolhost_core::TypedTool for TypedTouch {
    type Params = TouchParams;

    fn describe(&self) -> toolhost_core::ToolSpec {
        toolhost_core::ToolSpec::new("TypedTouch", "Touches a file.")
    }

    async fn run(
        &self,
        params: TouchParams,
        _ctx: toolhost_core::ToolContext,
    ) -> Result<ToolOutput, toolhost_core::ToolError> {
        Ok(ToolOutput::text(format!("touched {}", params.path)))
    }

    fn permission_subject(&self, args: &serde_json::Value) -> toolhost_core::PermissionSubject {
        support::paths(&[args["path"].as_str().unwrap_or("")])
    }
}

#[tokio::test]
async fn typed_tools_report_their_subject_too() {
    let registry = ToolRegistry::builder()
        .authorizer(Arc::new(DenySecrets))
        .build();
    registry.register(TypedTouch).unwrap();
    let refused = registry
        .execute("c", "TypedTouch", json!({"path": "secret/key"}))
        .await;
    assert!(
        refused
            .text()
            .starts_with("TypedTouch may not touch secret/"),
        "{}",
        refused.text()
    );
    let allowed = registry
        .execute("c", "TypedTouch", json!({"path": "a"}))
        .await;
    assert_eq!(allowed.text(), "touched a");
}

/// A tool that bounds its own output and says so in its spec.
struct SelfLimiting;

#[toolhost_core::async_trait]
impl toolhost_core::Tool for SelfLimiting {
    fn spec(&self) -> toolhost_core::ToolSpec {
        toolhost_core::ToolSpec::new("SelfLimiting", "Prints a lot.").with_max_result_chars(10_000)
    }

    async fn execute(
        &self,
        _args: serde_json::Value,
        _ctx: toolhost_core::ToolContext,
    ) -> Result<ToolOutput, toolhost_core::ToolError> {
        Ok(ToolOutput::text("x\n".repeat(4_000)))
    }
}

#[tokio::test]
async fn a_tool_with_its_own_limit_is_truncated_at_that_limit() {
    let registry = ToolRegistry::builder().max_chars(1_000).build();
    registry.register(SelfLimiting).unwrap();
    registry.register(Lines).unwrap();
    let own = registry.execute("c", "SelfLimiting", json!({})).await;
    assert!(!own.truncated, "8 000 characters fit the tool's own 10 000");
    assert_eq!(own.text().len(), 8_000);
    let default = registry
        .execute("c", "Lines", json!({"lines": 1_000}))
        .await;
    assert!(default.truncated);
    assert!(default.text().chars().count() <= 1_000);
}

/// A tool with a server's schema (a re-served MCP tool) that answers with the arguments it got.
struct ArgumentsEcho(toolhost_core::ToolSpec);

#[async_trait::async_trait]
impl toolhost_core::Tool for ArgumentsEcho {
    fn spec(&self) -> toolhost_core::ToolSpec {
        self.0.clone()
    }

    async fn execute(
        &self,
        args: serde_json::Value,
        _ctx: toolhost_core::ToolContext,
    ) -> Result<ToolOutput, toolhost_core::ToolError> {
        Ok(ToolOutput::text(args.to_string()))
    }
}

#[tokio::test]
async fn r11_a_missing_required_parameter_with_a_default_gets_the_default() {
    // Playwright MCP's shapes: required properties that have defaults.
    let screenshot = json!({
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "properties": {
            "type": {"type": "string", "enum": ["png", "jpeg"], "default": "png"},
            "scale": {"type": "string", "enum": ["css", "device"], "default": "css"},
            "filename": {"type": "string"},
            "fullPage": {"type": "boolean"}
        },
        "required": ["type", "scale"],
        "additionalProperties": false
    });
    let console = json!({
        "type": "object",
        "properties": {
            "level": {"$ref": "#/$defs/level"},
            "filename": {"type": "string"}
        },
        "required": ["level", "filename"],
        "$defs": {"level": {"type": "string", "enum": ["error", "info"], "default": "info"}}
    });
    let registry = ToolRegistry::new();
    for (name, schema) in [("screenshot", screenshot), ("console", console)] {
        let spec = toolhost_core::ToolSpec::new(name, "Playwright-shaped.").with_parameters(schema);
        registry.register(ArgumentsEcho(spec)).unwrap();
    }

    let result = registry
        .execute(
            "c",
            "screenshot",
            json!({"type": "jpeg", "fullPage": "true"}),
        )
        .await;
    assert!(!result.is_error, "{}", result.text());
    let args: serde_json::Value = serde_json::from_str(&result.text()).unwrap();
    assert_eq!(
        args,
        json!({"type": "jpeg", "scale": "css", "fullPage": true})
    );

    // A default behind a `$ref` is found; a required property without one is still missing.
    let result = registry.execute("c", "console", json!({})).await;
    assert!(result.is_error);
    let text = result.text();
    assert!(
        text.contains("'filename': missing required parameter"),
        "{text}"
    );
    assert!(!text.contains("'level'"), "{text}");
}
