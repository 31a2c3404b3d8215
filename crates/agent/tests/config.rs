//! Configuration layering: the user's file, the project's, the local one, `--config`, flags.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;

use pretty_assertions::assert_eq;
use toolhost_config::{Config, ConfigError, ConfigSources, McpOAuthStore, Overrides};
use toolhost_core::permission::{PermissionMode, RuleList};
use toolhost_test_support::{HomeAndWorkspace, write_file};

fn sources(dirs: &HomeAndWorkspace) -> ConfigSources {
    ConfigSources {
        home: Some(dirs.home.clone()),
        workspace: dirs.workspace.clone(),
        ..ConfigSources::default()
    }
}

fn rules(config: &Config, list: RuleList) -> Vec<(String, String)> {
    config
        .permissions
        .rules
        .list(list)
        .iter()
        .map(|rule| (rule.to_string(), rule.origin().unwrap().to_owned()))
        .collect()
}

#[test]
fn layers_merge_later_scalars_win_and_rule_lists_concatenate() {
    let dirs = HomeAndWorkspace::new();
    let user = dirs.user_config();
    let project = dirs.project_config();
    let local = dirs.workspace.join(".toolhost/config.local.toml");
    let extra = dirs.workspace.join("extra.toml");
    write_file(
        &user,
        "[permissions]\nmode = \"plan\"\nallow = [\"Read\"]\n\n[limits]\nmax_result_chars = 100\n",
    );
    write_file(
        &project,
        "[permissions]\nmode = \"acceptEdits\"\nallow = [\n  \"Bash(git status)\",\n]\ndeny = [\"Bash(rm:*)\"]\n",
    );
    write_file(
        &local,
        "[permissions]\nallow = [\"Bash(cargo test:*)\"]\naudit_log = \"logs/audit.jsonl\"\n",
    );
    write_file(&extra, "[limits]\nmax_result_chars = 300\n");
    let config = toolhost_catalog::load_config(&ConfigSources {
        extra_file: Some(extra.clone()),
        overrides: Overrides {
            mode: None,
            allow: vec!["WebFetch(domain:docs.rs)".into()],
            deny: vec!["Write(/Cargo.lock)".into()],
        },
        ..sources(&dirs)
    })
    .unwrap();

    assert_eq!(config.permissions.mode, PermissionMode::AcceptEdits);
    assert_eq!(
        config.source_of("permissions.mode"),
        Some(format!("{}:2", project.display()).as_str())
    );
    assert_eq!(config.limits.max_result_chars, Some(300));
    assert_eq!(
        config.source_of("limits.max_result_chars"),
        Some(format!("{}:2", extra.display()).as_str())
    );
    assert_eq!(
        rules(&config, RuleList::Allow),
        [
            ("Read".to_owned(), format!("{}:3", user.display())),
            (
                "Bash(git status)".to_owned(),
                format!("{}:4", project.display())
            ),
            (
                "Bash(cargo test:*)".to_owned(),
                format!("{}:2", local.display())
            ),
            ("WebFetch(domain:docs.rs)".to_owned(), "--allow".to_owned()),
        ]
    );
    assert_eq!(
        rules(&config, RuleList::Deny),
        [
            ("Bash(rm:*)".to_owned(), format!("{}:6", project.display())),
            ("Write(/Cargo.lock)".to_owned(), "--deny".to_owned()),
        ]
    );
    assert_eq!(
        config.permissions.audit_log,
        Some(dirs.workspace.join("logs/audit.jsonl"))
    );
    assert_eq!(config.files(), [user, project, local, extra]);
}

#[test]
fn the_mode_flag_wins_over_every_file() {
    let dirs = HomeAndWorkspace::new();
    write_file(
        dirs.workspace.join(".toolhost/config.local.toml"),
        "[permissions]\nmode = \"plan\"\n",
    );
    let config = toolhost_catalog::load_config(&ConfigSources {
        overrides: Overrides {
            mode: Some(PermissionMode::BypassPermissions),
            ..Overrides::default()
        },
        ..sources(&dirs)
    })
    .unwrap();
    assert_eq!(config.permissions.mode, PermissionMode::BypassPermissions);
    assert_eq!(config.source_of("permissions.mode"), Some("--mode"));
}

