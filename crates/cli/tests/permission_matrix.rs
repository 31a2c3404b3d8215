//! Path-scoped permission rules end to end, through the real binary (`toolhost call` and
//! `toolhost serve`): every file tool family × {allow, ask, deny} × {matching path, other
//! path, through a symlink, `..` spelling, absolute spelling}, plus every pattern form, the
//! walks of Grep, Glob and ListDir past denied paths, and the commands of issue 12.
//!
//! Each case runs on a freshly planted tree and checks the decision (ran, asked, denied) and
//! that nothing leaked: a call that did not run shows no file content and changes no file; a
//! call that ran changed exactly the file it should. Every case runs before the test fails, and
//! the failure lists them all.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "permission_matrix/cases.rs"]
mod cases;
mod support;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use cases::{Asked, Case, Decision, Denied, FILES, LINKS, Ran, Rules, all_cases};
use serde_json::Value;
use toolhost_test_support::write_file;

/// `HOME` with the workspace inside it, as on a developer's machine (`~/project`).
struct Tree {
    _root: tempfile::TempDir,
    home: PathBuf,
    workspace: PathBuf,
}

impl Tree {
    fn new() -> Self {
        let root = tempfile::tempdir().unwrap();
        let home = root.path().canonicalize().unwrap().join("home");
        let workspace = home.join("project");
        std::fs::create_dir_all(workspace.join(".toolhost")).unwrap();
        // The matrix is about permissions: a serve session's read-before-write check (R47,
        // tested in read_before_write.rs) would refuse its Writes over planted files.
        write_file(
            home.join(".toolhost/config.toml"),
            "[tools]\nread_before_write = false\n",
        );
        Self {
            _root: root,
            home,
            workspace,
        }
    }

    fn configure(&self, rules: &Rules) {
        let file = self.workspace.join(".toolhost/config.toml");
        match &rules.config {
            Some(text) => std::fs::write(file, text).unwrap(),
            None => drop(std::fs::remove_file(file)),
        }
    }

    /// Plants [`FILES`] and [`LINKS`] again, removing whatever else the last case left.
    fn plant(&self) {
        for entry in std::fs::read_dir(&self.workspace).unwrap() {
            let path = entry.unwrap().path();
            if path.file_name() == Some(".toolhost".as_ref()) {
                continue;
            }
            if path.is_symlink() || !path.is_dir() {
                std::fs::remove_file(path).unwrap();
            } else {
                std::fs::remove_dir_all(path).unwrap();
            }
        }
        for (path, content) in FILES {
            write_file(self.workspace.join(path), content);
        }
        for (link, target) in LINKS {
            std::os::unix::fs::symlink(target, self.workspace.join(link)).unwrap();
        }
    }

