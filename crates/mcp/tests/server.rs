//! The MCP server as a client sees it: rmcp's client on an in-memory duplex pipe, against a
//! registry of test tools (listing, calls through the pipeline, progress, cancellation,
//! approvals through elicitation, list changes).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use pretty_assertions::assert_eq;
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig,
    ClientRequest, ElicitRequestParams, ElicitResult, ElicitationAction, Implementation,
    ProgressNotificationParam,
};
use rmcp::service::{NotificationContext, PeerRequestOptions, RequestContext, RunningService};
use rmcp::{ClientHandler, ErrorData, RoleClient, ServiceExt as _};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::sync::Notify;
use toolhost_core::permission::{Approver, NonInteractiveApprover, PermissionPolicy};
use toolhost_core::{
    Sensitivity, ToolAnnotations, ToolContext, ToolError, ToolOutput, ToolRegistry, ToolSpec,
    ToolUpdate, TypedTool,
};
use toolhost_mcp::rmcp;
use toolhost_mcp::{ClientPrompts, McpApprover, McpServer};

#[derive(Deserialize, JsonSchema)]
struct EchoParams {
    /// What to echo.
    text: String,
}

struct Echo;

impl TypedTool for Echo {
    type Params = EchoParams;
    fn describe(&self) -> ToolSpec {
        ToolSpec::new("Echo", "Echoes its text.")
            .with_label("Echo text")
            .with_annotations(ToolAnnotations::READ_ONLY)
            .with_sensitivity(Sensitivity::Safe)
    }
    async fn run(&self, params: EchoParams, _ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        let length = params.text.len();
        Ok(ToolOutput::text(params.text).with_details(json!({ "length": length })))
    }
}

#[derive(Deserialize, JsonSchema)]
struct StepsParams {
    /// How many steps.
    count: u32,
}

struct Steps;

impl TypedTool for Steps {
    type Params = StepsParams;
    fn describe(&self) -> ToolSpec {
        ToolSpec::new("Steps", "Reports progress.").with_sensitivity(Sensitivity::Safe)
    }
    async fn run(&self, params: StepsParams, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        for step in 1..=params.count {
            ctx.on_update(ToolUpdate {
                progress: Some(f64::from(step)),
                total: Some(f64::from(params.count)),
                ..ToolUpdate::text(format!("step {step}"))
            });
        }
        Ok(ToolOutput::text("done"))
    }
}

#[derive(Deserialize, JsonSchema)]
struct NoParams {}

/// Sets its flag when dropped: the pipeline drops a cancelled call's future.
struct SetOnDrop(Arc<AtomicBool>);

impl Drop for SetOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

/// Waits until cancelled; records that its call stopped, however it stopped.
struct WaitForCancel {
    started: Arc<Notify>,
    cancelled: Arc<AtomicBool>,
}

impl TypedTool for WaitForCancel {
    type Params = NoParams;
    fn describe(&self) -> ToolSpec {
        ToolSpec::new("Wait", "Waits until cancelled.").with_sensitivity(Sensitivity::Safe)
    }
    async fn run(&self, _params: NoParams, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        let _stopped = SetOnDrop(Arc::clone(&self.cancelled));
        self.started.notify_one();
        ctx.cancellation().cancelled().await;
        Ok(ToolOutput::text("cancelled"))
    }
}

struct Delete;

impl TypedTool for Delete {
    type Params = NoParams;
    fn describe(&self) -> ToolSpec {
        ToolSpec::new("Delete", "Deletes everything.").with_label("Delete everything")
    }
    async fn run(&self, _params: NoParams, _ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput::text("deleted"))
    }
}

/// A client that records progress and list changes and answers confirmations as told.
#[derive(Clone)]
struct TestClient {
    elicitation: Option<ElicitationAction>,
    progress: Arc<Mutex<Vec<ProgressNotificationParam>>>,
    confirmations: Arc<Mutex<Vec<String>>>,
    list_changes: Arc<AtomicUsize>,
    list_changed: Arc<Notify>,
}

impl TestClient {
    fn new(elicitation: Option<ElicitationAction>) -> Self {
        Self {
            elicitation,
            progress: Arc::default(),
            confirmations: Arc::default(),
            list_changes: Arc::default(),
            list_changed: Arc::default(),
        }
    }
}

