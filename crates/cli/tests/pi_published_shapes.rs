//! pi extensions in the shapes published ones take, through the real `toolhost` binary: a
//! TypeScript extension importing its siblings by their emitted `.js` names, requiring a
//! CommonJS engine from an ES module, importing subpaths of the host packages and an export
//! toolhost lacks, and calling pi APIs newer than toolhost's. The fixtures are in
//! `tests/fixtures/pi_published`, dropped into `.pi/extensions/`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::Path;
use std::time::Duration;

use assert_cmd::Command;
use serde_json::{Value, json};
use toolhost_test_support::{
    HomeAndWorkspace, MockModel, Reply, WireFormat, copy_tree, write_file,
};

fn setup() -> HomeAndWorkspace {
    let setup = HomeAndWorkspace::new();
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/pi_published");
    copy_tree(&fixtures, &setup.workspace.join(".pi/extensions"));
    setup
}

fn toolhost(setup: &HomeAndWorkspace) -> Command {
    support::toolhost_with_home(&setup.workspace, &setup.home)
}

#[test]
fn a_published_layout_loads_and_its_imports_give_what_pi_gives() {
    let setup = setup();
    let output = toolhost(&setup)
        .args(["call", "layout_probe", "{}", "--yes"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(
        report,
        json!({
            "shout": "HI!",
            "counted": "3 items, total 6",
            "folder": "probe",
            "key": "ctrl+alt+p",
            "stripped": "bold",
            "scratch": true,
            "complete": "function",
            "value": "function",
            "truncated": "a\nb",
            "mode": "print",
            "graphemes": 5,
            "number": "1,234,567.5",
            "decoded": "\u{e9}!",
            "clock": "number",
            "scoped": "run-1",
            "diff": { "diff": " 1 a\n-2 b\n+2 B\n 3 c", "firstChangedLine": 2 },
            "patch": "--- a/f.txt\n+++ b/f.txt\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n",
            "repaired": { "a": 1 },
            "missing": "'futureHelper' (imported from '@mariozechner/pi-coding-agent') is not \
                        provided by toolhost's built-in @mariozechner/pi-coding-agent: the \
                        embedded engine has no such export",
        })
    );
    let scratch: Vec<_> = std::fs::read_dir(&setup.workspace)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with("scratch-"))
        .collect();
    assert_eq!(scratch.len(), 1, "mkdtempSync made one folder: {scratch:?}");
}

#[test]
fn newer_and_ui_only_pi_calls_are_ignored_with_a_warning_naming_them() {
    let setup = setup();
    let output = toolhost(&setup).arg("tools").output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(
        String::from_utf8_lossy(&output.stdout).contains("layout_probe"),
        "{stderr}"
    );
    assert!(
        stderr.contains("pi.registerEntryRenderer is ignored: toolhost draws the session itself"),
        "{stderr}"
    );
    assert!(
        stderr.contains(
            "pi.registerStatusBadge is ignored: toolhost's ExtensionAPI has no such call"
        ),
        "{stderr}"
    );
    assert!(
        stderr.contains(
            "keys_only.ts: nothing to load: all the extension registers is what toolhost \
             ignores (pi.registerShortcut), with no tool, command or event handler"
        ),
        "{stderr}"
    );
    assert!(!stderr.contains("registered nothing"), "{stderr}");
    assert!(
        stderr.contains(
            "declines.ts: the factory returned null: it offers no tools here (plugins do this \
             when something they need is missing, such as an API key in the environment"
        ),
        "{stderr}"
    );
}

#[test]
fn pis_own_tools_wrapped_by_an_extension_run_under_the_rules_of_the_built_ins() {
    let setup = setup();
    write_file(setup.workspace.join("notes.txt"), "first\nsecond\nthird");
    let read = toolhost(&setup)
        .args([
            "call",
            "peek",
            r#"{"path": "notes.txt", "offset": 2, "limit": 1}"#,
            "--yes",
        ])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&read.stdout);
    assert!(
        read.status.success(),
        "{}",
        String::from_utf8_lossy(&read.stderr)
    );
    assert_eq!(
        stdout.trim_end(),
        "second\n\n[Showing lines 2-2 of 3. Use offset=3 to continue.]"
    );
    let denied = toolhost(&setup)
        .args(["--deny", "Read(notes.txt)"])
        .args(["call", "peek", r#"{"path": "notes.txt"}"#, "--yes"])
        .output()
        .unwrap();
    let refused = format!(
        "{}{}",
        String::from_utf8_lossy(&denied.stdout),
        String::from_utf8_lossy(&denied.stderr)
    );
    assert!(!refused.contains("first"), "{refused}");
    assert!(refused.contains("Read(notes.txt)"), "{refused}");
    let shell = toolhost(&setup)
        .args([
            "call",
            "hooked_shell",
            r#"{"command": "echo ran"}"#,
            "--yes",
        ])
        .output()
        .unwrap();
    assert!(
        shell.status.success(),
        "{}",
        String::from_utf8_lossy(&shell.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&shell.stdout).trim_end(),
        "hooked\nran"
    );
}

/// The names of the tools a request to the model offered.
fn offered(body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .map(|tools| {
            tools
                .iter()
                .map(|tool| tool["function"]["name"].as_str().unwrap().to_owned())
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn a_run_applies_active_tools_offers_late_tools_compacts_passes_pi_events_and_ends_settled() {
    let setup = setup();
    write_file(setup.workspace.join("squash-please"), "");
    write_file(setup.workspace.join("notes.txt"), "the notes");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let model = runtime.block_on(MockModel::start(
        WireFormat::OpenAiChat,
        vec![
            Reply::tool_call("call_1", "Read", json!({"path": "notes.txt"})).into(),
            Reply::text("The notes were read.").into(),
            Reply::tool_call("call_2", "late_tool", json!({})).into(),
            Reply::text("Done.").into(),
        ],
    ));
    let output = toolhost(&setup)
        .timeout(Duration::from_secs(60))
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("ANTHROPIC_BASE_URL")
        .env("OPENAI_BASE_URL", model.openai_base_url())
        .env("OPENAI_API_KEY", "sk-test")
        .args(["run", "--yes", "Read my notes."])
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains("could not be passed"), "{stderr}");
    assert_eq!(
        std::fs::read_to_string(setup.workspace.join("settled.txt")).unwrap(),
        "settled",
        "agent_settled is heard as agent_end"
    );
    assert_eq!(
        std::fs::read_to_string(setup.workspace.join("heard.txt")).unwrap(),
        "hello from bus_sender",
        "pi.events reaches the other extensions"
    );
    let requests = model.requests();
    assert_eq!(offered(&requests[0].body), ["Read", "Bash"]);
    // squash.ts's ctx.compact() after the first turn: the next request is the summary's.
    let summary_request = requests[1].body.to_string();
    assert!(
        summary_request.contains("Keep the file names."),
        "{summary_request}"
    );
    assert_eq!(offered(&requests[2].body), ["Read", "Bash", "late_tool"]);
    assert!(
        requests[2]
            .body
            .to_string()
            .contains("The notes were read."),
        "the run goes on from the summary"
    );
    let results: Vec<String> = requests[3].body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|message| message["role"] == "tool")
        .map(|message| message["content"].to_string())
        .collect();
    assert!(results[1].contains("late tool ran"), "{results:?}");
}

#[test]
fn a_file_read_line_by_line_goes_through_the_read_rules() {
    let setup = setup();
    write_file(setup.workspace.join("notes.txt"), "one\ntwo\nthree\n");
    let counted = toolhost(&setup)
        .args(["call", "count_lines", r#"{"path": "notes.txt"}"#, "--yes"])
        .output()
        .unwrap();
    assert!(
        counted.status.success(),
        "{}",
        String::from_utf8_lossy(&counted.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&counted.stdout).trim_end(),
        "3 lines, the last: three"
    );
    let denied = toolhost(&setup)
        .args(["--deny", "Read(notes.txt)"])
        .args(["call", "count_lines", r#"{"path": "notes.txt"}"#, "--yes"])
        .output()
        .unwrap();
    let refused = format!(
        "{}{}",
        String::from_utf8_lossy(&denied.stdout),
        String::from_utf8_lossy(&denied.stderr)
    );
    assert!(!denied.status.success(), "{refused}");
    assert!(refused.contains("Read(notes.txt)"), "{refused}");
    assert!(!refused.contains("lines, the last"), "{refused}");
}

#[test]
fn tool_execution_update_and_message_end_handlers_hear_a_tools_progress_and_the_models_message() {
    let setup = setup();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let model = runtime.block_on(MockModel::start(
        WireFormat::OpenAiChat,
        vec![
            Reply::tool_call("call_1", "progress_probe", json!({})).into(),
            Reply::text("Done.").into(),
        ],
    ));
    let output = toolhost(&setup)
        .timeout(Duration::from_secs(60))
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("ANTHROPIC_BASE_URL")
        .env("OPENAI_BASE_URL", model.openai_base_url())
        .env("OPENAI_API_KEY", "sk-test")
        .args(["run", "--yes", "Show progress."])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(
        !stderr.contains("already registered"),
        "registering its own tool again replaces it: {stderr}"
    );
    let users: Vec<String> = model.requests()[1].body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|message| message["role"] == "user")
        .map(|message| message["content"].to_string())
        .collect();
    assert!(
        users.iter().any(|text| text.contains(
            "updates seen: message_end: progress_probe toolUse, progress_probe: step 1, \
                 progress_probe: step 2"
        )),
        "{users:?}"
    );
}

#[test]
fn custom_tools_in_pis_and_oh_my_pis_tool_folders_are_found() {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/pi_custom_tools");
    for (home, folder) in [(false, ".pi/tools"), (true, ".omp/agent/tools")] {
        let setup = HomeAndWorkspace::new();
        let base = if home { &setup.home } else { &setup.workspace };
        copy_tree(&fixture, &base.join(folder));
        let output = toolhost(&setup)
            .args(["call", "greeter", r#"{"name": "Ada"}"#, "--yes"])
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "{folder}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        assert_eq!(
            String::from_utf8_lossy(&output.stdout).trim_end(),
            "Greetings, Ada.",
            "{folder}"
        );
    }
}

#[test]
fn a_packages_extensions_listed_by_a_pattern_all_load() {
    let setup = setup();
    write_file(setup.workspace.join("listed/file.txt"), "x");
    for (tool, args, expected) in [
        ("glob_a", "{}", "a"),
        ("glob_b", r#"{"path": "listed"}"#, "file.txt"),
    ] {
        let output = toolhost(&setup)
            .args(["call", tool, args, "--yes"])
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "{tool}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        assert_eq!(String::from_utf8_lossy(&output.stdout).trim_end(), expected);
    }
}

#[test]
fn a_hook_in_pis_hook_folder_appends_to_the_system_prompt() {
    let setup = HomeAndWorkspace::new();
    copy_tree(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/pi_hooks"),
        &setup.home.join(".pi/agent/hooks"),
    );
    let system = system_prompt_of_a_run(&setup, "Hello.", "AHOY.");
    assert!(system.ends_with("\\n\\nAnswer in capitals.\""), "{system}");
}

/// The system prompt of `toolhost run PROMPT` against a mock model answering `reply`, as the
/// model received it (JSON-encoded).
fn system_prompt_of_a_run(setup: &HomeAndWorkspace, prompt: &str, reply: &str) -> String {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let model = runtime.block_on(MockModel::start(
        WireFormat::OpenAiChat,
        vec![Reply::text(reply).into()],
    ));
    let output = toolhost(setup)
        .timeout(Duration::from_secs(60))
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("ANTHROPIC_BASE_URL")
        .env("OPENAI_BASE_URL", model.openai_base_url())
        .env("OPENAI_API_KEY", "sk-test")
        .args(["run", prompt])
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    model.requests()[0].body["messages"][0]["content"].to_string()
}

/// An extension file registering one tool that answers its own name.
fn tool_extension(name: &str) -> String {
    format!(
        "import {{ Type }} from \"@sinclair/typebox\";\n\
         export default function (pi) {{\n\
           pi.registerTool({{ name: \"{name}\", label: \"{name}\", description: \"{name}\", \
         parameters: Type.Object({{}}), async execute() {{ return {{ content: [{{ type: \"text\", \
         text: \"{name}\" }}] }}; }} }});\n\
         }}\n"
    )
}

#[test]
fn packages_installed_by_pi_install_are_found_from_the_settings() {
    let setup = HomeAndWorkspace::new();
    let pi = setup.workspace.join(".pi");
    write_file(
        pi.join("settings.json"),
        r#"{"packages": ["npm:@acme/pi-greet@1.2.0", {"source": "git:github.com/acme/pi-kit@v1"}, "./local-pack", "npm:never-installed"]}"#,
    );
    // npm, without a manifest: its `extensions/` folder.
    let npm = pi.join("npm/node_modules/@acme/pi-greet");
    write_file(npm.join("package.json"), r#"{"name": "@acme/pi-greet"}"#);
    write_file(npm.join("extensions/greet.ts"), tool_extension("npm_greet"));
    // git, with a manifest listing a folder less one file.
    let git = pi.join("git/github.com/acme/pi-kit");
    write_file(
        git.join("package.json"),
        r#"{"pi": {"extensions": ["./src", "!./src/draft.ts"]}}"#,
    );
    write_file(git.join("src/kit.ts"), tool_extension("git_kit"));
    write_file(git.join("src/draft.ts"), tool_extension("git_draft"));
    // a local path, relative to the settings file: a folder with an index.
    write_file(pi.join("local-pack/index.ts"), tool_extension("local_pack"));

    let output = toolhost(&setup).arg("tools").output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    for tool in ["npm_greet", "git_kit", "local_pack"] {
        assert!(stdout.contains(tool), "{tool} missing:\n{stdout}\n{stderr}");
    }
    assert!(!stdout.contains("git_draft"), "{stdout}");
    assert!(
        stderr.contains("npm:never-installed: listed in the `packages` of ",)
            && stderr.contains(
                "but not installed where pi installs it (run `pi install npm:never-installed`"
            ),
        "{stderr}"
    );
}

#[test]
fn an_oh_my_pi_plugin_package_gives_its_tools_module_and_its_hook() {
    let setup = HomeAndWorkspace::new();
    copy_tree(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/omp_plugin/kit"),
        &setup.home.join(".omp/plugins/node_modules/@acme/kit"),
    );
    let called = toolhost(&setup)
        .args(["call", "kit_shout", r#"{"text": "hi"}"#, "--yes"])
        .output()
        .unwrap();
    assert!(
        called.status.success(),
        "{}",
        String::from_utf8_lossy(&called.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&called.stdout).trim_end(), "HI!");
    let listed = toolhost(&setup).arg("tools").output().unwrap();
    let stdout = String::from_utf8_lossy(&listed.stdout);
    assert!(
        !stdout.contains("shout.ts"),
        "a helper is not a tool: {stdout}"
    );

    let system = system_prompt_of_a_run(&setup, "Hi.", "Hello.");
    assert!(system.contains("The kit plugin is installed."), "{system}");
}