#[test]
fn no_files_give_the_defaults() {
    let dirs = HomeAndWorkspace::new();
    let config = toolhost_catalog::load_config(&sources(&dirs)).unwrap();
    assert_eq!(config.permissions.mode, PermissionMode::Default);
    assert!(config.files().is_empty());
    assert_eq!(config.limits.max_result_chars, None);
}

fn load_error(file: &str, text: &str) -> (PathBuf, String) {
    let dirs = HomeAndWorkspace::new();
    let path = dirs.workspace.join(".toolhost").join(file);
    write_file(&path, text);
    let error = toolhost_catalog::load_config(&sources(&dirs)).unwrap_err();
    assert!(matches!(error, ConfigError::Invalid { .. }), "{error:?}");
    (path, error.to_string())
}

#[test]
fn a_bad_file_names_the_file_the_line_and_the_problem() {
    let (path, message) = load_error(
        "config.toml",
        "[permissions]\nmode = \"plan\"\nallow = [\"Read\",\n",
    );
    assert!(
        message.starts_with(&format!("invalid config file {}: line ", path.display())),
        "{message}"
    );

    let (path, message) = load_error(
        "config.local.toml",
        "[permissions]\nallow = [\n  \"Read\",\n  \"Bash(git status\",\n]\n",
    );
    assert_eq!(
        message,
        format!(
            "invalid config file {}: line 4: invalid permission rule 'Bash(git status': a \
             specifier must be closed by ')' at the end, as in 'Bash(git status)'",
            path.display()
        )
    );

    let (path, message) = load_error("config.toml", "\n[permissions]\nmode = \"yolo\"\n");
    assert_eq!(
        message,
        format!(
            "invalid config file {}: line 3: unknown permission mode 'yolo': use one of default, \
             acceptEdits, plan, bypassPermissions",
            path.display()
        )
    );

    let (_, message) = load_error("config.toml", "[permissions]\nalow = []\n");
    assert!(
        message.contains("line 2: unknown field `alow`"),
        "{message}"
    );

    // A hook that cannot run is left out with a warning naming its line; the others load.
    let dirs = HomeAndWorkspace::new();
    write_file(
        dirs.workspace.join(".toolhost/config.toml"),
        "[[hooks.PreToolUse]]\nmatcher = \"Bash(\"\ncommand = \"true\"\n\n\
         [[hooks.PreCompact]]\nmatcher = \"manaul\"\ncommand = \"true\"\n\n\
         [[hooks.PostToolUse]]\ncommand = \"true\"\n",
    );
    let config = toolhost_catalog::load_config(&sources(&dirs)).unwrap();
    let warnings = config.warnings().join("\n");
    assert!(
        warnings
            .contains("config.toml:1: the hook matcher 'Bash(' is not a valid regular expression"),
        "{warnings}"
    );
    // A PreCompact matcher is matched against the trigger: a misspelt one would never run.
    assert!(
        warnings.contains("config.toml:5: the PreCompact matcher 'manaul' matches neither trigger"),
        "{warnings}"
    );
    assert!(config.hooks.pre_tool_use.is_empty() && config.hooks.pre_compact.is_empty());
    assert_eq!(config.hooks.post_tool_use.len(), 1);
}

#[test]
fn a_bad_flag_names_the_flag() {
    let dirs = HomeAndWorkspace::new();
    let error = toolhost_catalog::load_config(&ConfigSources {
        overrides: Overrides {
            allow: vec!["Bash(".into()],
            ..Overrides::default()
        },
        ..sources(&dirs)
    })
    .unwrap_err();
    assert_eq!(
        error.to_string(),
        "invalid --allow 'Bash(': a specifier must be closed by ')' at the end, as in 'Bash(git status)'"
    );
}

#[test]
fn a_missing_config_flag_file_is_an_error_but_missing_layers_are_not() {
    let dirs = HomeAndWorkspace::new();
    let error = toolhost_catalog::load_config(&ConfigSources {
        extra_file: Some(dirs.workspace.join("nope.toml")),
        ..sources(&dirs)
    })
    .unwrap_err();
    assert!(
        error.to_string().starts_with("cannot read config file"),
        "{error}"
    );
}

