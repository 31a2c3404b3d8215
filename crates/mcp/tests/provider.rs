//! Built-in MCP providers (R30): eligibility, their tools as `mcp__<provider>__<tool>` through
//! the same client adapter as configured servers (naming, annotations, confirmation,
//! truncation), and the local HTTP bridge that serves them to external CLIs, driven with
//! rmcp's Streamable HTTP client.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use rmcp::ServiceExt as _;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::{Value, json};
use toolhost_core::permission::{
    NonInteractiveApprover, PermissionMode, PermissionPolicy, PermissionRule, RuleList,
};
use toolhost_core::{
    Sensitivity, Tool, ToolContext, ToolError, ToolOutput, ToolRegistry, ToolSpec,
};
use toolhost_mcp::provider::{
    BRIDGE_TOKEN_VARIABLE, BRIDGE_URL_VARIABLE, BridgePolicy, ProviderError, ToolhostProvider,
};
use toolhost_mcp::{McpClients, McpProvider, McpProviders, ProviderBridge, ProviderContext};

/// A tool whose result is `size` characters long.
struct Long {
    size: usize,
}

#[async_trait::async_trait]
impl Tool for Long {
    fn spec(&self) -> ToolSpec {
        ToolSpec::new("long_text", "Returns a long text.")
    }

    async fn execute(&self, _args: Value, _ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput::text("x".repeat(self.size)))
    }
}

/// A provider only the agent `reviewer` sees.
struct ReviewerOnly;

impl McpProvider for ReviewerOnly {
    fn name(&self) -> &str {
        "review.kit"
    }

    fn is_eligible(&self, ctx: &ProviderContext) -> bool {
        ctx.agent == "reviewer" && ctx.mode != PermissionMode::Plan
    }

    fn tools(&self) -> Vec<Arc<dyn Tool>> {
        vec![Arc::new(Long { size: 10_000 })]
    }
}

fn toolhost_provider(workspace: &std::path::Path) -> Arc<dyn McpProvider> {
    Arc::new(ToolhostProvider::new(
        workspace,
        Arc::new(|| vec!["Read".to_owned(), "Bash".to_owned()]),
    ))
}

fn names(providers: &[Arc<dyn McpProvider>]) -> Vec<String> {
    providers.iter().map(|p| p.name().to_owned()).collect()
}

#[test]
fn eligibility_decides_which_agents_see_a_provider_and_names_are_unique() {
    let workspace = tempfile::tempdir().unwrap();
    let mut providers = McpProviders::new();
    providers
        .register(toolhost_provider(workspace.path()))
        .unwrap();
    providers.register(Arc::new(ReviewerOnly)).unwrap();
    assert_eq!(
        providers.register(Arc::new(ReviewerOnly)),
        Err(ProviderError::DuplicateName("review.kit".into()))
    );

    let main = ProviderContext::new("main", PermissionMode::Default);
    let reviewer = ProviderContext::new("reviewer", PermissionMode::Default).with_session("s-1");
    let planning_reviewer = ProviderContext::new("reviewer", PermissionMode::Plan);
    assert_eq!(names(&providers.eligible(&main)), ["toolhost"]);
    assert_eq!(
        names(&providers.eligible(&reviewer)),
        ["toolhost", "review.kit"]
    );
    assert_eq!(names(&providers.eligible(&planning_reviewer)), ["toolhost"]);
}

#[tokio::test]
async fn provider_tools_go_through_the_same_adapter_as_configured_servers() {
    let workspace = tempfile::tempdir().unwrap();
    let providers = vec![
        toolhost_provider(workspace.path()),
        Arc::new(ReviewerOnly) as _,
    ];
    let (clients, report) =
        McpClients::start_with_providers(Vec::new(), providers, workspace.path()).await;
    assert!(report.failures.is_empty(), "{:?}", report.failures);
    assert_eq!(
        report.started,
        [("review.kit".to_owned(), 1), ("toolhost".to_owned(), 1)]
    );
    let registry = ToolRegistry::builder().max_chars(2_000).build();
    assert!(clients.register_into(&registry).is_empty());
    // Sanitised like any server's names: `.` becomes `_`.
    assert_eq!(
        registry.names(),
        ["mcp__review_kit__long_text", "mcp__toolhost__status"]
    );
    let status = registry.get("mcp__toolhost__status").unwrap().spec();
    assert_eq!(
        status.sensitivity,
        Sensitivity::Sensitive,
        "MCP tools ask (R29)"
    );
    assert!(status.annotations.read_only, "annotations pass through");

    let result = registry
        .execute("1", "mcp__toolhost__status", json!({}))
        .await;
    assert!(!result.is_error, "{}", result.text());
    let expected = format!(
        "workspace: {}\ntoolhost: {}\ntools: 2 (Bash, Read)",
        workspace.path().display(),
        env!("CARGO_PKG_VERSION")
    );
    assert_eq!(result.text(), expected);
    assert_eq!(result.details.as_ref().unwrap()["tool_count"], 2);

    let long = registry
        .execute("2", "mcp__review_kit__long_text", json!({}))
        .await;
    assert!(long.truncated, "truncated by the registry like any tool");
    assert!(long.text().len() < 3_000, "{}", long.text().len());
    clients.shutdown().await;

    // Under a policy, a provider's tool asks like any MCP tool: refused when nobody can confirm.
    let (clients, _) = McpClients::start_with_providers(
        Vec::new(),
        vec![toolhost_provider(workspace.path())],
        workspace.path(),
    )
    .await;
    let policy = PermissionPolicy::builder()
        .approver(Arc::new(NonInteractiveApprover::refusing()))
        .build();
    let guarded = ToolRegistry::builder().authorizer(Arc::new(policy)).build();
    assert!(clients.register_into(&guarded).is_empty());
    let refused = guarded
        .execute("3", "mcp__toolhost__status", json!({}))
        .await;
    assert!(refused.is_error, "{}", refused.text());
    clients.shutdown().await;
}

