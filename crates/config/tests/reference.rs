//! The configuration reference of the book (`docs/src/configuration.md`) lists every key a
//! configuration file may set, and only those: its tables are read back and compared with the
//! keys of the configuration's own structs (`toolhost_config::keys::config_keys`).

use std::collections::BTreeSet;
use std::path::Path;

use pretty_assertions::assert_eq;

/// The heading of the keys outside any table.
const TOP_LEVEL: &str = "## Top-level keys";

/// The reference's keys: each table row's first cell (`` `key` ``) under the tables its section
/// heading names (`` ## `[providers.NAME]` ``, or several `` `[[hooks.X]]` `` in one heading),
/// or alone under [`TOP_LEVEL`].
fn documented_keys(reference: &str) -> BTreeSet<String> {
    let mut tables: Vec<String> = Vec::new();
    let mut keys = BTreeSet::new();
    for line in reference.lines() {
        if line == TOP_LEVEL {
            tables = vec![String::new()];
        } else if line.starts_with("## ") {
            tables = line
                .split('`')
                .skip(1)
                .step_by(2)
                .filter(|cell| cell.starts_with('['))
                .map(|cell| cell.trim_matches(['[', ']']).to_owned())
                .collect();
        } else if let Some(row) = line.strip_prefix("| `") {
            let key = row.split('`').next().unwrap_or_default();
            // `direct_mcp_servers.NAME.*` introduces the rows that follow it.
            if key.ends_with(".*") {
                continue;
            }
            for table in &tables {
                keys.insert(if table.is_empty() {
                    key.to_owned()
                } else {
                    format!("{table}.{key}")
                });
            }
        }
    }
    keys
}

#[test]
fn the_configuration_reference_lists_every_key_and_no_other() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/src/configuration.md");
    let reference = std::fs::read_to_string(&path)
        .unwrap_or_else(|error| panic!("cannot read {}: {error}", path.display()));
    let documented = documented_keys(&reference);
    let actual: BTreeSet<String> = toolhost_config::keys::config_keys().into_iter().collect();
    let missing: Vec<_> = actual.difference(&documented).collect();
    let unknown: Vec<_> = documented.difference(&actual).collect();
    assert_eq!(
        (missing, unknown),
        (Vec::<&String>::new(), Vec::<&String>::new()),
        "docs/src/configuration.md and the configuration structs disagree: the first list is \
         keys a configuration file may set that the reference lacks (add a row under the \
         table's `## `[TABLE]`` heading, with its default and what it is), the second keys \
         the reference lists that no struct has"
    );
}

#[test]
fn a_section_heading_names_the_tables_of_its_rows() {
    let keys = documented_keys(
        "## Top-level keys\n| `store` | x |\n## `[[hooks.A]]`, `[[hooks.B]]`\n\n| key |\n|---|\n| `matcher` | x |\n## `[web]`\n| `timeout` | 30 |\n",
    );
    let expected: BTreeSet<String> = ["store", "hooks.A.matcher", "hooks.B.matcher", "web.timeout"]
        .map(str::to_owned)
        .into();
    assert_eq!(keys, expected);
}
