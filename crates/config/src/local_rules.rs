//! "Allow always" (and an editor's "reject always"): the rule an approval proposed, appended
//! to `allow` (or `deny`) under `[permissions]` in the workspace's `.toolhost/config.local.toml`
//! (the personal, uncommitted layer), with the rest of the file kept as it was (comments and
//! order included).

use std::path::{Path, PathBuf};

use toml_edit::{Array, DocumentMut, Item, Table, Value};
use toolhost_core::permission::{PermissionRule, RuleList};

/// Why the rules could not be written down.
#[derive(Debug, thiserror::Error)]
pub enum LocalRulesError {
    /// The file could not be read or written.
    #[error("cannot write {}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The file is not TOML, or its `[permissions]` is not of the shape rules go in.
    #[error("{}: {problem}", path.display())]
    Shape {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        problem: String,
    },
}

/// The file "allow always" writes to, in `workspace`.
pub fn local_config(workspace: &Path) -> PathBuf {
    workspace.join(".toolhost").join("config.local.toml")
}

/// Adds `rules` to the `list` (allow or deny) of `path` (created when missing); rules already
/// listed are not added twice. What the file holds afterwards.
pub fn remember(
    path: &Path,
    list: RuleList,
    rules: &[PermissionRule],
) -> Result<String, LocalRulesError> {
    let io = |source| LocalRulesError::Io {
        path: path.to_path_buf(),
        source,
    };
    let shape = |problem: String| LocalRulesError::Shape {
        path: path.to_path_buf(),
        problem,
    };
    let existing = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(error) => return Err(io(error)),
    };
    let mut document: DocumentMut = existing
        .parse()
        .map_err(|error| shape(format!("not valid TOML: {error}")))?;
    let permissions = document
        .entry("permissions")
        .or_insert_with(|| Item::Table(Table::new()))
        .as_table_like_mut()
        .ok_or_else(|| shape("[permissions] is not a table".to_owned()))?;
    let name = list.as_str();
    let listed = permissions
        .entry(name)
        .or_insert(Item::Value(Value::Array(Array::new())))
        .as_array_mut()
        .ok_or_else(|| shape(format!("permissions.{name} is not a list")))?;
    for rule in rules {
        let text = rule.to_string();
        if !listed
            .iter()
            .any(|entry| entry.as_str() == Some(text.as_str()))
        {
            listed.push(text);
        }
    }
    let text = document.to_string();
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(io)?;
    }
    // Written whole beside it, then renamed: the file is never half written.
    let temporary = path.with_extension("toml.tmp");
    std::fs::write(&temporary, &text).map_err(io)?;
    std::fs::rename(&temporary, path).map_err(io)?;
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
        remember(&path, RuleList::Allow, std::slice::from_ref(&rule)).unwrap();
        let text = remember(&path, RuleList::Allow, &[rule]).unwrap();
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
            RuleList::Allow,
            &[PermissionRule::parse("Bash(git status:*)").unwrap()],
        )
        .unwrap();
        assert_eq!(text, "[permissions]\nallow = [\"Bash(git status:*)\"]\n");
        assert_eq!(std::fs::read_to_string(path).unwrap(), text);
    }

    #[test]
    fn a_refusal_joins_the_deny_list() {
        let dir = tempfile::tempdir().unwrap();
        let path = local_config(dir.path());
        let rule = PermissionRule::parse("Bash(rm:*)").unwrap();
        let text = remember(&path, RuleList::Deny, &[rule]).unwrap();
        assert_eq!(text, "[permissions]\ndeny = [\"Bash(rm:*)\"]\n");
    }
}
