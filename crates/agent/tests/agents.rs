//! `[agents.NAME]`: the tools an agent is offered, the user servers it selects, its direct
//! stdio servers, and the errors that name the file and line of a bad entry.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::time::Duration;

use pretty_assertions::assert_eq;
use toolhost_config::{AgentConfig, Config, ConfigError, ConfigSources, MAIN_AGENT};
use toolhost_mcp::McpTransport;
use toolhost_test_support::write_project_config;

/// A tool's spec as the crate defining it declares it: the built-ins from `toolhost-tools`
/// (Grep in the Read family, …), MCP tools as the MCP client builds them (origin: the server).
fn spec(name: &str) -> toolhost_core::ToolSpec {
    if let Some((server, tool)) = name
        .strip_prefix("mcp__")
        .and_then(|rest| rest.split_once("__"))
    {
        return toolhost_mcp::client::convert::tool_spec(
            name,
            server,
            &serde_json::json!({"name": tool}),
        );
    }
    let workspace = std::sync::Arc::new(toolhost_tools::Workspace::new("/").unwrap());
    toolhost_tools::builtin_tools(
        workspace,
        toolhost_tools::BashSettings::default(),
        toolhost_tools::WebSearchSettings::default(),
        toolhost_tools::WebFetchSettings::default(),
    )
    .into_iter()
    .map(|tool| tool.spec())
    .find(|spec| spec.name == name)
    .unwrap_or_else(|| toolhost_core::ToolSpec::new(name, "a tool"))
}

struct Workspace {
    _root: tempfile::TempDir,
    path: PathBuf,
}

fn workspace(config: &str) -> Workspace {
    let root = tempfile::tempdir().unwrap();
    let path = root.path().join("project");
    write_project_config(&path, config);
    Workspace { _root: root, path }
}

fn load(workspace: &Path) -> Result<Config, ConfigError> {
    toolhost_catalog::load_config(&ConfigSources {
        home: None,
        workspace: workspace.to_path_buf(),
        ..ConfigSources::default()
    })
}

const SERVERS: &str = "\
[mcp_servers.git]
command = \"git-server\"

[mcp_servers.files]
command = \"files-server\"
";

#[test]
fn main_exists_without_configuration_and_sees_everything() {
    let dir = workspace(SERVERS);
    let config = load(&dir.path).unwrap();
    assert_eq!(config.agent_names(), [MAIN_AGENT]);
    let main = config.agent(MAIN_AGENT).unwrap();
    assert!(main.offers(&spec("Bash")) && main.offers(&spec("mcp__git__log")));
    assert_eq!(main.origin, None);
    let started: Vec<String> = config
        .mcp_servers_for(&main)
        .into_iter()
        .map(|server| server.name)
        .collect();
    assert_eq!(started, ["files", "git"]);
}

