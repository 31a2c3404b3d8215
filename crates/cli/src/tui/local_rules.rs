//! "Allow always": the rule an approval proposed, appended to `allow` under `[permissions]`
//! in the workspace's `.toolhost/config.local.toml` (the personal, uncommitted layer), with
//! the rest of the file kept as it was (comments and order included).

use std::path::{Path, PathBuf};

use toml_edit::{Array, DocumentMut, Item, Table, Value};
use toolhost_core::permission::PermissionRule;

/// The file "allow always" writes to, in `workspace`.
pub fn local_config(workspace: &Path) -> PathBuf {
    workspace.join(".toolhost").join("config.local.toml")
}

/// Adds `rules` to the allow list of `path` (created when missing); rules already listed
/// are not added twice. What the file holds afterwards.
pub fn remember(path: &Path, rules: &[PermissionRule]) -> anyhow::Result<String> {
    let existing = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(error) => anyhow::bail!("cannot read {}: {error}", path.display()),
    };
    let mut document: DocumentMut = existing
        .parse()
        .map_err(|error| anyhow::anyhow!("{} is not valid TOML: {error}", path.display()))?;
    let permissions = document
        .entry("permissions")
        .or_insert_with(|| Item::Table(Table::new()))
        .as_table_like_mut()
        .ok_or_else(|| anyhow::anyhow!("[permissions] in {} is not a table", path.display()))?;
    let allow = permissions
        .entry("allow")
        .or_insert(Item::Value(Value::Array(Array::new())))
        .as_array_mut()
        .ok_or_else(|| anyhow::anyhow!("permissions.allow in {} is not a list", path.display()))?;
    for rule in rules {
        let text = rule.to_string();
        if !allow
            .iter()
            .any(|listed| listed.as_str() == Some(text.as_str()))
        {
            allow.push(text);
        }
    }
    let text = document.to_string();
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    // Written whole beside it, then renamed: the file is never half written.
    let temporary = path.with_extension("toml.tmp");
    std::fs::write(&temporary, &text)?;
    std::fs::rename(&temporary, path)?;
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rule_joins_the_allow_list_and_the_rest_of_the_file_stays() {
        let dir = tempfile::tempdir().unwrap();
        let path = local_config(dir.path());
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(
            &path,
            "# mine\n[agent]\nmax_iterations = 7\n\n[permissions]\nallow = [\"Read\"]\n",
        )
        .unwrap();
        let rule = PermissionRule::parse("Write(/notes.txt)").unwrap();
        remember(&path, std::slice::from_ref(&rule)).unwrap();
        let text = remember(&path, &[rule]).unwrap();
        assert_eq!(
            text,
            "# mine\n[agent]\nmax_iterations = 7\n\n[permissions]\nallow = [\"Read\", \"Write(/notes.txt)\"]\n"
        );
    }

    #[test]
    fn a_missing_file_is_created() {
        let dir = tempfile::tempdir().unwrap();
        let path = local_config(dir.path());
        let text = remember(
            &path,
            &[PermissionRule::parse("Bash(git status:*)").unwrap()],
        )
        .unwrap();
        assert_eq!(text, "[permissions]\nallow = [\"Bash(git status:*)\"]\n");
        assert_eq!(std::fs::read_to_string(path).unwrap(), text);
    }
}
