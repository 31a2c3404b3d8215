//! Skills, the skill hub and slash commands through the real `toolhost` binary: each new tool
//! called with `toolhost call`, `toolhost skills …` against a hub on 127.0.0.1, and a user
//! skill outside the workspace readable (never writable) through the workspace's read-only
//! roots.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::collections::BTreeMap;
use std::io::Write as _;

use predicates::prelude::*;
use sha2::{Digest as _, Sha256};
use support::toolhost_with_home;
use toolhost_test_support::{HomeAndWorkspace, StaticServer, write_file};

const SKILL_MD: &str = "---\nname: pdf\ndescription: Fill in PDF forms.\n---\nUse ref.md.\n";

fn skill_md(name: &str, description: &str, body: &str) -> String {
    format!("---\nname: {name}\ndescription: {description}\n---\n{body}\n")
}

#[test]
fn list_skills_lists_project_and_user_skills() {
    let dirs = HomeAndWorkspace::new();
    write_file(
        dirs.workspace.join(".claude/skills/review/SKILL.md"),
        skill_md("review", "Review diffs.", "Look at the diff."),
    );
    write_file(
        dirs.home.join(".claude/skills/notes/SKILL.md"),
        skill_md("notes", "Take notes.", "Write them down."),
    );
    toolhost_with_home(&dirs.workspace, &dirs.home)
        .args(["call", "list_skills", "{}"])
        .assert()
        .success()
        .stdout(
            "2 skills (read one with read_skill):\n- review: Review diffs.\n- notes: Take \
             notes.\n",
        );
}