impl ClientHandler for TestClient {
    fn get_info(&self) -> ClientConfig {
        let capabilities = if self.elicitation.is_some() {
            ClientCapabilities::builder().enable_elicitation().build()
        } else {
            ClientCapabilities::default()
        };
        ClientConfig::new(capabilities, Implementation::new("test-client", "1.0.0"))
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        if let ElicitRequestParams::FormElicitationParams { message, .. } = request {
            self.confirmations.lock().unwrap().push(message);
        }
        Ok(ElicitResult::new(self.elicitation.clone().unwrap()))
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.progress.lock().unwrap().push(params);
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.list_changes.fetch_add(1, Ordering::SeqCst);
        self.list_changed.notify_one();
    }
}

struct Fixture {
    registry: Arc<ToolRegistry>,
    client: RunningService<RoleClient, TestClient>,
    handler: TestClient,
    wait_started: Arc<Notify>,
    wait_cancelled: Arc<AtomicBool>,
}

/// A server whose permission policy asks through the client (when it answers elicitation)
/// and otherwise lets `fallback` decide.
async fn connect(elicitation: Option<ElicitationAction>, fallback: Arc<dyn Approver>) -> Fixture {
    let prompts = ClientPrompts::new();
    let policy = PermissionPolicy::builder()
        .approver(Arc::new(McpApprover::new(prompts.clone(), fallback)))
        .build();
    let registry = Arc::new(ToolRegistry::builder().authorizer(Arc::new(policy)).build());
    let wait_started = Arc::new(Notify::new());
    let wait_cancelled = Arc::new(AtomicBool::new(false));
    registry.register(Echo).unwrap();
    registry.register(Steps).unwrap();
    registry
        .register(WaitForCancel {
            started: Arc::clone(&wait_started),
            cancelled: Arc::clone(&wait_cancelled),
        })
        .unwrap();
    registry.register(Delete).unwrap();
    let server = McpServer::new(Arc::clone(&registry)).with_prompts(prompts);
    let (server_side, client_side) = tokio::io::duplex(64 * 1024);
    let session = server.session();
    tokio::spawn(async move {
        let running = session.serve(server_side).await.unwrap();
        let _ = running.waiting().await;
    });
    let handler = TestClient::new(elicitation);
    let client = handler.clone().serve(client_side).await.unwrap();
    Fixture {
        registry,
        client,
        handler,
        wait_started,
        wait_cancelled,
    }
}

async fn call(fixture: &Fixture, name: &'static str, arguments: Value) -> CallToolResult {
    let Value::Object(arguments) = arguments else {
        panic!("arguments must be an object")
    };
    fixture
        .client
        .peer()
        .call_tool(CallToolRequestParams::new(name).with_arguments(arguments))
        .await
        .unwrap()
}

fn text(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|block| block.as_text().map(|text| text.text.clone()))
        .collect::<Vec<_>>()
        .join("\n")
}

#[tokio::test]
async fn every_tool_is_listed_with_title_schema_and_annotations() {
    let fixture = connect(None, Arc::new(NonInteractiveApprover::approving())).await;
    let tools = fixture.client.peer().list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|tool| tool.name.as_ref()).collect();
    assert_eq!(names, ["Echo", "Steps", "Wait", "Delete"]);
    let echo = serde_json::to_value(&tools[0]).unwrap();
    assert_eq!(echo["title"], "Echo text");
    assert_eq!(echo["inputSchema"]["required"], json!(["text"]));
    assert_eq!(
        echo["annotations"],
        json!({"title": "Echo text", "readOnlyHint": true, "destructiveHint": false,
               "idempotentHint": true, "openWorldHint": false})
    );
}

#[tokio::test]
async fn a_call_returns_content_and_details_as_structured_content() {
    let fixture = connect(None, Arc::new(NonInteractiveApprover::approving())).await;
    let result = call(&fixture, "Echo", json!({"text": "hi"})).await;
    assert_eq!(text(&result), "hi");
    assert_eq!(result.is_error, Some(false));
    assert_eq!(result.structured_content, Some(json!({"length": 2})));
}

#[tokio::test]
async fn bad_arguments_are_an_error_result_naming_the_parameter() {
    let fixture = connect(None, Arc::new(NonInteractiveApprover::approving())).await;
    let result = call(&fixture, "Echo", json!({"txt": "hi"})).await;
    assert_eq!(result.is_error, Some(true));
    assert!(text(&result).contains("text"), "{}", text(&result));
}

