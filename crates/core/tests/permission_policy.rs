//! The permission policy as the pipeline's authoriser: approvals, session rules, hook
//! rewrites re-validated by the pipeline, the audit trail, and filtered registries.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::{Arc, Mutex};

use pretty_assertions::assert_eq;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use toolhost_core::permission::{
    AnswerKind, ApprovalAnswer, ApprovalRequest, Approver, AuditEntry, AuditError, AuditSink,
    Decision, DecisionSource, HookCall, HookDecision, HookVerdict, NonInteractiveApprover,
    PermissionMode, PermissionPolicy, PermissionRule, PreToolUseHook, RuleList, arguments_digest,
};
use toolhost_core::{
    ERROR_HINT, PermissionFamily, Sensitivity, ToolAnnotations, ToolContext, ToolError, ToolOrigin,
    ToolOutput, ToolRegistry, ToolSpec, TypedTool,
};
use toolhost_test_support::EchoShell;

/// A safe, read-only tool.
struct Look;

/// No parameters.
#[derive(Deserialize, JsonSchema)]
struct NoParams {}

impl TypedTool for Look {
    type Params = NoParams;

    fn describe(&self) -> ToolSpec {
        ToolSpec::new("Read", "Looks.")
            .with_family(PermissionFamily::Read)
            .with_sensitivity(Sensitivity::Safe)
            .with_annotations(ToolAnnotations::READ_ONLY)
    }

    async fn run(&self, _params: NoParams, _ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput::text("looked"))
    }
}

/// Answers with a fixed answer and keeps every request it saw.
struct Person {
    answer: ApprovalAnswer,
    seen: Mutex<Vec<ApprovalRequest>>,
}

#[async_trait::async_trait]
impl Approver for Person {
    async fn approve(&self, request: &ApprovalRequest) -> ApprovalAnswer {
        self.seen.lock().unwrap().push(request.clone());
        self.answer.clone()
    }
}

fn person(answer: ApprovalAnswer) -> Arc<Person> {
    Arc::new(Person {
        answer,
        seen: Mutex::new(Vec::new()),
    })
}

/// Keeps audit entries in memory.
#[derive(Default)]
struct Trail(Mutex<Vec<AuditEntry>>);

impl AuditSink for Trail {
    fn record(&self, entry: &AuditEntry) -> Result<(), AuditError> {
        self.0.lock().unwrap().push(entry.clone());
        Ok(())
    }
}

fn registry(policy: PermissionPolicy) -> ToolRegistry {
    let registry = ToolRegistry::builder().authorizer(Arc::new(policy)).build();
    registry.register(EchoShell).unwrap();
    registry.register(Look).unwrap();
    registry
}

#[tokio::test]
async fn a_person_is_asked_with_the_reason_warnings_and_suggested_rules() {
    let approver = person(ApprovalAnswer::AllowOnce);
    let registry = registry(
        PermissionPolicy::builder()
            .approver(approver.clone())
            .build(),
    );
    let result = registry
        .execute("c1", "Bash", json!({"command": "sudo make install"}))
        .await;
    assert_eq!(result.text(), "ran: sudo make install");
    let seen = approver.seen.lock().unwrap();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].tool, "Bash");
    assert_eq!(seen[0].args, json!({"command": "sudo make install"}));
    assert_eq!(seen[0].reason, "'Bash' needs confirmation before it runs.");
    assert_eq!(seen[0].warnings, ["runs as root"]);
    assert_eq!(seen[0].suggested_rules[0].as_str(), "Bash(sudo make:*)");
}

#[tokio::test]
async fn allow_for_the_session_is_remembered_as_a_rule() {
    let approver = person(ApprovalAnswer::AllowForSession);
    let policy = Arc::new(
        PermissionPolicy::builder()
            .approver(approver.clone())
            .build(),
    );
    let registry = ToolRegistry::builder().authorizer(policy.clone()).build();
    registry.register(EchoShell).unwrap();
    for _ in 0..3 {
        let result = registry
            .execute("c", "Bash", json!({"command": "git status -s"}))
            .await;
        assert!(!result.is_error);
    }
    assert_eq!(approver.seen.lock().unwrap().len(), 1);
    let remembered: Vec<String> = policy
        .session_rules()
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(remembered, ["Bash(git status:*)"]);
    // Another command still asks.
    registry
        .execute("c", "Bash", json!({"command": "git push"}))
        .await;
    assert_eq!(approver.seen.lock().unwrap().len(), 2);
}