#[test]
fn a_user_skill_file_is_readable_with_read_and_never_writable() {
    let dirs = HomeAndWorkspace::new();
    let folder = dirs.home.join(".claude/skills/x");
    write_file(
        folder.join("SKILL.md"),
        skill_md("x", "The x skill.", "Read ref.md first."),
    );
    write_file(folder.join("ref.md"), "the reference\n");
    let reference = folder.join("ref.md");
    toolhost_with_home(&dirs.workspace, &dirs.home)
        .args(["call", "read_skill", r#"{"name": "x"}"#])
        .assert()
        .success()
        .stdout(predicate::str::contains("Read ref.md first."))
        .stdout(predicate::str::contains(format!(
            "- {}\n",
            reference.display()
        )));
    let path = serde_json::json!({ "path": reference }).to_string();
    toolhost_with_home(&dirs.workspace, &dirs.home)
        .args(["call", "Read", &path])
        .assert()
        .success()
        .stdout(predicate::str::contains("the reference"));
    let write = serde_json::json!({ "path": reference, "content": "changed" }).to_string();
    toolhost_with_home(&dirs.workspace, &dirs.home)
        .args(["call", "Write", &write, "--yes"])
        .assert()
        .failure()
        .stderr(predicate::str::contains(
            "which tools may read but not change",
        ));
    assert_eq!(
        std::fs::read_to_string(&reference).unwrap(),
        "the reference\n"
    );
    // A file beside the skills folder, not in a skill, stays out of reach.
    write_file(dirs.home.join(".claude/secret.txt"), "secret");
    let outside = serde_json::json!({ "path": dirs.home.join(".claude/secret.txt") }).to_string();
    toolhost_with_home(&dirs.workspace, &dirs.home)
        .args(["call", "Read", &outside])
        .assert()
        .failure();
}

#[test]
fn slash_command_expands_with_files_and_commands_through_bash_rules() {
    let dirs = HomeAndWorkspace::new();
    write_file(
        dirs.workspace.join(".claude/commands/git/review.md"),
        "---\ndescription: Review a PR\nargument-hint: [pr] [priority]\n---\n\
         Review #$1 ($2). Branch: !`echo main-branch`. Rules: @RULES.md\n",
    );
    write_file(dirs.workspace.join("RULES.md"), "No tabs.\n");
    let call = r#"{"command": "/git:review", "args": "42 \"very high\""}"#;
    toolhost_with_home(&dirs.workspace, &dirs.home)
        .args(["call", "slash_command", call, "--allow", "Bash(echo:*)"])
        .assert()
        .success()
        .stdout(
            "/git:review expands to:\n\nReview #42 (very high). Branch: main-branch. Rules: \
             <file path=\"RULES.md\">\n     1\tNo tabs.\n</file>\n\n",
        );
    // Without a rule Bash would ask; nobody can answer here, so the command is refused.
    toolhost_with_home(&dirs.workspace, &dirs.home)
        .args(["call", "slash_command", call])
        .assert()
        .failure()
        .stderr(predicate::str::contains(
            "the command `echo main-branch` did not run cleanly",
        ));
}

fn pdf_tar_gz() -> Vec<u8> {
    let mut tar = tar::Builder::new(Vec::new());
    for (name, data) in [
        ("pdf/SKILL.md", SKILL_MD.as_bytes()),
        ("pdf/ref.md", b"ref\n".as_slice()),
    ] {
        let mut header = tar::Header::new_gnu();
        header.set_size(data.len() as u64);
        header.set_mode(0o644);
        header.set_cksum();
        tar.append_data(&mut header, name, data).unwrap();
    }
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(&tar.into_inner().unwrap()).unwrap();
    gz.finish().unwrap()
}

/// A hub listing `pdf`, configured in the project.
fn hub(dirs: &HomeAndWorkspace) -> StaticServer {
    let archive = pdf_tar_gz();
    let hash: String = Sha256::digest(&archive)
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect();
    let index = serde_json::json!({"skills": [{
        "id": "pdf", "name": "pdf", "description": "Fill in PDF forms.", "version": "2.1.0",
        "url": "pdf.tar.gz", "sha256": hash,
    }]});
    let server = StaticServer::start(BTreeMap::from([
        ("index.json".to_owned(), serde_json::to_vec(&index).unwrap()),
        ("pdf.tar.gz".to_owned(), archive),
    ]));
    write_file(
        dirs.project_config(),
        format!("[skills]\nhubs = [\"{}\"]\n", server.url("index.json")),
    );
    server
}

#[test]
fn toolhost_skills_searches_installs_lists_and_removes() {
    let dirs = HomeAndWorkspace::new();
    let _hub = hub(&dirs);
    let toolhost = || toolhost_with_home(&dirs.workspace, &dirs.home);
    toolhost()
        .args(["skills", "search", "pdf"])
        .assert()
        .success()
        .stdout("pdf\t2.1.0\tpdf\tFill in PDF forms.\n");
    let folder = dirs.home.join(".toolhost/skills/pdf");
    toolhost()
        .args(["skills", "install", "pdf"])
        .assert()
        .success()
        .stdout(format!("Installed pdf 2.1.0 into {}\n", folder.display()));
    assert_eq!(
        std::fs::read_to_string(folder.join("SKILL.md")).unwrap(),
        SKILL_MD
    );
    toolhost()
        .args(["skills", "list"])
        .assert()
        .success()
        .stdout(format!(
            "pdf\thub\t{}\tFill in PDF forms.\n",
            folder.display()
        ));
    // The next session offers it.
    toolhost()
        .args(["call", "list_skills"])
        .assert()
        .success()
        .stdout(predicate::str::contains("- pdf: Fill in PDF forms."));
    toolhost()
        .args(["skills", "remove", "pdf"])
        .assert()
        .success();
    assert!(!folder.exists());
    toolhost()
        .args(["skills", "remove", "pdf"])
        .assert()
        .failure()
        .stderr(predicate::str::contains(
            "no skill 'pdf' was installed from a hub",
        ));
}

#[test]
fn skillhub_install_always_asks_and_installs_once_approved() {
    let dirs = HomeAndWorkspace::new();
    let _hub = hub(&dirs);
    let toolhost = || toolhost_with_home(&dirs.workspace, &dirs.home);
    let folder = dirs.home.join(".toolhost/skills/pdf");
    toolhost()
        .args(["call", "skillhub_install", r#"{"skillId": "pdf"}"#])
        .assert()
        .failure();
    assert!(!folder.exists(), "refused without approval");
    toolhost()
        .args(["call", "skillhub_search", r#"{"query": "forms"}"#, "--yes"])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "- pdf (pdf 2.1.0): Fill in PDF forms.",
        ));
    toolhost()
        .args(["call", "skillhub_install", r#"{"skillId": "pdf"}"#, "--yes"])
        .assert()
        .success()
        .stdout(predicate::str::contains("Installed the skill 'pdf' 2.1.0"));
    assert!(folder.join("SKILL.md").is_file());
    assert!(folder.join(".toolhost-hub.json").is_file());
}

#[test]
fn a_hub_that_is_not_a_url_is_a_config_error_naming_file_and_line() {
    let dirs = HomeAndWorkspace::new();
    write_file(
        dirs.project_config(),
        "[skills]\nhubs = [\"ftp://example.org/index.json\"]\n",
    );
    toolhost_with_home(&dirs.workspace, &dirs.home)
        .args(["skills", "list"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(format!(
            "invalid config file {}: line 2: skills.hubs entry 'ftp://example.org/index.json' \
             is not an http:// or https:// URL",
            dirs.project_config().display()
        )));
}

#[test]
fn slash_command_leaves_at_words_in_code_and_words_that_are_no_file_as_text() {
    let dirs = HomeAndWorkspace::new();
    write_file(
        dirs.workspace.join(".claude/commands/py.md"),
        "---\ndescription: Python help\nallowed-tools: Skill, Read\n---\n\
         Prefer `@dataclass`; see @STYLE.md and install @redocly/cli.\n\
         ```python\n@lru_cache(maxsize=None)\ndef f(): ...\n```\n",
    );
    write_file(dirs.workspace.join("STYLE.md"), "Short names.\n");
    toolhost_with_home(&dirs.workspace, &dirs.home)
        .args(["call", "slash_command", r#"{"command": "/py"}"#])
        .assert()
        .success()
        .stdout(
            "/py expands to:\n\nPrefer `@dataclass`; see <file path=\"STYLE.md\">\n     1\tShort \
             names.\n</file> and install @redocly/cli.\n```python\n@lru_cache(maxsize=None)\n\
             def f(): ...\n```\n\n\n(The command allows only these tools: read_skill, Read.)\n",
        )
        .stderr(predicate::str::contains("@redocly/cli is left as text"));
}

#[test]
fn a_skill_without_front_matter_is_named_by_its_folder_and_listed_on_one_line() {
    let dirs = HomeAndWorkspace::new();
    write_file(
        dirs.workspace.join(".claude/skills/changelog/SKILL.md"),
        "# Changelog\n\nWrites the changelog\nfrom the merged pull requests.\n\nMore text.\n",
    );
    write_file(
        dirs.workspace.join(".claude/skills/review/SKILL.md"),
        "---\nname: review\ndescription: |\n  Reviews diffs.\n  Use it before a merge.\n---\nBody.\n",
    );
    let output = toolhost_with_home(&dirs.workspace, &dirs.home)
        .args(["skills", "list"])
        .output()
        .unwrap();
    assert!(output.status.success());
    let stdout = String::from_utf8(output.stdout).unwrap();
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 2, "{stdout}");
    assert!(
        lines[0].starts_with("changelog\tproject\t")
            && lines[0].ends_with("\tWrites the changelog from the merged pull requests."),
        "{stdout}"
    );
    assert!(
        lines[1].ends_with("\tReviews diffs. Use it before a merge."),
        "{stdout}"
    );
}
