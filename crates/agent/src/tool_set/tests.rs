//! The tool set's own tests: which built-in MCP providers each agent sees.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::Value;
use toolhost_config::ConfigSources;
use toolhost_core::permission::NonInteractiveApprover;
use toolhost_core::{Tool, ToolContext, ToolError, ToolOutput, ToolSpec};

use super::*;

/// A provider only the agent `main` sees.
struct MainOnly;

impl McpProvider for MainOnly {
    fn name(&self) -> &str {
        "mainonly"
    }

    fn is_eligible(&self, ctx: &ProviderContext) -> bool {
        ctx.agent == toolhost_config::MAIN_AGENT
    }

    fn tools(&self) -> Vec<Arc<dyn Tool>> {
        vec![Arc::new(Ping)]
    }
}

struct Ping;

#[async_trait::async_trait]
impl Tool for Ping {
    fn spec(&self) -> ToolSpec {
        ToolSpec::new("ping", "Answers pong.")
    }

    async fn execute(&self, _args: Value, _ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput::text("pong"))
    }
}

async fn mcp_tools_of(agent: &str) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join(".toolhost")).unwrap();
    std::fs::write(
        dir.path().join(".toolhost/config.toml"),
        "[agents.reviewer]\n",
    )
    .unwrap();
    let config = toolhost_catalog::load_config(&ConfigSources {
        workspace: dir.path().to_path_buf(),
        ..ConfigSources::default()
    })
    .unwrap();
    let permissions = Permissions::from_config(
        &config,
        dir.path(),
        Arc::new(NonInteractiveApprover::refusing()),
    )
    .unwrap();
    let offered = OfferedRegistry::default();
    let mut providers = built_in_providers(dir.path(), &offered);
    providers.register(Arc::new(MainOnly)).unwrap();
    let (registry, _custom, mcp) = build_registry_with(
        dir.path(),
        &config,
        &config.agent(agent).unwrap(),
        &providers,
        &permissions,
        &offered,
        BuiltinInputs {
            found: &Found::nothing(),
            model: None,
            subagents: &SubAgents::root(
                ParentContext {
                    workspace: dir.path().to_path_buf(),
                    home: None,
                    config: Arc::new(config.clone()),
                    skills: Arc::default(),
                    commands: Arc::default(),
                },
                permissions.clone(),
                OfferedRegistry::default(),
            ),
            mcp_startup: McpStartup::WaitForAll,
            extensions: &Arc::default(),
        },
    )
    .await
    .unwrap();
    mcp.shutdown().await;
    registry
        .names()
        .into_iter()
        .filter(|name| name.starts_with("mcp__"))
        .collect()
}

#[tokio::test]
async fn each_agent_sees_the_built_in_providers_eligible_for_it() {
    assert_eq!(
        mcp_tools_of("main").await,
        ["mcp__mainonly__ping", "mcp__toolhost__status"]
    );
    assert_eq!(mcp_tools_of("reviewer").await, ["mcp__toolhost__status"]);
}