#[tokio::test]
async fn a_refusal_sends_the_persons_message_to_the_model() {
    let approver = person(ApprovalAnswer::Deny {
        message: "Not now: run the tests first.".into(),
    });
    let registry = registry(PermissionPolicy::builder().approver(approver).build());
    let result = registry
        .execute("c", "Bash", json!({"command": "git push"}))
        .await;
    assert!(result.is_error);
    assert_eq!(
        result.text(),
        format!("Not now: run the tests first.\n\n{ERROR_HINT}")
    );
}

#[tokio::test]
async fn without_a_person_the_refusal_says_exactly_how_to_allow_the_call() {
    let registry = registry(PermissionPolicy::builder().build());
    let result = registry
        .execute("c", "Bash", json!({"command": "git status"}))
        .await;
    assert!(result.is_error);
    assert_eq!(
        result.text(),
        format!(
            "'Bash' needs confirmation before it runs. The call was not run: it needs the user's \
             approval and nobody can be asked here. To allow it, the user can re-run with \
             `--yes`, pass `--allow 'Bash(git status:*)'`, or add \
             `allow = [\"Bash(git status:*)\"]` under `[permissions]` in .toolhost/config.toml.\
             \n\n{ERROR_HINT}"
        )
    );
    let approving = registry_with(NonInteractiveApprover::approving());
    let result = approving
        .execute("c", "Bash", json!({"command": "git status"}))
        .await;
    assert_eq!(result.text(), "ran: git status");
}

#[tokio::test]
async fn without_asking_refuses_what_would_ask_a_person_and_keeps_the_rest() {
    let approver = person(ApprovalAnswer::AllowForSession);
    let trail = Arc::new(Trail::default());
    let policy = Arc::new(
        PermissionPolicy::builder()
            .approver(approver.clone())
            .rule(RuleList::Deny, PermissionRule::parse("Bash(rm:*)").unwrap())
            .audit(trail.clone())
            .build(),
    );
    let quiet = registry(policy.without_asking());
    let result = quiet
        .execute("q1", "Bash", json!({"command": "git status"}))
        .await;
    assert!(result.is_error);
    assert!(
        result.text().contains("nobody can be asked here"),
        "{}",
        result.text()
    );
    assert!(
        approver.seen.lock().unwrap().is_empty(),
        "a person was asked"
    );
    let denied = quiet
        .execute("q2", "Bash", json!({"command": "rm -rf x"}))
        .await;
    assert!(
        denied
            .text()
            .contains("denied by the permission rule 'Bash(rm:*)'")
    );

    // What the person allowed for the session is allowed there too.
    let asking = ToolRegistry::builder().authorizer(policy.clone()).build();
    asking.register(EchoShell).unwrap();
    assert!(
        !asking
            .execute("a1", "Bash", json!({"command": "git status"}))
            .await
            .is_error
    );
    let result = quiet
        .execute("q3", "Bash", json!({"command": "git status"}))
        .await;
    assert_eq!(result.text(), "ran: git status");
    let calls: Vec<String> = trail
        .0
        .lock()
        .unwrap()
        .iter()
        .map(|entry| entry.call_id.clone())
        .collect();
    assert_eq!(calls, ["q1", "q2", "a1", "q3"]);

    // `--yes` (an approver that asks nobody) still approves.
    let approving = PermissionPolicy::builder()
        .approver(Arc::new(NonInteractiveApprover::approving()))
        .build();
    let result = registry(approving.without_asking())
        .execute("y", "Bash", json!({"command": "git status"}))
        .await;
    assert_eq!(result.text(), "ran: git status");
}

fn registry_with(approver: NonInteractiveApprover) -> ToolRegistry {
    registry(
        PermissionPolicy::builder()
            .approver(Arc::new(approver))
            .build(),
    )
}

/// A hook that rewrites every command to `new`, adds context, and says `decision`.
struct Rewrite {
    new: Value,
    decision: Option<HookDecision>,
}

#[async_trait::async_trait]
impl PreToolUseHook for Rewrite {
    async fn before(&self, call: HookCall<'_>) -> HookVerdict {
        if call.tool != "Bash" {
            return HookVerdict::default();
        }
        HookVerdict {
            decision: self.decision,
            reason: Some("policy of the house".into()),
            updated_args: Some(self.new.clone()),
            context: Some("[rewritten by a hook]".into()),
        }
    }
}