async fn connect(
    url: &str,
    token: Option<&str>,
) -> Result<rmcp::service::RunningService<rmcp::RoleClient, ()>, String> {
    let mut config = StreamableHttpClientTransportConfig::with_uri(url);
    if let Some(token) = token {
        config = config.auth_header(token);
    }
    ().serve(StreamableHttpClientTransport::from_config(config))
        .await
        .map_err(|error| error.to_string())
}

#[tokio::test]
async fn the_bridge_serves_eligible_providers_over_http_to_clients_with_the_token() {
    let workspace = tempfile::tempdir().unwrap();
    let mut providers = McpProviders::new();
    providers
        .register(toolhost_provider(workspace.path()))
        .unwrap();
    providers.register(Arc::new(ReviewerOnly)).unwrap();
    let eligible = providers.eligible(&ProviderContext::new("main", PermissionMode::Default));
    let bridge = ProviderBridge::start(&eligible, BridgePolicy::allow_all())
        .await
        .unwrap();

    assert!(
        bridge.url().starts_with("http://127.0.0.1:") && bridge.url().ends_with("/mcp"),
        "{}",
        bridge.url()
    );
    assert_eq!(bridge.token().len(), 64);
    let other = ProviderBridge::start(&eligible, BridgePolicy::allow_all())
        .await
        .unwrap();
    assert_ne!(bridge.token(), other.token(), "a fresh token each time");
    assert_ne!(bridge.url(), other.url(), "a fresh port each time");
    other.shutdown().await;
    let environment = bridge.environment();
    assert_eq!(
        environment[0],
        (BRIDGE_URL_VARIABLE, bridge.url().to_owned())
    );
    assert_eq!(
        environment[1],
        (BRIDGE_TOKEN_VARIABLE, bridge.token().to_owned())
    );
    assert_eq!(environment[0].0, "TOOLHOST_MCP_URL");

    let client = connect(bridge.url(), Some(bridge.token())).await.unwrap();
    let tools: Vec<String> = client
        .list_all_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|tool| tool.name.to_string())
        .collect();
    assert_eq!(tools, ["toolhost__status"], "only the eligible providers");
    let result = client
        .call_tool(CallToolRequestParams::new("toolhost__status"))
        .await
        .unwrap();
    let result = serde_json::to_value(&result).unwrap();
    let text = result["content"][0]["text"].as_str().unwrap();
    assert!(
        text.starts_with(&format!("workspace: {}", workspace.path().display())),
        "{text}"
    );
    client.cancel().await.unwrap();

    let refused = connect(bridge.url(), None).await;
    assert!(refused.is_err(), "no token, no session");
    let refused = connect(bridge.url(), Some("not-the-token")).await;
    assert!(refused.is_err(), "a wrong token, no session");
    bridge.shutdown().await;
}

#[tokio::test]
async fn the_bridge_serves_only_what_its_policy_serves_and_asks_its_authoriser() {
    let workspace = tempfile::tempdir().unwrap();
    let providers: Vec<Arc<dyn McpProvider>> =
        vec![toolhost_provider(workspace.path()), Arc::new(ReviewerOnly)];
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let serves = {
        let seen = Arc::clone(&seen);
        move |spec: &toolhost_core::ToolSpec| {
            seen.lock().unwrap().push(spec.name.clone());
            spec.name == "mcp__review_kit__long_text"
        }
    };
    let policy = PermissionPolicy::builder()
        .rule(
            RuleList::Deny,
            PermissionRule::parse("mcp__review_kit").unwrap(),
        )
        .build();
    let bridge = ProviderBridge::start(
        &providers,
        BridgePolicy {
            serves: Arc::new(serves),
            authorizer: Arc::new(policy),
            result_handler: None,
        },
    )
    .await
    .unwrap();
    assert_eq!(
        *seen.lock().unwrap(),
        ["mcp__toolhost__status", "mcp__review_kit__long_text"],
        "the policy sees the names the agent knows"
    );
    assert_eq!(bridge.tools(), ["review_kit__long_text"]);

    let client = connect(bridge.url(), Some(bridge.token())).await.unwrap();
    let result = client
        .call_tool(CallToolRequestParams::new("review_kit__long_text"))
        .await
        .unwrap();
    let result = serde_json::to_value(&result).unwrap();
    assert_eq!(result["isError"], json!(true), "{result}");
    let text = result["content"][0]["text"].as_str().unwrap();
    assert!(
        text.contains("'mcp__review_kit__long_text' this way is denied by the permission rule 'mcp__review_kit'"),
        "{text}"
    );
    let unknown = client
        .call_tool(CallToolRequestParams::new("toolhost__status"))
        .await;
    let unknown = serde_json::to_value(unknown.ok()).unwrap();
    assert_ne!(unknown["isError"], json!(false), "{unknown}");
    client.cancel().await.unwrap();
    bridge.shutdown().await;
}