#[tokio::test]
async fn an_unknown_tool_is_the_json_rpc_error_invalid_params() {
    let fixture = connect(None, Arc::new(NonInteractiveApprover::approving())).await;
    let error = fixture
        .client
        .peer()
        .call_tool(CallToolRequestParams::new("Ech"))
        .await
        .unwrap_err();
    let rmcp::service::ServiceError::McpError(error) = error else {
        panic!("not a JSON-RPC error: {error}")
    };
    assert_eq!(error.code, rmcp::model::ErrorCode::INVALID_PARAMS);
    assert!(
        error
            .message
            .starts_with("Unknown tool 'Ech'. Did you mean 'Echo'?"),
        "{}",
        error.message
    );
}

#[tokio::test]
async fn updates_become_progress_notifications_before_the_result() {
    let fixture = connect(None, Arc::new(NonInteractiveApprover::approving())).await;
    let result = call(&fixture, "Steps", json!({"count": 3})).await;
    assert_eq!(text(&result), "done");
    let progress = fixture.handler.progress.lock().unwrap().clone();
    let seen: Vec<(f64, Option<f64>, Option<String>)> = progress
        .into_iter()
        .map(|p| (p.progress, p.total, p.message))
        .collect();
    assert_eq!(
        seen,
        [
            (1.0, Some(3.0), Some("step 1".to_owned())),
            (2.0, Some(3.0), Some("step 2".to_owned())),
            (3.0, Some(3.0), Some("step 3".to_owned())),
        ]
    );
}

#[tokio::test]
async fn a_cancelled_request_cancels_the_call() {
    let fixture = connect(None, Arc::new(NonInteractiveApprover::approving())).await;
    let request =
        ClientRequest::CallToolRequest(CallToolRequest::new(CallToolRequestParams::new("Wait")));
    let handle = fixture
        .client
        .peer()
        .send_request_with_option(request, PeerRequestOptions::no_options())
        .await
        .unwrap();
    tokio::time::timeout(Duration::from_secs(5), fixture.wait_started.notified())
        .await
        .unwrap();
    handle.cancel(Some("test".to_owned())).await.unwrap();
    tokio::time::timeout(Duration::from_secs(5), async {
        while !fixture.wait_cancelled.load(Ordering::SeqCst) {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
    .expect("the tool never saw the cancellation");
}

#[tokio::test]
async fn a_call_that_needs_confirmation_asks_through_elicitation() {
    let fixture = connect(
        Some(ElicitationAction::Accept),
        Arc::new(NonInteractiveApprover::refusing()),
    )
    .await;
    let result = call(&fixture, "Delete", json!({})).await;
    assert_eq!(text(&result), "deleted");
    let confirmations = fixture.handler.confirmations.lock().unwrap().clone();
    assert_eq!(confirmations.len(), 1);
    assert!(
        confirmations[0].starts_with("Allow toolhost to run Delete?"),
        "{}",
        confirmations[0]
    );
    // Safe tools never ask.
    call(&fixture, "Echo", json!({"text": "x"})).await;
    assert_eq!(fixture.handler.confirmations.lock().unwrap().len(), 1);
}

#[tokio::test]
async fn a_declined_confirmation_refuses_the_call() {
    let fixture = connect(
        Some(ElicitationAction::Decline),
        Arc::new(NonInteractiveApprover::approving()),
    )
    .await;
    let result = call(&fixture, "Delete", json!({})).await;
    assert_eq!(result.is_error, Some(true));
    assert!(text(&result).contains("The user declined to run 'Delete'"));
}

#[tokio::test]
async fn without_elicitation_the_unattended_policy_refuses_and_says_how_to_allow() {
    let fixture = connect(None, Arc::new(NonInteractiveApprover::refusing())).await;
    let result = call(&fixture, "Delete", json!({})).await;
    assert_eq!(result.is_error, Some(true));
    assert!(
        text(&result).contains("--yes") && text(&result).contains("--allow 'Delete'"),
        "{}",
        text(&result)
    );
    let result = call(&fixture, "Echo", json!({"text": "x"})).await;
    assert_eq!(result.is_error, Some(false));
}

#[tokio::test]
async fn registry_changes_notify_the_client() {
    let fixture = connect(None, Arc::new(NonInteractiveApprover::approving())).await;
    // The watcher starts on `notifications/initialized`; a request round trip orders it.
    fixture.client.peer().list_all_tools().await.unwrap();
    assert!(fixture.registry.unregister("Delete"));
    tokio::time::timeout(
        Duration::from_secs(5),
        fixture.handler.list_changed.notified(),
    )
    .await
    .unwrap();
    let tools = fixture.client.peer().list_all_tools().await.unwrap();
    assert_eq!(tools.len(), 3);
    assert_eq!(fixture.handler.list_changes.load(Ordering::SeqCst), 1);
}