#[test]
fn show_prints_the_merged_values_and_where_they_came_from() {
    let dirs = HomeAndWorkspace::new();
    let project = dirs.project_config();
    write_file(
        &project,
        "[permissions]\nallow = [\"Bash(git status)\"]\n\n[[hooks.PreToolUse]]\nmatcher = \"Bash\"\ncommand = \"./guard.sh\"\ntimeout = 5\n",
    );
    let config = toolhost_catalog::load_config(&ConfigSources {
        overrides: Overrides {
            mode: Some(PermissionMode::AcceptEdits),
            ..Overrides::default()
        },
        ..sources(&dirs)
    })
    .unwrap();
    let p = project.display();
    assert_eq!(
        config.show(),
        format!(
            "# files read, in order: {p}\n\
             mcp_oauth_store = \"auto\"                 # built-in default\n\
             \n[limits]\n\
             max_result_chars = 50000                 # built-in default\n\
             \n[shell]\n\
             exec_timeout = 120                       # built-in default\n\
             max_timeout = 600                        # built-in default\n\
             max_output_bytes = 102400                # built-in default\n\
             sandbox = \"workspace-write\"              # built-in default\n\
             network = true                           # built-in default\n\
             editor_terminal = false                  # built-in default\n\
             writable_roots = []\n\
             \n[custom_tools]\n\
             paths = []\n\
             \n[plugins]\n\
             paths = []\n\
             \n[todo]\n\
             reminder_turns = 10                      # built-in default\n\
             \n[web]\n\
             timeout = 30                             # built-in default\n\
             max_response_bytes = 5242880             # built-in default\n\
             max_content_chars = 40000                # built-in default\n\
             cache = true                             # built-in default\n\
             cache_ttl = 900                          # built-in default\n\
             \n[agent]\n\
             max_iterations = 50                      # built-in default\n\
             compact_at = 0.8                         # built-in default\n\
             \n[sessions]\n\
             # path = \"~/.toolhost/sessions.db\"       # built-in default (TOOLHOST_SESSIONS_DB overrides it)\n\
             \n[subagents]\n\
             max_depth = 2                            # built-in default\n\
             max_concurrent = 4                       # built-in default\n\
             \n[permissions]\n\
             mode = \"acceptEdits\"                     # --mode\n\
             allow = [\n  \"Bash(git status)\",                    # {p}:2\n]\n\
             ask = []\n\
             deny = []\n\
             \n[[hooks.PreToolUse]]  # {p}:4\n\
             matcher = \"Bash\"\n\
             command = \"./guard.sh\"\n\
             timeout = 5\n"
        )
    );
}

#[test]
fn the_oauth_token_store_is_a_top_level_key_and_a_bad_one_names_its_line() {
    let dirs = HomeAndWorkspace::new();
    assert_eq!(
        toolhost_catalog::load_config(&sources(&dirs))
            .unwrap()
            .mcp_oauth_store,
        McpOAuthStore::Auto
    );
    write_file(dirs.user_config(), "mcp_oauth_store = \"keyring\"\n");
    write_file(
        dirs.project_config(),
        "\nmcp_oauth_store = \"file\"\n\n[limits]\nmax_result_chars = 10\n",
    );
    let config = toolhost_catalog::load_config(&sources(&dirs)).unwrap();
    assert_eq!(config.mcp_oauth_store, McpOAuthStore::File);
    assert_eq!(
        config.source_of("mcp_oauth_store"),
        Some(format!("{}:2", dirs.project_config().display()).as_str())
    );

    let (path, message) = load_error("config.toml", "mcp_oauth_store = \"vault\"\n");
    assert_eq!(
        message,
        format!(
            "invalid config file {}: line 1: mcp_oauth_store = \"vault\" is not a token store: \
             give \"auto\" (the OS keyring when one answers, else the file), \"keyring\" or \
             \"file\"",
            path.display()
        )
    );
}