#[tokio::test]
async fn a_rewrite_is_judged_validated_and_run_as_rewritten() {
    let trail = Arc::new(Trail::default());
    let policy = PermissionPolicy::builder()
        .rule(
            RuleList::Allow,
            PermissionRule::parse("Bash(git status)").unwrap(),
        )
        .pre_tool_use(Arc::new(Rewrite {
            new: json!({"command": "git status"}),
            decision: None,
        }))
        .audit(trail.clone())
        .build();
    let registry = registry(policy);
    let result = registry
        .execute("c", "Bash", json!({"command": "git push"}))
        .await;
    assert!(!result.is_error, "{}", result.text());
    assert_eq!(result.text(), "ran: git status\n[rewritten by a hook]");
    let entries = trail.0.lock().unwrap();
    assert_eq!(
        entries[0].arguments_sha256,
        arguments_digest(&json!({"command": "git status"}))
    );
    assert_eq!(entries[0].decision, Decision::Allow);
}

#[tokio::test]
async fn a_rewrite_into_a_denied_command_is_denied() {
    let policy = PermissionPolicy::builder()
        .mode(PermissionMode::BypassPermissions)
        .rule(RuleList::Deny, PermissionRule::parse("Bash(rm:*)").unwrap())
        .pre_tool_use(Arc::new(Rewrite {
            new: json!({"command": "rm -rf x"}),
            decision: Some(HookDecision::Allow),
        }))
        .build();
    let result = registry(policy)
        .execute("c", "Bash", json!({"command": "ls"}))
        .await;
    assert!(result.is_error);
    assert!(
        result
            .text()
            .contains("denied by the permission rule 'Bash(rm:*)'")
    );
}

#[tokio::test]
async fn a_rewrite_that_breaks_the_schema_is_refused_by_the_pipeline() {
    let policy = PermissionPolicy::builder()
        .pre_tool_use(Arc::new(Rewrite {
            new: json!({"cmd": "ls"}),
            decision: Some(HookDecision::Allow),
        }))
        .build();
    let result = registry(policy)
        .execute("c", "Bash", json!({"command": "ls"}))
        .await;
    assert!(result.is_error);
    let text = result.text();
    assert!(
        text.contains("rewritten before the call (by a PreToolUse hook)"),
        "{text}"
    );
    assert!(text.contains("command"), "{text}");
}

#[tokio::test]
async fn a_hook_decision_is_audited_with_its_reason() {
    let trail = Arc::new(Trail::default());
    let policy = PermissionPolicy::builder()
        .pre_tool_use(Arc::new(Rewrite {
            new: json!({"command": "ls"}),
            decision: Some(HookDecision::Deny),
        }))
        .audit(trail.clone())
        .build();
    let result = registry(policy)
        .execute("c", "Bash", json!({"command": "ls"}))
        .await;
    assert!(
        result
            .text()
            .contains("A PreToolUse hook refused the call of 'Bash'. policy of the house")
    );
    let entries = trail.0.lock().unwrap();
    assert_eq!(
        entries[0].by,
        DecisionSource::Hook {
            reason: Some("policy of the house".into())
        }
    );
}

#[tokio::test]
async fn every_decision_is_audited_with_what_made_it() {
    let trail = Arc::new(Trail::default());
    let policy = PermissionPolicy::builder()
        .rule(
            RuleList::Allow,
            PermissionRule::parse("Bash(git status)")
                .unwrap()
                .with_origin("--allow"),
        )
        .audit(trail.clone())
        .build();
    let registry = registry(policy);
    registry
        .execute("c1", "Bash", json!({"command": "git status"}))
        .await;
    registry.execute("c2", "Read", json!({})).await;
    registry
        .execute("c3", "Bash", json!({"command": "git push"}))
        .await;
    let entries = trail.0.lock().unwrap();
    let lines: Vec<Value> = entries
        .iter()
        .map(|entry| serde_json::to_value(entry).unwrap())
        .collect();
    assert_eq!(
        lines[0],
        json!({
            "call_id": "c1", "tool": "Bash",
            "arguments_sha256": arguments_digest(&json!({"command": "git status"})),
            "mode": "default", "decision": "allow", "asked": false,
            "by": {"kind": "rules", "list": "allow", "rules": [{"rule": "Bash(git status)", "origin": "--allow"}]},
            "subject": {"kind": "shell", "value": {"commands": [["git", "status"]], "fully_analysed": true}}
        })
    );
    assert_eq!(lines[1]["by"], json!({"kind": "safe_tool"}));
    assert_eq!(lines[2]["decision"], "deny");
    assert_eq!(lines[2]["asked"], true);
    assert_eq!(lines[2]["by"]["answer"], json!(AnswerKind::Deny));
}

