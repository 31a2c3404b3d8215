//! The README's crate table is the rule for which crate may depend on which: this test reads
//! the table and every workspace member's `Cargo.toml`, so a new dependency that breaks the
//! rule (or a crate with no row) fails here instead of drifting from the documentation.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// One row of the README's crate table.
struct Row {
    name: String,
    folder: PathBuf,
    allowed: BTreeSet<String>,
}

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The text between the first pair of backticks after `from`, and what follows it.
fn backticked(text: &str) -> Option<(&str, &str)> {
    let start = text.find('`')? + 1;
    let len = text[start..].find('`')?;
    Some((&text[start..start + len], &text[start + len + 1..]))
}

fn crate_table(readme: &str) -> Vec<Row> {
    let section = readme
        .split("\n## Crates\n")
        .nth(1)
        .expect("README.md has a '## Crates' section");
    let section = section.split("\n## ").next().unwrap_or(section);
    let mut rows: Vec<Row> = Vec::new();
    for line in section.lines().filter(|l| l.starts_with("| `toolhost")) {
        let cells: Vec<&str> = line.split(" | ").collect();
        assert!(cells.len() >= 3, "a crate row has too few cells: {line}");
        let (name, rest) = backticked(cells[0]).expect("a row names its crate in backticks");
        let (folder, _) = backticked(rest).expect("a row names its folder in backticks");
        let everything = || rows.iter().map(|r| r.name.clone()).collect::<BTreeSet<_>>();
        let allowed = match cells[2].trim() {
            "—" | "-" => BTreeSet::new(),
            "every library crate above" => everything(),
            "everything" | "anything" => BTreeSet::from(["*".to_owned()]),
            list => list
                .split(',')
                .map(|short| format!("toolhost-{}", short.trim()))
                .collect(),
        };
        rows.push(Row {
            name: name.to_owned(),
            folder: PathBuf::from(folder),
            allowed,
        });
    }
    rows
}

/// The workspace crates a manifest names under `[dependencies]` (not dev- or build-dependencies).
fn workspace_dependencies(manifest: &Path) -> (String, BTreeSet<String>) {
    let text = std::fs::read_to_string(manifest).unwrap();
    let doc: toml::Table = toml::from_str(&text).unwrap();
    let name = doc["package"]["name"].as_str().unwrap().to_owned();
    let deps = doc
        .get("dependencies")
        .and_then(|d| d.as_table())
        .map(|d| {
            d.keys()
                .filter(|k| k.starts_with("toolhost"))
                .cloned()
                .collect()
        })
        .unwrap_or_default();
    (name, deps)
}

fn workspace_members(root: &Path) -> Vec<PathBuf> {
    let mut members: Vec<PathBuf> = std::fs::read_dir(root.join("crates"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("Cargo.toml").is_file())
        .collect();
    members.push(root.join("examples/embed"));
    members.sort();
    members
}

#[test]
fn every_crate_depends_only_on_what_its_row_in_the_readme_allows() {
    let root = repo_root();
    let rows = crate_table(&std::fs::read_to_string(root.join("README.md")).unwrap());
    assert!(rows.len() >= 10, "the crate table has {} rows", rows.len());
    let mut broken = Vec::new();
    for member in workspace_members(&root) {
        let (name, deps) = workspace_dependencies(&member.join("Cargo.toml"));
        let Some(row) = rows.iter().find(|r| r.name == name) else {
            broken.push(format!("{name} has no row in README.md's crate table"));
            continue;
        };
        assert_eq!(
            root.join(&row.folder).canonicalize().unwrap(),
            member.canonicalize().unwrap(),
            "README.md gives {name} the folder {}",
            row.folder.display()
        );
        if row.allowed.contains("*") {
            continue;
        }
        for dep in deps.difference(&row.allowed) {
            broken.push(format!(
                "{name} depends on {dep}, which its row in README.md does not allow"
            ));
        }
    }
    assert!(broken.is_empty(), "{}", broken.join("\n"));
}

#[test]
fn the_table_reader_sees_a_forbidden_dependency() {
    let readme = "# x\n\n## Crates\n\n| crate | what | may depend on | why |\n|---|---|---|---|\n\
                  | `toolhost-core` (`crates/core`) | a | — | b |\n\
                  | `toolhost-tools` (`crates/tools`) | a | core | b |\n\
                  | `toolhost-agent` (`crates/agent`) | a | every library crate above | b |\n\n## Next\n";
    let rows = crate_table(readme);
    assert_eq!(rows.len(), 3);
    assert!(rows[0].allowed.is_empty());
    assert_eq!(
        rows[1].allowed,
        BTreeSet::from(["toolhost-core".to_owned()])
    );
    assert_eq!(
        rows[2].allowed,
        BTreeSet::from(["toolhost-core".to_owned(), "toolhost-tools".to_owned()])
    );
    assert!(!rows[1].allowed.contains("toolhost-agent"));
}