#[test]
fn shell_settings_layer_like_the_rest_and_reach_the_bash_tool() {
    let dirs = HomeAndWorkspace::new();
    write_file(
        dirs.user_config(),
        "[shell]\nexec_timeout = 30\nwritable_roots = [\"~/cache\"]\nnetwork = false\n",
    );
    write_file(
        dirs.project_config(),
        "[shell]\nexec_timeout = 5\nsandbox = \"read-only\"\nwritable_roots = [\"build\"]\n",
    );
    let config = toolhost_catalog::load_config(&sources(&dirs)).unwrap();
    let settings = toolhost_tools::BashSettings::configured(&config.shell);
    assert_eq!(settings.default_timeout, std::time::Duration::from_secs(5));
    assert_eq!(
        settings.max_timeout,
        toolhost_tools::shell::MAX_BASH_TIMEOUT
    );
    assert_eq!(settings.sandbox, toolhost_tools::ShellSandbox::ReadOnly);
    assert_eq!(settings.network, toolhost_tools::NetworkAccess::Denied);
    assert_eq!(
        settings.writable_roots,
        vec![dirs.home.join("cache"), dirs.workspace.join("build")]
    );
    assert_eq!(
        config.source_of("shell.exec_timeout"),
        Some(format!("{}:2", dirs.project_config().display()).as_str())
    );
    let shown = config.show();
    assert!(shown.contains("[shell]\nexec_timeout = 5"), "{shown}");
    assert!(shown.contains("sandbox = \"read-only\""), "{shown}");
}

#[test]
fn a_bad_shell_value_names_the_file_line_and_the_choices() {
    let dirs = HomeAndWorkspace::new();
    let project = dirs.project_config();
    write_file(&project, "[shell]\n\nsandbox = \"strict\"\n");
    let error = toolhost_catalog::load_config(&sources(&dirs))
        .unwrap_err()
        .to_string();
    assert_eq!(
        error,
        format!(
            "invalid config file {}: line 3: unknown sandbox mode 'strict': use \"workspace-write\", \"read-only\" or \"off\"",
            project.display()
        )
    );
    write_file(&project, "[shell]\nexec_timeout = 0\n");
    let error = toolhost_catalog::load_config(&sources(&dirs))
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("line 2: shell.exec_timeout of 0 seconds"),
        "{error}"
    );
}

#[test]
fn custom_tool_paths_concatenate_and_limits_override() {
    let dirs = HomeAndWorkspace::new();
    write_file(
        dirs.user_config(),
        "[custom_tools]\npaths = [\"~/my-tools\"]\nmemory_limit_mb = 32\n",
    );
    write_file(
        dirs.project_config(),
        "[custom_tools]\npaths = [\"vendor/tools\"]\ncall_timeout = 30\n",
    );
    let config = toolhost_catalog::load_config(&sources(&dirs)).unwrap();
    let custom = &config.custom_tools;
    assert_eq!(custom.paths, vec!["~/my-tools", "vendor/tools"]);
    assert_eq!(
        custom.call_timeout,
        Some(std::time::Duration::from_secs(30))
    );
    assert_eq!(custom.memory_limit_mb, Some(32));
    assert_eq!(custom.load_timeout, None);
    let shown = config.show();
    assert!(
        shown.contains(
            "[custom_tools]\npaths = [\"~/my-tools\", \"vendor/tools\"]\ncall_timeout = 30"
        ),
        "{shown}"
    );

    write_file(dirs.project_config(), "[custom_tools]\ncall_timeout = 0\n");
    let error = toolhost_catalog::load_config(&sources(&dirs))
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("line 2: custom_tools.call_timeout of 0 seconds"),
        "{error}"
    );
}

