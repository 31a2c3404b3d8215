//! The conventions of a command-line program, through the real binary: shell completions that
//! bash loads and completes with, `init`, `--version` with the commit, the four exit statuses
//! (one test per class), messages that say their cause once, and `--json` on the list
//! commands scripts read.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::collections::BTreeMap;
use std::io::Write as _;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use sha2::{Digest as _, Sha256};
use support::toolhost_with_home;
use toolhost_test_support::{HomeAndWorkspace, StaticServer, write_file};

/// `toolhost ARGS` in the fixture's workspace, with its home.
fn output_of(dirs: &HomeAndWorkspace, args: &[&str]) -> std::process::Output {
    toolhost_with_home(&dirs.workspace, &dirs.home)
        .args(args)
        .output()
        .unwrap()
}

fn stderr_of(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Completes `line` (the words typed so far, the last one possibly empty) in a bash that has
/// sourced `toolhost completion bash`, as bash does on Tab: the candidates, one a line.
fn bash_completions(script: &std::path::Path, words: &[&str]) -> Vec<String> {
    let quoted: Vec<String> = words.iter().map(|word| format!("'{word}'")).collect();
    let driver = format!(
        "source '{}'\n\
         complete -p toolhost >/dev/null\n\
         COMP_WORDS=({})\n\
         COMP_CWORD={}\n\
         COMP_LINE='{}'\n\
         COMP_POINT=${{#COMP_LINE}}\n\
         _toolhost toolhost '{}' '{}'\n\
         printf '%s\\n' \"${{COMPREPLY[@]}}\"\n",
        script.display(),
        quoted.join(" "),
        words.len() - 1,
        words.join(" "),
        words[words.len() - 1],
        words[words.len().saturating_sub(2)],
    );
    let output = Command::new("bash")
        .args(["--norc", "--noprofile", "-c", &driver])
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(str::to_owned)
        .collect()
}

#[test]
fn bash_sources_the_completions_and_completes_commands_and_flags() {
    let dirs = HomeAndWorkspace::new();
    let output = output_of(&dirs, &["completion", "bash"]);
    assert!(output.status.success(), "{output:?}");
    let script = dirs.root().join("toolhost.bash");
    std::fs::write(&script, &output.stdout).unwrap();

    let commands = bash_completions(&script, &["toolhost", ""]);
    for command in ["run", "chat", "serve", "sessions", "completion", "init"] {
        assert!(
            commands.iter().any(|c| c == command),
            "{command} in {commands:?}"
        );
    }
    assert_eq!(
        bash_completions(&script, &["toolhost", "se"]),
        ["serve", "sessions"]
    );
    let sessions = bash_completions(&script, &["toolhost", "sessions", ""]);
    assert!(sessions.iter().any(|c| c == "list"), "{sessions:?}");
    let shells = bash_completions(&script, &["toolhost", "completion", ""]);
    for shell in ["bash", "zsh", "fish", "powershell", "elvish"] {
        assert!(shells.iter().any(|c| c == shell), "{shell} in {shells:?}");
    }
}

#[test]
fn every_shell_gets_a_script_and_an_unknown_shell_is_a_usage_error() {
    let dirs = HomeAndWorkspace::new();
    for (shell, marker) in [
        ("zsh", "#compdef toolhost"),
        ("fish", "complete -c toolhost"),
        ("powershell", "Register-ArgumentCompleter"),
        ("elvish", "edit:completion:arg-completer[toolhost]"),
    ] {
        let output = output_of(&dirs, &["completion", shell]);
        assert!(output.status.success(), "{shell}: {output:?}");
        assert!(
            String::from_utf8_lossy(&output.stdout).contains(marker),
            "{shell}'s script holds {marker}"
        );
    }
    let output = output_of(&dirs, &["completion", "tcsh"]);
    assert_eq!(output.status.code(), Some(2), "{output:?}");
}

#[test]
fn init_writes_a_commented_config_and_an_agents_md_and_never_overwrites() {
    let dirs = HomeAndWorkspace::new();
    let config = dirs.workspace.join(".toolhost/config.toml");
    let agents = dirs.workspace.join("AGENTS.md");
    let output = output_of(&dirs, &["init"]);
    assert!(output.status.success(), "{output:?}");
    assert_eq!(
        String::from_utf8_lossy(&output.stdout),
        format!("wrote {}\nwrote {}\n", config.display(), agents.display())
    );
    let written = std::fs::read_to_string(&config).unwrap();
    assert!(written.contains("# mode = \"default\""), "{written}");
    // Commented out, it changes nothing: config show loads it and says the values are defaults.
    let show = output_of(&dirs, &["config", "show"]);
    assert!(show.status.success(), "{show:?}");

    // Uncommented, every setting it shows is one toolhost takes.
    let uncommented: String = written
        .lines()
        .map(|line| match line.strip_prefix("# ") {
            Some(setting) if setting.contains(" = ") || setting.starts_with('[') => setting,
            _ => line,
        })
        .map(|line| format!("{line}\n"))
        .collect();
    std::fs::write(&config, uncommented).unwrap();
    let show = output_of(&dirs, &["config", "show"]);
    assert!(
        show.status.success(),
        "the uncommented template loads: {show:?}"
    );

    std::fs::write(&agents, "my own instructions\n").unwrap();
    let again = output_of(&dirs, &["init"]);
    assert!(again.status.success(), "{again:?}");
    assert_eq!(
        String::from_utf8_lossy(&again.stdout),
        format!(
            "kept {} (it exists)\nkept {} (it exists)\n",
            config.display(),
            agents.display()
        )
    );
    assert_eq!(
        std::fs::read_to_string(&agents).unwrap(),
        "my own instructions\n"
    );
}

#[test]
fn the_version_names_the_commit_it_was_built_from() {
    let commit = Command::new("git")
        .args(["log", "-1", "--format=%h"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    assert!(
        commit.status.success(),
        "the tests run in a git clone: {commit:?}"
    );
    let commit = String::from_utf8_lossy(&commit.stdout).trim().to_owned();
    let dirs = HomeAndWorkspace::new();
    let output = output_of(&dirs, &["--version"]);
    assert!(output.status.success(), "{output:?}");
    let version = String::from_utf8_lossy(&output.stdout);
    assert!(
        version.starts_with(&format!(
            "toolhost {} ({commit} ",
            env!("CARGO_PKG_VERSION")
        )),
        "{version}"
    );
}

// ---- exit status, one test per class ----

#[test]
fn success_is_0() {
    let dirs = HomeAndWorkspace::new();
    write_file(dirs.workspace.join("a.txt"), "hello\n");
    let output = output_of(&dirs, &["call", "Read", r#"{"path": "a.txt"}"#]);
    assert_eq!(output.status.code(), Some(0), "{output:?}");
}

#[test]
fn usage_errors_are_2_a_bad_flag_and_a_config_that_does_not_parse() {
    let dirs = HomeAndWorkspace::new();
    let output = output_of(&dirs, &["tools", "--no-such-flag"]);
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    let output = output_of(
        &dirs,
        &["mcp", "add", "x", "--env", "NOEQUALS", "--", "true"],
    );
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    assert!(stderr_of(&output).contains("write KEY=VALUE"), "{output:?}");
    write_file(dirs.project_config(), "[permissions\nmode = 1\n");
    let output = output_of(&dirs, &["tools"]);
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    assert!(stderr_of(&output).contains("config.toml"), "{output:?}");
}

/// A hub on 127.0.0.1 listing `evil`, whose archive holds an entry that climbs out of its
/// folder, and `wrong`, whose index gives another hash than its archive's.
fn hostile_hub(dirs: &HomeAndWorkspace) -> StaticServer {
    let mut tar = tar::Builder::new(Vec::new());
    let skill = b"---\nname: evil\ndescription: d\n---\nbody\n";
    for name in ["evil/SKILL.md", "evil/../../victim/pwned.txt"] {
        let mut header = tar::Header::new_gnu();
        header.set_size(skill.len() as u64);
        header.set_mode(0o644);
        // `append_data` refuses `..`; the header's raw name field does not.
        header.as_gnu_mut().unwrap().name[..name.len()].copy_from_slice(name.as_bytes());
        header.set_cksum();
        tar.append(&header, skill.as_slice()).unwrap();
    }
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(&tar.into_inner().unwrap()).unwrap();
    let archive = gz.finish().unwrap();
    let hash: String = Sha256::digest(&archive)
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect();
    let index = serde_json::json!({"skills": [
        {"id": "evil", "name": "evil", "description": "d", "version": "1", "url": "evil.tar.gz", "sha256": hash},
        {"id": "wrong", "name": "wrong", "description": "d", "version": "1", "url": "evil.tar.gz", "sha256": "0".repeat(64)},
    ]});
    let server = StaticServer::start(BTreeMap::from([
        ("index.json".to_owned(), serde_json::to_vec(&index).unwrap()),
        ("evil.tar.gz".to_owned(), archive),
    ]));
    write_file(
        dirs.project_config(),
        format!("[skills]\nhubs = [\"{}\"]\n", server.url("index.json")),
    );
    server
}

#[test]
fn failures_at_run_time_are_1_and_say_their_cause_once() {
    let dirs = HomeAndWorkspace::new();
    let _hub = hostile_hub(&dirs);
    let output = output_of(&dirs, &["skills", "install", "evil"]);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let stderr = stderr_of(&output);
    assert_eq!(stderr.matches("refused entry").count(), 1, "{stderr}");
    assert!(stderr.contains("the path holds '..'"), "{stderr}");
    assert!(!dirs.root().join("victim").exists());

    let output = output_of(&dirs, &["skills", "install", "wrong"]);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    assert!(stderr_of(&output).contains("SHA-256"), "{output:?}");

    // A network error: the hub stopped answering (nothing listens on its port any more).
    drop(_hub);
    let output = output_of(&dirs, &["skills", "search", "evil"]);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    assert!(stderr_of(&output).contains("cannot fetch"), "{output:?}");

    // A tool error.
    let output = output_of(&dirs, &["call", "Read", r#"{"path": "missing.txt"}"#]);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
}

#[test]
fn an_interrupted_command_is_130() {
    let dirs = HomeAndWorkspace::new();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_toolhost"))
        .env("HOME", &dirs.home)
        .arg("--workspace")
        .arg(&dirs.workspace)
        .args([
            "call",
            "Bash",
            r#"{"command": "touch started; sleep 30"}"#,
            "--yes",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while !dirs.workspace.join("started").exists() {
        assert!(Instant::now() < deadline, "the command never started");
        std::thread::sleep(Duration::from_millis(20));
    }
    let kill = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let deadline = Instant::now() + Duration::from_secs(10);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(Instant::now() < deadline, "toolhost did not stop on SIGINT");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(status.code(), Some(130));
}

// ---- --json on the list commands ----

fn json_of(dirs: &HomeAndWorkspace, args: &[&str]) -> serde_json::Value {
    let output = output_of(dirs, args);
    assert!(output.status.success(), "{args:?}: {output:?}");
    serde_json::from_slice(&output.stdout).unwrap_or_else(|error| panic!("{args:?}: {error}"))
}

#[test]
fn the_list_commands_print_json_for_scripts() {
    let dirs = HomeAndWorkspace::new();
    write_file(
        dirs.project_config(),
        "[mcp_servers.files]\ncommand = \"npx\"\nargs = [\"server\"]\n\n\
         [agents.reviewer]\ndescription = \"Reviews\"\n",
    );
    write_file(
        dirs.workspace.join(".toolhost/skills/pdf/SKILL.md"),
        "---\nname: pdf\ndescription: Fill in PDF forms.\n---\nbody\n",
    );

    let servers = json_of(&dirs, &["mcp", "list", "--json"]);
    assert_eq!(servers[0]["name"], "files");
    assert_eq!(servers[0]["type"], "stdio");
    assert_eq!(servers[0]["enabled"], true);

    let agents = json_of(&dirs, &["agents", "list", "--json"]);
    let reviewer = agents
        .as_array()
        .unwrap()
        .iter()
        .find(|agent| agent["name"] == "reviewer")
        .expect("the reviewer is listed");
    assert_eq!(reviewer["description"], "Reviews");

    let skills = json_of(&dirs, &["skills", "list", "--json"]);
    assert_eq!(skills[0]["name"], "pdf");
    assert_eq!(skills[0]["origin"], "project");
    assert_eq!(skills[0]["description"], "Fill in PDF forms.");

    assert_eq!(
        json_of(&dirs, &["sessions", "list", "--json"]),
        serde_json::json!([])
    );
}

// ---- doctor ----

#[test]
fn doctor_reports_the_model_provider_the_mcp_servers_and_the_session_store() {
    let dirs = HomeAndWorkspace::new();
    let models = serde_json::json!({"object": "list", "data": [{"id": "qwen", "object": "model"}]});
    let provider = StaticServer::start(BTreeMap::from([(
        "v1/models".to_owned(),
        serde_json::to_vec(&models).unwrap(),
    )]));
    // An MCP server that wants credentials toolhost was not given.
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let locked = runtime.block_on(toolhost_test_support::replay_server::ReplayServer::start(
        (0..20)
            .map(|_| {
                toolhost_test_support::replay_server::CannedResponse::status(
                    401,
                    serde_json::json!({"error": "unauthorized"}),
                )
            })
            .collect(),
    ));
    let config = |model: &str| {
        format!(
            "[agent]\nprovider = \"local\"\n\n[providers.local]\napi = \"openai-chat\"\n\
             base_url = \"{}\"\nmodel = \"{model}\"\n\n\
             [mcp_servers.locked]\nurl = \"{}/mcp\"\nstartup_timeout = 10\n",
            provider.url("v1"),
            locked.url
        )
    };
    write_file(dirs.project_config(), config("qwen"));
    let output = output_of(&dirs, &["doctor"]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    let line = |name: &str| {
        stdout
            .lines()
            .find(|line| line.split_whitespace().nth(1) == Some(name))
            .unwrap_or_else(|| panic!("no {name} line in:\n{stdout}"))
            .to_owned()
    };
    assert!(line("provider").starts_with("ok"), "{stdout}");
    assert!(line("provider").contains("model qwen known"), "{stdout}");
    let locked_line = stdout
        .lines()
        .find(|line| line.contains("locked:"))
        .unwrap_or_else(|| panic!("no line for the locked server in:\n{stdout}"));
    assert!(locked_line.contains("auth needed"), "{stdout}");
    assert!(line("sessions").contains("not created yet"), "{stdout}");
    assert!(
        line("sessions").contains(
            &dirs
                .home
                .join(".toolhost/sessions.db")
                .display()
                .to_string()
        ),
        "{stdout}"
    );

    // A model the server does not list is a warning, not a failure.
    write_file(dirs.project_config(), config("llama"));
    let output = output_of(&dirs, &["doctor"]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    let provider_line = stdout
        .lines()
        .find(|line| line.split_whitespace().nth(1) == Some("provider"))
        .unwrap();
    assert!(provider_line.starts_with("warn"), "{stdout}");
    assert!(
        provider_line.contains("does not list model llama (it lists: qwen)"),
        "{stdout}"
    );

    // Nothing listens there any more: the provider is unreachable, and doctor fails.
    drop(provider);
    let output = output_of(&dirs, &["doctor"]);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    assert!(
        String::from_utf8_lossy(&output.stdout).contains("unreachable"),
        "{output:?}"
    );
}
