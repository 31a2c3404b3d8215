//! Tool modules in the shapes the pi ecosystem publishes, through the real `toolhost` binary:
//! pi's own packages and zod injected, the Node built-ins a tool needs (confined by the same
//! permission rules as the built-in tools), JSON and `node_modules` imports, and errors that
//! name what to fix. The fixtures are in `tests/fixtures/pi_ecosystem/tools`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::Path;

use assert_cmd::Command;
use predicates::prelude::*;
use toolhost_test_support::{HomeAndWorkspace, copy_tree, write_file};

/// The fixture tools in the workspace's `.toolhost/tools`, a file and a secret beside them.
fn setup() -> HomeAndWorkspace {
    let setup = HomeAndWorkspace::new();
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/pi_ecosystem/tools");
    copy_tree(&fixtures, &setup.workspace.join(".toolhost/tools"));
    write_file(setup.workspace.join("inside.txt"), "inside the workspace");
    write_file(setup.workspace.join(".env"), "SECRET=hunter2");
    setup
}

fn toolhost(setup: &HomeAndWorkspace) -> Command {
    let mut command = support::toolhost_with_home(&setup.workspace, &setup.home);
    command.env("TOOLHOST_TEST_SECRET", "leaked");
    command
}

fn stdout_of(setup: &HomeAndWorkspace, args: &[&str]) -> String {
    let output = toolhost(setup).args(args).output().unwrap();
    assert!(
        output.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

fn spec_of(setup: &HomeAndWorkspace, name: &str) -> serde_json::Value {
    let json = stdout_of(setup, &["tools", "--format", "json"]);
    let specs: serde_json::Value = serde_json::from_str(&json).unwrap();
    specs
        .as_array()
        .unwrap()
        .iter()
        .find(|spec| spec["name"] == name)
        .unwrap_or_else(|| panic!("no tool {name} in {json}"))
        .clone()
}

#[test]
fn pi_packages_load_under_all_three_scopes_and_render_with_pi_tui() {
    let setup = setup();
    let report = spec_of(&setup, "report");
    assert_eq!(
        report["parameters"]["properties"]["style"],
        serde_json::json!({ "type": "string", "enum": ["short", "long"], "description": "How much to show" })
    );
    assert_eq!(
        report["parameters"]["required"],
        serde_json::json!(["text", "style"])
    );
    assert_eq!(
        stdout_of(
            &setup,
            &[
                "call",
                "report",
                r#"{"text":"one\ntwo\nthree","style":"short"}"#,
                "--yes"
            ]
        ),
        "2 of 3 lines, 13B\n\none / two\n"
    );
    // An interactive pi-tui component resolves at import, and says why it cannot be used.
    toolhost(&setup)
        .args([
            "call",
            "report",
            r#"{"text":"x","style":"long","editor":true}"#,
            "--yes",
        ])
        .assert()
        .failure()
        .stderr(predicate::str::contains(
            "pi-tui's Editor is an interactive terminal component",
        ));
}

#[test]
fn pi_zod_schemas_become_the_json_schema_the_pipeline_validates() {
    let setup = setup();
    assert_eq!(
        spec_of(&setup, "mail")["parameters"],
        serde_json::json!({
            "type": "object",
            "properties": {
                "to": { "type": "string", "description": "Who gets it" },
                "priority": { "type": "string", "enum": ["low", "high"], "default": "low" },
                "copies": { "type": "integer", "minimum": 1 },
            },
            "required": ["to"],
        })
    );
    assert_eq!(
        stdout_of(&setup, &["call", "mail", r#"{"to":"ada"}"#, "--yes"]),
        "to ada (low)\n"
    );
    toolhost(&setup)
        .args([
            "call",
            "mail",
            r#"{"to":"ada","priority":"urgent"}"#,
            "--yes",
        ])
        .assert()
        .failure()
        .stderr(predicate::str::contains("priority"));
    assert_eq!(
        stdout_of(
            &setup,
            &["call", "zod_parse", r#"{"value":{"n":5}}"#, "--yes"]
        ),
        "invalid: n: must be at most 3\n"
    );
}

#[test]
fn node_builtins_give_what_tools_need_and_only_the_clean_environment() {
    let setup = setup();
    let out = stdout_of(&setup, &["call", "node_builtins", "{}", "--yes"]);
    let expected = [
        format!("home {}", setup.home.display()),
        "eol \"\\n\" platform linux".to_owned(),
        "url /tmp/a b.txt file:///tmp/x%20y".to_owned(),
        "sha256 ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad".to_owned(),
        "sha1 a9993e364706816aba3e25717850c26c9cd0d89d".to_owned(),
        "md5 kAFQmDzST7DWlj99KOF/cg==".to_owned(),
        "hmac f7bc83f430538424b13298e6aa6fb143ef4d59a14946175997479dbc2d1a3cd8".to_owned(),
        "random 8 true".to_owned(),
        "format list has 3 items {\"a\":1} { a: [ 1, 2 ] }".to_owned(),
        "events 42 promisify 42".to_owned(),
        "buffer aMOpbGxv hi 01ff".to_owned(),
        "env dumb no-secret read-only".to_owned(),
    ];
    assert_eq!(out, format!("{}\n", expected.join("\n")));
}

#[test]
fn node_fs_in_all_three_forms_goes_through_the_workspace() {
    let setup = setup();
    for form in ["sync", "callback", "promises"] {
        let args = format!(r#"{{"form":"{form}","path":"inside.txt"}}"#);
        let out = stdout_of(&setup, &["call", "node_fs", &args, "--yes"]);
        assert!(out.contains("inside the workspace"), "{form}: {out}");
        let args =
            format!(r#"{{"form":"{form}","path":"notes/{form}.txt","write":"{form} note"}}"#);
        let out = stdout_of(&setup, &["call", "node_fs", &args, "--yes"]);
        assert!(out.contains(&format!("{form} note")), "{form}: {out}");
        assert_eq!(
            std::fs::read_to_string(setup.workspace.join(format!("notes/{form}.txt"))).unwrap(),
            format!("{form} note")
        );
        // Outside the workspace is refused, whatever the form.
        let args = format!(r#"{{"form":"{form}","path":"../outside.txt"}}"#);
        toolhost(&setup)
            .args(["call", "node_fs", &args, "--yes"])
            .assert()
            .failure()
            .stderr(predicate::str::contains("outside"));
    }
    assert_eq!(
        stdout_of(
            &setup,
            &[
                "call",
                "node_fs",
                r#"{"form":"sync","path":"inside.txt"}"#,
                "--yes"
            ]
        ),
        "true 20 inside the workspace\n"
    );
}

#[test]
fn node_fs_makes_folders_moves_and_removes_in_the_workspace_under_the_write_rules() {
    let setup = setup();
    let out = stdout_of(
        &setup,
        &[
            "call",
            "node_fs",
            r#"{"form":"move","path":"kept"}"#,
            "--yes",
        ],
    );
    assert_eq!(out, "false plan\n");
    assert!(!setup.workspace.join("drafts").exists());
    assert_eq!(
        std::fs::read_to_string(setup.workspace.join("kept/plan.md")).unwrap(),
        "plan"
    );
    assert!(!setup.workspace.join("kept/scratch.md").exists());
    // A folder the rules keep from edits is neither made nor written into.
    toolhost(&setup)
        .args([
            "--mode",
            "bypassPermissions",
            "--deny",
            "Edit(locked/**)",
            "call",
            "node_fs",
            r#"{"form":"move","path":"locked"}"#,
            "--yes",
        ])
        .assert()
        .failure()
        .stderr(predicate::str::contains(
            "denied by the permission rule 'Edit(locked/**)'",
        ));
    assert!(!setup.workspace.join("locked").exists());
}

#[test]
fn node_fs_in_every_form_is_denied_by_the_rules_of_read_and_write() {
    let setup = setup();
    for form in ["sync", "callback", "promises"] {
        let args = format!(r#"{{"form":"{form}","path":".env"}}"#);
        toolhost(&setup)
            .args(["--deny", "Read(.env)", "call", "node_fs", &args, "--yes"])
            .assert()
            .failure()
            .stdout(predicate::str::contains("hunter2").not())
            .stderr(
                predicate::str::contains("denied by the permission rule 'Read(.env)'")
                    .and(predicate::str::contains("hunter2").not()),
            );
        let args = format!(r#"{{"form":"{form}","path":".env","write":"pwned"}}"#);
        toolhost(&setup)
            .args([
                "--mode",
                "bypassPermissions",
                "--deny",
                "Edit(.env)",
                "call",
                "node_fs",
                &args,
            ])
            .assert()
            .failure()
            .stderr(predicate::str::contains(
                "denied by the permission rule 'Edit(.env)'",
            ));
    }
    assert_eq!(
        std::fs::read_to_string(setup.workspace.join(".env")).unwrap(),
        "SECRET=hunter2"
    );
}

#[test]
fn child_process_in_every_form_runs_through_exec_and_the_bash_rules() {
    let setup = setup();
    let forms = [
        ("spawn", "hi there (exit 0)"),
        ("execFile", "hi there"),
        ("exec", "hi there"),
        ("execSync", "hi there"),
        ("execFileSync", "hi there"),
        ("spawnSync", "hi there (status 0)"),
    ];
    for (form, expected) in forms {
        let args = format!(r#"{{"form":"{form}","words":["echo","hi","there"]}}"#);
        assert_eq!(
            stdout_of(&setup, &["call", "node_child", &args, "--yes"]),
            format!("{expected}\n"),
            "{form}"
        );
        // A Bash deny rule refuses the same command from every form.
        toolhost(&setup)
            .args([
                "--deny",
                "Bash(echo:*)",
                "call",
                "node_child",
                &args,
                "--yes",
            ])
            .assert()
            .failure()
            .stderr(predicate::str::contains("Bash(echo:*)"));
    }
    // The deny list holds whatever the mode; a shell command is judged as Bash would judge it.
    toolhost(&setup)
        .args([
            "--mode",
            "bypassPermissions",
            "call",
            "node_child",
            r#"{"form":"execSync","words":["rm","-rf","/"]}"#,
        ])
        .assert()
        .failure()
        .stderr(predicate::str::contains("Refused"));
    // Programs get the clean environment, not the caller's.
    assert_eq!(
        stdout_of(
            &setup,
            &[
                "call",
                "node_child",
                r#"{"form":"execSync","words":["echo","${TOOLHOST_TEST_SECRET:-clean}"]}"#,
                "--yes"
            ]
        ),
        "clean\n"
    );
}

#[test]
fn json_and_the_tools_own_node_modules_import_as_bundlers_resolve_them() {
    let setup = setup();
    assert_eq!(
        stdout_of(&setup, &["call", "deps", "{}", "--yes"]),
        "hello from json | ESM! | extra | [file.txt] (cjs) | function\n"
    );
}

#[test]
fn load_errors_are_whole_name_the_path_once_and_say_what_is_missing() {
    let setup = setup();
    let output = toolhost(&setup)
        .env_remove("TOOLHOST_LOG")
        .arg("tools")
        .output()
        .unwrap();
    let stderr = String::from_utf8(output.stderr).unwrap();
    let warning = |file: &str| {
        stderr
            .lines()
            .find(|line| line.contains(file))
            .unwrap_or_else(|| panic!("no warning about {file}: {stderr}"))
            .to_owned()
    };
    // A dependency that needs a Node module the engine cannot give: the package and the module,
    // and the end of the message, which a 256-byte cut used to lose.
    let net = warning("needs_net");
    assert!(
        net.contains("the package '@acme/wants-net'")
            && net.contains("needs the Node module 'net'")
            && net.contains("the Node modules available are"),
        "{net}"
    );
    assert!(net.len() > 300, "{net}");
    assert_eq!(net.matches("needs_net").count(), 1, "{net}");
    // A factory calling an export the host lacks: the name, the function and the TypeScript line.
    let missing = warning("missing_export.ts");
    assert!(
        missing.contains("api.pi.getNoSuchTheme is not a function")
            && missing.contains("TypeError at line 8, in default"),
        "{missing}"
    );
    assert_eq!(missing.matches("missing_export.ts").count(), 1, "{missing}");
}