#[test]
fn mcp_servers_come_from_toml_and_mcp_json_with_defaults_and_origins() {
    use std::time::Duration;
    use toolhost_mcp::McpTransport;

    let dirs = HomeAndWorkspace::new();
    write_file(
        dirs.workspace.join(".mcp.json"),
        r#"{"mcpServers": {"files": {"command": "npx", "args": ["a"]}, "web": {"type": "http", "url": "http://x/mcp"}}}"#,
    );
    write_file(
        dirs.project_config(),
        "[mcp_servers.files]\ncommand = \"node\"\nargs = [\"server.js\"]\ncwd = \"sub\"\n\
         tool_timeout = 5\nrequired = true\ndisabled_tools = [\"write\"]\n\n\
         [mcp_servers.off]\nurl = \"http://y/mcp\"\nenabled = false\n",
    );
    let config = toolhost_catalog::load_config(&sources(&dirs)).unwrap();
    let names: Vec<_> = config.mcp_servers.keys().cloned().collect();
    assert_eq!(names, ["files", "off", "web"]);
    let files = &config.mcp_servers["files"];
    assert_eq!(
        files.transport,
        McpTransport::Stdio {
            command: "node".into(),
            args: vec!["server.js".into()],
            env: Default::default(),
            cwd: Some(dirs.workspace.join("sub")),
        }
    );
    assert_eq!(files.tool_timeout, Duration::from_secs(5));
    assert_eq!(files.startup_timeout, Duration::from_secs(30));
    assert!(files.required && !files.allows_tool("write"));
    assert!(
        files.origin.ends_with(".toolhost/config.toml:1"),
        "{}",
        files.origin
    );
    assert!(!config.mcp_servers["off"].enabled);
    assert_eq!(
        config.mcp_servers["web"].tool_timeout,
        Duration::from_secs(300)
    );
    let shown = config.show();
    assert!(shown.contains("[mcp_servers.\"files\"]"), "{shown}");
}

#[test]
fn a_bad_mcp_server_entry_names_file_and_line() {
    let dirs = HomeAndWorkspace::new();
    let project = dirs.project_config();
    write_file(&project, "[limits]\n\n[mcp_servers.s]\nargs = [\"x\"]\n");
    // An entry that cannot be a server is left out with a warning; the command goes on.
    let config = toolhost_catalog::load_config(&sources(&dirs)).unwrap();
    let warnings = config.warnings().join("\n");
    assert!(warnings.contains("config.toml:3:"), "{warnings}");
    assert!(warnings.contains("neither command nor url"), "{warnings}");
    assert!(config.mcp_servers.is_empty());
    write_file(
        &project,
        "[mcp_servers.s]\ncommand = \"x\"\ntool_timout = 5\n",
    );
    let error = toolhost_catalog::load_config(&sources(&dirs))
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("line 3") && error.contains("tool_timout"),
        "{error}"
    );
    write_file(
        &project,
        "[mcp_servers.s]\ncommand = \"x\"\ntool_timeout = 0\n",
    );
    let config = toolhost_catalog::load_config(&sources(&dirs)).unwrap();
    let warnings = config.warnings().join("\n");
    assert!(warnings.contains("at least 1"), "{warnings}");
}

#[test]
fn providers_and_agent_settings_layer_and_show_without_keys() {
    let dirs = HomeAndWorkspace::new();
    write_file(
        dirs.user_config(),
        "[providers.local]\napi = \"openai-chat\"\nbase_url = \"http://127.0.0.1:8091/v1\"\n\
         model = \"qwen\"\nfirst_byte_timeout = 300\n\n[agent]\nmax_iterations = 12\n",
    );
    write_file(
        dirs.project_config(),
        "[agent]\nprovider = \"local\"\n\n[providers.claude]\napi = \"anthropic\"\n\
         api_key_env = \"MY_ANTHROPIC_KEY\"\n",
    );
    let config = toolhost_catalog::load_config(&sources(&dirs)).unwrap();
    assert_eq!(config.agent_settings.provider.as_deref(), Some("local"));
    assert_eq!(config.agent_settings.max_iterations, Some(12));
    let local = &config.providers["local"];
    assert_eq!(local.model.as_deref(), Some("qwen"));
    assert_eq!(
        local.timeouts.first_byte,
        Some(std::time::Duration::from_secs(300))
    );
    let shown = config.show();
    assert!(shown.contains("[providers.\"local\"]"), "{shown}");
    assert!(
        shown.contains("api_key_env = \"MY_ANTHROPIC_KEY\""),
        "{shown}"
    );
    let origin = format!("# {}:2", dirs.project_config().display());
    assert!(
        shown
            .lines()
            .any(|line| line.starts_with("provider = \"local\"") && line.ends_with(&origin)),
        "{shown}"
    );
}