#[test]
fn the_digest_ignores_key_order() {
    let a: Value = serde_json::from_str(r#"{"b": [1, {"y": 2, "x": 1}], "a": "z"}"#).unwrap();
    let b: Value = serde_json::from_str(r#"{"a": "z", "b": [1, {"x": 1, "y": 2}]}"#).unwrap();
    assert_eq!(arguments_digest(&a), arguments_digest(&b));
    assert_eq!(arguments_digest(&a).len(), 64);
    assert_ne!(arguments_digest(&a), arguments_digest(&json!({"a": "z"})));
}

#[test]
fn the_digest_is_the_lowercase_hex_sha256_of_the_canonical_json() {
    // `printf '{"a":1,"b":[true,null]}' | sha256sum`
    assert_eq!(
        arguments_digest(&json!({"b": [true, null], "a": 1})),
        "1cc69c7fa23616ca2ec3ee70d24390a6225c8832db8a4c814c7e0e7f942f8668"
    );
}

#[tokio::test]
async fn plan_mode_shows_and_runs_only_read_only_tools() {
    let registry = registry(
        PermissionPolicy::builder()
            .mode(PermissionMode::Plan)
            .build(),
    );
    let visible = registry.for_mode(PermissionMode::Plan);
    assert_eq!(visible.names(), ["Read"]);
    assert_eq!(
        registry.for_mode(PermissionMode::Default).names(),
        ["Bash", "Read"]
    );
    // Called anyway (through the unfiltered registry), a tool that changes things is refused.
    let result = registry
        .execute("c", "Bash", json!({"command": "ls"}))
        .await;
    assert!(
        result
            .text()
            .contains("plan mode only runs read-only tools")
    );
}

#[test]
fn subagents_inherit_skills_slash_commands_and_mcp_tools() {
    /// A tool as its crate would declare it: skills and slash commands say sub-agents inherit
    /// them, MCP tools have their server as origin.
    struct Declared(ToolSpec);
    #[async_trait::async_trait]
    impl toolhost_core::Tool for Declared {
        fn spec(&self) -> ToolSpec {
            self.0.clone()
        }
        async fn execute(&self, _args: Value, _ctx: ToolContext) -> Result<ToolOutput, ToolError> {
            Ok(ToolOutput::text(""))
        }
    }
    let parent = ToolRegistry::new();
    let plain = |name: &str| ToolSpec::new(name, "a tool");
    for spec in [
        plain("Read").with_family(PermissionFamily::Read),
        plain("Bash"),
        plain("list_skills").with_subagent_inheritance(),
        plain("read_skill").with_subagent_inheritance(),
        plain("slash_command").with_subagent_inheritance(),
        plain("mcp__gh__list").with_origin(ToolOrigin::mcp("gh")),
        plain("spawn_agent"),
        // A name is not an origin: a custom tool called mcp__x__y is not an MCP tool.
        plain("mcp__x__y").with_origin(ToolOrigin::custom("tools/x.ts")),
    ] {
        parent.register(Declared(spec)).unwrap();
    }
    assert_eq!(
        parent.inherited_by_subagent().names(),
        [
            "list_skills",
            "read_skill",
            "slash_command",
            "mcp__gh__list"
        ]
    );
    let own = toolhost_core::permission::ToolSelection::parse(["Read"]).unwrap();
    assert_eq!(
        own.apply_for_subagent(&parent).names(),
        [
            "Read",
            "list_skills",
            "read_skill",
            "slash_command",
            "mcp__gh__list"
        ]
    );
    assert_eq!(own.apply(&parent).names(), ["Read"]);
}

#[test]
fn the_subject_is_worked_out_only_when_something_reads_it() {
    use toolhost_core::Authorizer as _;
    let read = ToolSpec::new("Read", "reads")
        .with_family(PermissionFamily::Read)
        .with_sensitivity(Sensitivity::Safe);
    let bash = ToolSpec::new("Bash", "runs").with_family(PermissionFamily::Shell);
    let plain = PermissionPolicy::builder().build();
    assert!(
        !plain.wants_subject(&read),
        "a safe tool with no rules naming it"
    );
    assert!(
        plain.wants_subject(&bash),
        "the shell deny list lives in the subject"
    );
    let with_rule = PermissionPolicy::builder()
        .rule(RuleList::Deny, PermissionRule::parse("Read(.env)").unwrap())
        .build();
    assert!(with_rule.wants_subject(&read));
    let bare_rule = PermissionPolicy::builder()
        .rule(RuleList::Deny, PermissionRule::parse("Grep").unwrap())
        .build();
    assert!(
        !bare_rule.wants_subject(&read),
        "a bare rule needs no subject"
    );
    let audited = PermissionPolicy::builder()
        .audit(Arc::new(Trail::default()))
        .build();
    assert!(audited.wants_subject(&read), "the audit trail records it");
}