#[test]
fn an_agent_selects_user_servers_declares_direct_ones_and_narrows_its_tools() {
    let dir = workspace(&format!(
        "{SERVERS}
[agents.reviewer]
description = \"Reads and reviews\"
allowed_tools = [\"Read\", \"Grep\", \"mcp__git\", \"mcp__local__*\"]
mcp_servers = [\"git\"]

[agents.reviewer.direct_mcp_servers.local]
command = \"python3\"
args = [\"tools.py\", \"${{TOOLHOST_TEST_SURELY_UNSET:-fallback}}\"]
env = {{ MODE = \"review\" }}
cwd = \"scripts\"
startup_timeout = 5
tool_timeout = 7
disabled_tools = [\"dangerous\"]
required = true
"
    ));
    let config = load(&dir.path).unwrap();
    assert_eq!(config.agent_names(), ["main", "reviewer"]);
    let reviewer = config.agent("reviewer").unwrap();
    assert_eq!(reviewer.description.as_deref(), Some("Reads and reviews"));
    assert!(
        reviewer
            .origin
            .as_deref()
            .unwrap()
            .ends_with("config.toml:7")
    );
    for (tool, offered) in [
        ("Read", true),
        ("Grep", true),
        ("Bash", false),
        ("Write", false),
        ("mcp__git__log", true),
        ("mcp__files__read", false),
        ("mcp__local__run", true),
    ] {
        assert_eq!(reviewer.offers(&spec(tool)), offered, "{tool}");
    }

    let started = config.mcp_servers_for(&reviewer);
    let names: Vec<&str> = started.iter().map(|server| server.name.as_str()).collect();
    assert_eq!(names, ["git", "local"]);
    let local = &started[1];
    assert_eq!(
        local.transport,
        McpTransport::Stdio {
            command: "python3".into(),
            args: vec!["tools.py".into(), "fallback".into()],
            env: [("MODE".to_owned(), "review".to_owned())].into(),
            cwd: Some(dir.path.join("scripts")),
        }
    );
    assert_eq!(local.startup_timeout, Duration::from_secs(5));
    assert_eq!(local.tool_timeout, Duration::from_secs(7));
    assert!(local.required && !local.allows_tool("dangerous") && local.allows_tool("run"));
    assert!(local.origin.ends_with("config.toml:12"), "{}", local.origin);

    let shown = config.show();
    for expected in [
        "[agents.\"reviewer\"]  # ",
        "allowed_tools = [\"Read\", \"Grep\", \"mcp__git\", \"mcp__local__*\"]",
        "mcp_servers = [\"git\"]",
        "[agents.\"reviewer\".direct_mcp_servers.\"local\"]  # ",
        "env = { \"MODE\" = \"…\" }",
    ] {
        assert!(shown.contains(expected), "{expected} not in\n{shown}");
    }
}

#[test]
fn a_configured_main_is_narrowed_like_any_agent() {
    let dir = workspace(&format!("{SERVERS}\n[agents.main]\nmcp_servers = []\n"));
    let config = load(&dir.path).unwrap();
    let main = config.agent(MAIN_AGENT).unwrap();
    assert!(config.mcp_servers_for(&main).is_empty());
    assert!(main.offers(&spec("Bash")));
}

#[test]
fn a_later_layer_replaces_an_agent_of_the_same_name() {
    let dir = workspace("[agents.a]\nallowed_tools = [\"Read\"]\n");
    std::fs::write(
        dir.path.join(".toolhost/config.local.toml"),
        "[agents.a]\nallowed_tools = [\"Bash\"]\n",
    )
    .unwrap();
    let agent = load(&dir.path).unwrap().agent("a").unwrap();
    assert!(agent.offers(&spec("Bash")) && !agent.offers(&spec("Read")));
    assert!(agent.origin.unwrap().contains("config.local.toml:1"));
}

#[test]
fn allowed_tools_entries_that_name_no_tool_are_reported() {
    let dir =
        workspace("[agents.a]\nallowed_tools = [\"Read\", \"Raed\", \"mcp__git\", \"mcp__*\"]\n");
    let agent = load(&dir.path).unwrap().agent("a").unwrap();
    let tools = [spec("Grep"), spec("Bash"), spec("mcp__toolhost__status")];
    assert_eq!(
        agent.unmatched_allowed_tools(|named| tools.iter().any(named)),
        ["Raed", "mcp__git"]
    );
    assert!(
        AgentConfig::main()
            .unmatched_allowed_tools(|named| tools.iter().any(named))
            .is_empty()
    );
}

#[test]
fn an_unknown_agent_lists_the_configured_ones() {
    let dir = workspace("[agents.reviewer]\n");
    let error = load(&dir.path).unwrap().agent("writer").unwrap_err();
    assert_eq!(
        error.to_string(),
        "unknown agent 'writer': the agents are main, reviewer (define it as [agents.writer] \
         in .toolhost/config.toml)"
    );
}

fn load_error(config: &str) -> String {
    let dir = workspace(config);
    load(&dir.path).unwrap_err().to_string()
}

#[test]
fn bad_agent_entries_name_the_file_the_line_and_the_problem() {
    let message = load_error(&format!(
        "{SERVERS}\n[agents.a]\nmcp_servers = [\n  \"git\",\n  \"gti\",\n]\n"
    ));
    assert!(message.contains("config.toml:10"), "{message}");
    assert!(
        message.contains("agents.a.mcp_servers names 'gti', which is not a configured MCP server; the servers are: files, git"),
        "{message}"
    );

    let message = load_error("[agents.a]\nallowed_tools = [\"Read\",\n \"Bash(git\"]\n");
    assert!(
        message.contains("line 3: agents.a.allowed_tools: invalid permission rule 'Bash(git'"),
        "{message}"
    );

    // allowed_tools selects whole tools; a specifier would look narrower than it is.
    let message =
        load_error("[agents.a]\nallowed_tools = [\n  \"Read\",\n  \"Bash(git status)\",\n]\n");
    assert!(
        message.contains(
            "config.toml: line 4: agents.a.allowed_tools: 'Bash(git status)' has a specifier, but a tool list \
             selects whole tools ('Bash' would offer every call of it). List 'Bash', and narrow \
             its calls with rules under [permissions]"
        ),
        "{message}"
    );

    let message = load_error("[agents.a]\nallowed_tool = [\"Read\"]\n");
    assert!(
        message.contains("line 2: unknown field `allowed_tool`"),
        "{message}"
    );

    let message = load_error("[agents.a.direct_mcp_servers.web]\nurl = \"http://x/mcp\"\n");
    assert!(
        message.contains(
            "line 1: agents.a.direct_mcp_servers.web: direct MCP servers are stdio servers"
        ),
        "{message}"
    );
    assert!(message.contains("url is not allowed here"), "{message}");

    let message = load_error("\n[agents.a.direct_mcp_servers.s]\nargs = [\"x\"]\n");
    assert!(
        message.contains("line 2: agents.a.direct_mcp_servers.s has neither command nor url"),
        "{message}"
    );

    let message =
        load_error("[agents.a.direct_mcp_servers.s]\ncommand = \"x\"\ntool_timeout = 0\n");
    assert!(
        message.contains("agents.a.direct_mcp_servers.s.tool_timeout of 0 seconds"),
        "{message}"
    );

    let message = load_error(&format!(
        "{SERVERS}\n[agents.a.direct_mcp_servers.git]\ncommand = \"my-git\"\n"
    ));
    assert!(
        message.contains(
            "config.toml:7: agents.a.direct_mcp_servers.git has the id of the MCP server 'git'"
        ),
        "{message}"
    );
    // Not a clash when the agent does not see the user server of that id.
    let dir = workspace(&format!(
        "{SERVERS}\n[agents.a]\nmcp_servers = [\"files\"]\n[agents.a.direct_mcp_servers.git]\ncommand = \"my-git\"\n"
    ));
    assert!(load(&dir.path).is_ok());
}