#[test]
fn a_bad_provider_entry_names_file_line_and_the_choices() {
    let (path, message) = load_error("config.toml", "[providers.x]\napi = \"openai\"\n");
    assert_eq!(
        message,
        format!(
            "invalid config file {}: line 2: providers.x.api: unknown api `openai`: use openai-chat, \
             openai-responses or anthropic",
            path.display()
        )
    );
    let (_, message) = load_error(
        "config.toml",
        "[providers.x]\napi = \"anthropic\"\nbase_url = \"api.anthropic.com\"\n",
    );
    assert!(
        message.contains("line 3: providers.x.base_url 'api.anthropic.com' is not a URL"),
        "{message}"
    );
    let (_, message) = load_error(
        "config.toml",
        "[providers.x]\napi = \"anthropic\"\napi_key = \"sk-secret\"\n",
    );
    assert!(
        message.contains("line 3: unknown field `api_key`"),
        "{message}"
    );
    let (_, message) = load_error("config.toml", "[agent]\nmax_iterations = 0\n");
    assert!(
        message.contains("line 2: agent.max_iterations of 0"),
        "{message}"
    );
}

#[test]
fn web_settings_are_read_and_a_bad_one_names_its_line() {
    let dirs = HomeAndWorkspace::new();
    write_file(
        dirs.project_config(),
        "[web]\ntimeout = 7\ncache = false\ncache_ttl = 60\nsummary_model = \"small\"\n\
         resolve = { \"Intranet.Test.\" = \"10.0.0.7\", \"dual.test\" = [\"10.0.0.8\", \"fd00::8\"] }\n\
         \n[web.search]\nprovider = \"searxng\"\nurl = \"http://localhost:8888\"\n",
    );
    let config = toolhost_catalog::load_config(&sources(&dirs)).unwrap();
    let web = &config.web;
    assert_eq!(web.timeout, Some(std::time::Duration::from_secs(7)));
    assert_eq!(web.cache, Some(false));
    assert_eq!(web.cache_ttl, Some(std::time::Duration::from_secs(60)));
    assert_eq!(web.summary_model.as_deref(), Some("small"));
    assert_eq!(
        web.resolve.keys().collect::<Vec<_>>(),
        ["dual.test", "intranet.test"]
    );
    assert_eq!(web.resolve["dual.test"].len(), 2);
    let search = web.search.as_ref().unwrap();
    assert_eq!(
        search.provider,
        toolhost_tools::web::SearchProvider::Searxng
    );
    assert_eq!(search.url.as_deref(), Some("http://localhost:8888"));
    assert_eq!(
        web.cache_folder.as_deref(),
        Some(dirs.home.join(".toolhost/cache/web").as_path())
    );

    for (text, line, message) in [
        ("[web]\ntimeout = 0\n", 2, "web.timeout of 0 seconds"),
        (
            "[web]\nmax_response_bytes = 0\n",
            2,
            "web.max_response_bytes of 0",
        ),
        ("[web]\nretries = 3\n", 2, "unknown field `retries`"),
        ("[web]\ncache_ttl = 0\n", 2, "write cache = false"),
        (
            "[web]\n\n[web.search]\nprovider = \"searxng\"\n",
            3,
            "needs url",
        ),
        (
            "[web.search]\nprovider = \"brave\"\nurl = \"api.example.com\"\n",
            3,
            "web.search.url 'api.example.com' is not a URL",
        ),
    ] {
        let path = write_file(dirs.project_config(), text);
        let error = toolhost_catalog::load_config(&sources(&dirs))
            .unwrap_err()
            .to_string();
        let expected = format!("invalid config file {}: line {line}:", path.display());
        assert!(
            error.starts_with(&expected) && error.contains(message),
            "{text:?}: {error}"
        );
    }
}

#[test]
fn provider_pricing_and_the_sessions_path_are_read_and_shown() {
    let dirs = HomeAndWorkspace::new();
    write_file(
        dirs.project_config(),
        "[sessions]\npath = \"~/stores/sessions.db\"\n\n[providers.local]\napi = \"openai-chat\"\n\
         base_url = \"http://127.0.0.1:8091/v1\"\npricing = { input = 3, output = 15.0, cached_input = 0.3 }\n",
    );
    let config = toolhost_catalog::load_config(&sources(&dirs)).unwrap();
    assert_eq!(
        config.providers["local"].pricing,
        Some(toolhost_config::pricing::Pricing {
            input: 3.0,
            output: 15.0,
            cached_input: Some(0.3),
            cache_write: None,
        })
    );
    assert_eq!(
        config.sessions.path,
        Some(dirs.home.join("stores/sessions.db"))
    );
    assert_eq!(
        toolhost_session::views::store_path_from(&config, Some(&dirs.home), None).unwrap(),
        dirs.home.join("stores/sessions.db")
    );
    let shown = config.show();
    assert!(
        shown.contains("pricing = { input = 3, output = 15, cached_input = 0.3 }"),
        "{shown}"
    );
    let origin = format!("# {}:2", dirs.project_config().display());
    assert!(
        shown
            .lines()
            .any(|line| line.starts_with("path = ") && line.ends_with(&origin)),
        "{shown}"
    );
}

