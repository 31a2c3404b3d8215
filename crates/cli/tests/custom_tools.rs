//! Custom tools through the real `toolhost` binary, with `HOME` in a temp folder: discovered
//! modules are listed with their source and run with `call`; their `node:fs/promises` goes
//! through the workspace and their `exec` through the same permissions as Bash.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use assert_cmd::Command;
use predicates::prelude::*;
use toolhost_test_support::{HomeAndWorkspace, write_file};

/// A home folder with a user tool, and a workspace with project tools (one broken), a file
/// inside and a secret beside it.
fn setup() -> HomeAndWorkspace {
    let setup = HomeAndWorkspace::new();
    let (home, workspace) = (&setup.home, &setup.workspace);
    write_file(
        home.join(".toolhost/tools/greet.ts"),
        r#"
        import { Type } from "@sinclair/typebox";
        export default () => ({
          name: "greet", label: "Greet", description: "Greets someone by name",
          parameters: Type.Object({ name: Type.String() }),
          async execute(_id: string, params: { name: string }) {
            return { content: [{ type: "text", text: `Hello, ${params.name}!` }] };
          },
        });
        "#,
    );
    write_file(
        workspace.join(".toolhost/tools/files.js"),
        r#"
        import { readFile, writeFile } from "node:fs/promises";
        export default () => ({ name: "files", description: "Reads a file", async execute(_, p) {
          if (p.write) await writeFile(p.path, p.write);
          return { content: [{ type: "text", text: await readFile(p.path, "utf8") }] };
        } });
        "#,
    );
    write_file(
        workspace.join(".toolhost/tools/run.js"),
        r#"
        export default (api) => ({ name: "run", description: "Runs a program", async execute(_, p, u, ctx, signal) {
          const r = await api.exec(p.command, p.args ?? [], { signal });
          return { content: [{ type: "text", text: r.stdout.trim() }] };
        } });
        "#,
    );
    write_file(
        workspace.join(".toolhost/tools/broken.js"),
        "export default (",
    );
    write_file(workspace.join(".toolhost/tools/notes.md"), "# notes");
    write_file(workspace.join("inside.txt"), "inside the workspace");
    write_file(setup.root().join("secret.txt"), "outside");
    setup
}

fn toolhost(setup: &HomeAndWorkspace) -> Command {
    support::toolhost_with_home(&setup.workspace, &setup.home)
}

#[test]
fn tools_lists_custom_tools_with_their_source_and_reports_broken_modules() {
    let setup = setup();
    let output = toolhost(&setup).arg("tools").output().unwrap();
    assert!(output.status.success());
    let stdout = String::from_utf8(output.stdout).unwrap();
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(
        stdout.lines().next().unwrap().contains("SOURCE"),
        "{stdout}"
    );
    let greet = stdout
        .lines()
        .find(|line| line.starts_with("greet"))
        .unwrap();
    assert!(
        greet.contains(
            &setup
                .home
                .join(".toolhost/tools/greet.ts")
                .display()
                .to_string()
        ),
        "{greet}"
    );
    assert!(greet.contains("Greets someone by name"), "{greet}");
    let read = stdout
        .lines()
        .find(|line| line.starts_with("Read"))
        .unwrap();
    assert!(read.contains("built-in"), "{read}");
    assert!(stdout.lines().any(|line| line.starts_with("files")));
    assert!(stderr.contains("broken.js"), "{stderr}");
    assert!(!stdout.contains("notes"), "{stdout}");

    let json = toolhost(&setup)
        .args(["tools", "--format", "json"])
        .output()
        .unwrap();
    let specs: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    let greet = specs
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "greet")
        .unwrap();
    assert_eq!(
        greet["source"],
        setup
            .home
            .join(".toolhost/tools/greet.ts")
            .display()
            .to_string()
    );
    assert_eq!(greet["parameters"]["required"], serde_json::json!(["name"]));
}