    fn snapshot(&self) -> BTreeMap<String, Node> {
        let mut nodes = BTreeMap::new();
        snapshot_into(&self.workspace, &self.workspace, &mut nodes);
        nodes
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Node {
    Dir,
    File(Vec<u8>),
    Link(PathBuf),
}

fn snapshot_into(root: &Path, dir: &Path, nodes: &mut BTreeMap<String, Node>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let relative = path.strip_prefix(root).unwrap().display().to_string();
        if relative == ".toolhost" {
            continue;
        }
        let kind = std::fs::symlink_metadata(&path).unwrap().file_type();
        if kind.is_symlink() {
            nodes.insert(relative, Node::Link(std::fs::read_link(&path).unwrap()));
        } else if kind.is_dir() {
            nodes.insert(relative, Node::Dir);
            snapshot_into(root, &path, nodes);
        } else {
            nodes.insert(relative, Node::File(std::fs::read(&path).unwrap()));
        }
    }
}

/// What a call printed (stdout and stderr, or the result's text) and whether it failed.
struct Output {
    is_error: bool,
    text: String,
}

fn decision(output: &Output) -> Result<Decision, String> {
    if !output.is_error {
        Ok(Ran)
    } else if output.text.contains("denied by the permission rule") {
        Ok(Denied)
    } else if output.text.contains("nobody can be asked") {
        Ok(Asked)
    } else {
        Err(format!("failed otherwise: {}", output.text.trim()))
    }
}

/// The problems of one case, empty when it behaved.
fn check(
    case: &Case,
    before: &BTreeMap<String, Node>,
    after: &BTreeMap<String, Node>,
    output: &Output,
) -> Vec<String> {
    let mut problems = Vec::new();
    let decision = match decision(output) {
        Ok(decision) => decision,
        Err(problem) => return vec![problem],
    };
    if !case.expect.contains(&decision) {
        problems.push(format!("{decision:?}, expected {:?}", case.expect));
    }
    for text in &case.forbids {
        if output.text.contains(text.as_str()) {
            problems.push(format!("the output shows {text:?}"));
        }
    }
    let mut expected = before.clone();
    if decision == Ran {
        if let Some(shows) = &case.shows
            && !output.text.contains(shows.as_str())
        {
            problems.push(format!("the output does not show {shows:?}"));
        }
        if let Some((path, content)) = &case.writes {
            expected.insert(path.clone(), Node::File(content.clone().into_bytes()));
        }
    } else if output.text.contains("hello ") {
        problems.push("a call that did not run shows file content".to_owned());
    }
    if *after != expected {
        let changed: BTreeSet<&String> = expected
            .keys()
            .chain(after.keys())
            .filter(|path| expected.get(*path) != after.get(*path))
            .collect();
        problems.push(format!("files changed unexpectedly: {changed:?}"));
    }
    if !problems.is_empty() {
        problems.push(format!("output: {}", output.text.trim()));
    }
    problems
}

/// The cases with equal rules, by index, in order of first appearance (the same for every
/// tree).
fn groups(cases: &[Case]) -> Vec<Vec<usize>> {
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for (index, case) in cases.iter().enumerate() {
        match groups
            .iter_mut()
            .find(|group| cases[group[0]].rules == case.rules)
        {
            Some(group) => group.push(index),
            None => groups.push(vec![index]),
        }
    }
    groups
}

/// Runs every case, one group of equal rules at a time, spread over a few workers with a tree
/// each (the binary's start-up is most of the time, so a few processes side by side save
/// some); `run` gives the problems of each case of a group. Fails listing every case that
/// had problems.
fn run_spread(via: &str, run: impl Fn(&Tree, &[&Case]) -> Vec<Vec<String>> + Sync) {
    let workers = std::thread::available_parallelism()
        .map_or(2, usize::from)
        .clamp(2, 4);
    let mut results: Vec<(usize, String, Vec<String>)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..workers)
            .map(|worker| {
                let run = &run;
                scope.spawn(move || {
                    let tree = Tree::new();
                    let cases = all_cases(&tree.workspace);
                    let mut results = Vec::new();
                    for group in groups(&cases).into_iter().skip(worker).step_by(workers) {
                        let members: Vec<&Case> =
                            group.iter().map(|&index| &cases[index]).collect();
                        for (&index, problems) in group.iter().zip(run(&tree, &members)) {
                            results.push((index, cases[index].name.clone(), problems));
                        }
                    }
                    results
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|handle| handle.join().unwrap())
            .collect()
    });
    results.sort_by_key(|(index, ..)| *index);
    let total = results.len();
    let failures: Vec<String> = results
        .into_iter()
        .filter(|(.., problems)| !problems.is_empty())
        .map(|(_, name, problems)| format!("{name}:\n  {}", problems.join("\n  ")))
        .collect();
    assert!(
        failures.is_empty(),
        "{} of {total} cases failed through {via}:\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

#[test]
fn call_decides_every_case_and_leaks_nothing() {
    run_spread("`toolhost call`", |tree, cases| {
        cases
            .iter()
            .map(|case| {
                tree.configure(&case.rules);
                tree.plant();
                let before = tree.snapshot();
                let output = support::toolhost_with_home(&tree.workspace, &tree.home)
                    .args(&case.rules.flags)
                    .args(["call", case.tool, &case.args.to_string()])
                    .output()
                    .unwrap();
                let code = output.status.code();
                let output = Output {
                    is_error: code != Some(0),
                    text: String::from_utf8_lossy(&output.stdout).into_owned()
                        + &String::from_utf8_lossy(&output.stderr),
                };
                let mut problems = check(case, &before, &tree.snapshot(), &output);
                if !matches!(code, Some(0 | 1)) {
                    problems.insert(0, format!("exit status {code:?}"));
                }
                problems
            })
            .collect()
    });
}

#[test]
fn serve_decides_every_case_and_leaks_nothing() {
    run_spread("`toolhost serve`", |tree, cases| {
        let rules = &cases[0].rules;
        tree.configure(rules);
        tree.plant();
        let flags: Vec<&str> = rules.flags.iter().map(String::as_str).collect();
        let mut server =
            support::ServeProcess::start_with_home(&tree.workspace, &tree.home, &flags);
        if let Err(status) = server.try_initialize() {
            let problem = format!("the server exited ({status}) before it answered initialize");
            return vec![vec![problem]; cases.len()];
        }
        (1..)
            .zip(cases)
            .map(|(id, case)| {
                tree.plant();
                let before = tree.snapshot();
                let result = server.call(id, case.tool, case.args.clone());
                let text = result["content"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|block| block["text"].as_str())
                    .collect::<Vec<_>>()
                    .join("\n");
                let output = Output {
                    is_error: result["isError"] == true,
                    text,
                };
                check(case, &before, &tree.snapshot(), &output)
            })
            .collect()
    });
}

#[test]
fn the_audit_trail_names_the_rule_and_the_subject_of_a_denied_read() {
    let tree = Tree::new();
    tree.plant();
    tree.configure(&Rules::config(
        "deny = [\"Read(secret/**)\"]\naudit_log = \"audit.jsonl\"",
        &[],
    ));
    let output = support::toolhost_with_home(&tree.workspace, &tree.home)
        .args(["call", "Read", r#"{"path": "secret/key.txt"}"#])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&output.stdout).into_owned()
        + &String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{text}");
    assert!(!text.contains("hunter2"), "{text}");
    let log = std::fs::read_to_string(tree.workspace.join("audit.jsonl")).unwrap();
    let entries: Vec<Value> = log
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let [entry] = &entries[..] else {
        panic!("one entry expected: {log}");
    };
    assert_eq!(entry["tool"], "Read", "{log}");
    assert_eq!(entry["decision"], "deny", "{log}");
    assert_eq!(entry["by"]["kind"], "rules", "{log}");
    assert_eq!(entry["by"]["list"], "deny", "{log}");
    assert_eq!(entry["by"]["rules"][0]["rule"], "Read(secret/**)", "{log}");
    let config = tree.workspace.join(".toolhost/config.toml");
    assert_eq!(
        entry["by"]["rules"][0]["origin"],
        format!("{}:2", config.display()),
        "{log}"
    );
    let subject = entry
        .get("subject")
        .unwrap_or_else(|| panic!("no subject: {log}"));
    assert!(subject.to_string().contains("secret/key.txt"), "{log}");
}