#[test]
fn a_bad_price_names_file_line_and_key() {
    let (path, message) = load_error(
        "config.toml",
        "[providers.x]\napi = \"openai-chat\"\npricing = { input = -1.0, output = 2.0 }\n",
    );
    assert_eq!(
        message,
        format!(
            "invalid config file {}: line 3: providers.x.pricing.input = -1 is not a price: give \
             USD per million tokens, 0 or more",
            path.display()
        )
    );
    let (_, message) = load_error(
        "config.toml",
        "[providers.x]\napi = \"openai-chat\"\npricing = { input = 1.0, outptu = 2.0 }\n",
    );
    assert!(
        message.contains("line 3: unknown field `outptu`"),
        "{message}"
    );
}

#[test]
fn skills_hubs_concatenate_limits_override_and_bad_entries_name_file_and_line() {
    let dirs = HomeAndWorkspace::new();
    write_file(
        dirs.user_config(),
        "[skills]\nhubs = [\"https://user.example/index.json\"]\nmax_entries = 50\n",
    );
    write_file(
        dirs.project_config(),
        "[skills]\nhubs = [\"http://127.0.0.1:9/index.json\"]\nmax_unpacked_bytes = 1000\n",
    );
    let config = toolhost_catalog::load_config(&sources(&dirs)).unwrap();
    assert_eq!(
        config.skills.hubs,
        [
            "https://user.example/index.json",
            "http://127.0.0.1:9/index.json"
        ]
    );
    let limits = config.skills.hub_limits();
    assert_eq!(limits.max_entries, 50);
    assert_eq!(limits.max_unpacked_bytes, 1000);
    assert_eq!(
        limits.max_archive_bytes,
        toolhost_config::MAX_SKILL_ARCHIVE_BYTES
    );
    let shown = config.show();
    assert!(shown.contains("\n[skills]\nhubs = [\"https://user.example/index.json\", \"http://127.0.0.1:9/index.json\"]\n"), "{shown}");

    let (path, message) = load_error("config.toml", "[skills]\n\nhubs = [\"index.json\"]\n");
    assert!(
        message.starts_with(&format!(
            "invalid config file {}: line 3: skills.hubs entry 'index.json' is not an http:// or \
             https:// URL",
            path.display()
        )),
        "{message}"
    );
    let (_, message) = load_error("config.toml", "[skills]\nmax_entries = 0\n");
    assert!(
        message.contains("line 2: skills.max_entries of 0"),
        "{message}"
    );
    let (_, message) = load_error("config.toml", "[skills]\nhub = []\n");
    assert!(message.contains("line 2: unknown field `hub`"), "{message}");
}

#[test]
fn a_temperature_is_read_and_one_out_of_range_names_its_line() {
    let dirs = HomeAndWorkspace::new();
    write_file(
        dirs.project_config(),
        "[providers.local]\napi = \"openai-chat\"\nbase_url = \"http://127.0.0.1:8091/v1\"\ntemperature = 0\n",
    );
    let config = toolhost_catalog::load_config(&sources(&dirs)).unwrap();
    assert_eq!(
        config.providers["local"].temperature,
        Some(toolhost_config::Temperature(0.0))
    );
    assert!(config.show().contains("temperature = 0"));
    let (_, message) = load_error(
        "config.toml",
        "[providers.x]\napi = \"openai-chat\"\n\ntemperature = 7\n",
    );
    assert!(
        message.contains("line 4: providers.x.temperature = 7 is not a sampling temperature"),
        "{message}"
    );
}