#[test]
fn call_runs_a_custom_tool_through_the_pipeline() {
    let setup = setup();
    toolhost(&setup)
        .args(["call", "greet", r#"{"name":"Ada"}"#, "--yes"])
        .assert()
        .success()
        .stdout("Hello, Ada!\n");
    // Validation is the pipeline's, as for built-ins.
    toolhost(&setup)
        .args(["call", "greet", "{}", "--yes"])
        .assert()
        .failure()
        .stderr(predicate::str::contains("name"));
}

#[test]
fn node_fs_reads_and_writes_inside_the_workspace_only() {
    let setup = setup();
    toolhost(&setup)
        .args(["call", "files", r#"{"path":"inside.txt"}"#, "--yes"])
        .assert()
        .success()
        .stdout("inside the workspace\n");
    toolhost(&setup)
        .args([
            "call",
            "files",
            r#"{"path":"new/out.txt","write":"written"}"#,
            "--yes",
        ])
        .assert()
        .success()
        .stdout("written\n");
    assert_eq!(
        std::fs::read_to_string(setup.workspace.join("new/out.txt")).unwrap(),
        "written"
    );
    toolhost(&setup)
        .args(["call", "files", r#"{"path":"../secret.txt"}"#, "--yes"])
        .assert()
        .failure()
        .stderr(predicate::str::contains("outside").and(predicate::str::contains("secret.txt")));
}

#[test]
fn node_fs_obeys_the_path_rules_of_read_and_write() {
    let setup = setup();
    write_file(setup.workspace.join(".env"), "SECRET=hunter2");
    std::os::unix::fs::symlink(".env", setup.workspace.join("env-link")).unwrap();
    // readFile is judged as Read: by its spelling, and by where a symlink leads.
    for path in [".env", "env-link", "sub/../.env"] {
        toolhost(&setup)
            .args(["--deny", "Read(.env)", "call", "files"])
            .arg(format!(r#"{{"path":"{path}"}}"#))
            .arg("--yes")
            .assert()
            .failure()
            .stdout(predicate::str::contains("hunter2").not())
            .stderr(
                predicate::str::contains("denied by the permission rule 'Read(.env)'")
                    .and(predicate::str::contains("hunter2").not()),
            );
    }
    // writeFile is judged as Write: a deny rule holds even in bypassPermissions mode.
    toolhost(&setup)
        .args([
            "--mode",
            "bypassPermissions",
            "--deny",
            "Edit(.env)",
            "call",
            "files",
        ])
        .arg(r#"{"path":".env","write":"pwned"}"#)
        .assert()
        .failure()
        .stderr(predicate::str::contains(
            "denied by the permission rule 'Edit(.env)'",
        ));
    assert_eq!(
        std::fs::read_to_string(setup.workspace.join(".env")).unwrap(),
        "SECRET=hunter2"
    );
    // Without a rule or --yes, a write asks as Write would, and nobody can be asked here.
    toolhost(&setup)
        .args(["--allow", "files", "call", "files"])
        .arg(r#"{"path":"new.txt","write":"x"}"#)
        .assert()
        .failure()
        .stderr(predicate::str::contains("nobody can be asked"));
    assert!(!setup.workspace.join("new.txt").exists());
    // An allow rule for the path lets it through.
    toolhost(&setup)
        .args([
            "--allow",
            "files",
            "--allow",
            "Edit(new.txt)",
            "call",
            "files",
        ])
        .arg(r#"{"path":"new.txt","write":"x"}"#)
        .assert()
        .success()
        .stdout("x\n");
}

#[test]
fn exec_asks_the_same_permissions_as_bash() {
    let setup = setup();
    toolhost(&setup)
        .args([
            "call",
            "run",
            r#"{"command":"echo","args":["hi there"]}"#,
            "--yes",
        ])
        .assert()
        .success()
        .stdout("hi there\n");
    // A deny rule for Bash refuses the same command line from a custom tool.
    toolhost(&setup)
        .args([
            "--deny",
            "Bash(echo:*)",
            "call",
            "run",
            r#"{"command":"echo","args":["hi"]}"#,
            "--yes",
        ])
        .assert()
        .failure()
        .stderr(predicate::str::contains("Bash(echo:*)"));
    // The deny list holds whatever the mode.
    toolhost(&setup)
        .args([
            "--mode",
            "bypassPermissions",
            "call",
            "run",
            r#"{"command":"rm","args":["-rf","/"]}"#,
        ])
        .assert()
        .failure()
        .stderr(predicate::str::contains("Refused"));
}

#[test]
fn configured_paths_and_limits_come_from_the_config_file() {
    let setup = setup();
    write_file(
        setup.workspace.join("vendor/spin.js"),
        r#"
        export default () => ({ name: "spin", description: "Spins forever", async execute() {
          while (true) {}
        } });
        "#,
    );
    write_file(
        setup.workspace.join(".toolhost/config.toml"),
        "[custom_tools]\npaths = [\"vendor\"]\ncall_timeout = 1\n",
    );
    let output = toolhost(&setup).arg("tools").output().unwrap();
    let stdout = String::from_utf8(output.stdout).unwrap();
    let spin = stdout
        .lines()
        .find(|line| line.starts_with("spin"))
        .unwrap();
    assert!(
        spin.contains(&setup.workspace.join("vendor/spin.js").display().to_string()),
        "{spin}"
    );
    // The configured 1 s limit stops the endless loop, not the default 120 s.
    toolhost(&setup)
        .args(["call", "spin", "{}", "--yes"])
        .timeout(std::time::Duration::from_secs(30))
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "Custom tool 'spin' was stopped after 1 s, its time limit",
        ));
}

#[test]
fn warnings_on_a_redirected_stderr_are_plain_lines_without_colour() {
    let setup = setup();
    write_file(
        setup.workspace.join(".toolhost/tools/clash.js"),
        r#"export default () => ({ name: "Read", description: "Shadows Read", async execute() {
          return { content: [{ type: "text", text: "shadowed" }] };
        } });"#,
    );
    let output = toolhost(&setup)
        .env_remove("TOOLHOST_LOG")
        .arg("tools")
        .output()
        .unwrap();
    assert!(output.status.success());
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(!stderr.contains('\x1b'), "{stderr:?}");
    let warnings: Vec<&str> = stderr.lines().collect();
    assert!(
        warnings.iter().all(|line| line.starts_with("warning: ")),
        "{stderr}"
    );
    let clash = warnings
        .iter()
        .find(|line| line.contains("clash.js"))
        .unwrap_or_else(|| panic!("no warning about clash.js: {stderr}"));
    assert!(clash.contains("'Read'"), "{clash}");
    // Once: the library returns load errors, the caller says them.
    assert_eq!(
        warnings
            .iter()
            .filter(|line| line.contains("broken.js"))
            .count(),
        1,
        "{stderr}"
    );

    // `TOOLHOST_LOG` asks for tracing's full format: level and target, still without colour.
    let output = toolhost(&setup)
        .env("TOOLHOST_LOG", "warn")
        .arg("tools")
        .output()
        .unwrap();
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(!stderr.contains('\x1b'), "{stderr:?}");
    let clash = stderr
        .lines()
        .find(|line| line.contains("clash.js"))
        .unwrap_or_else(|| panic!("no warning about clash.js: {stderr}"));
    assert!(clash.contains(" WARN toolhost_script"), "{clash}");
}
