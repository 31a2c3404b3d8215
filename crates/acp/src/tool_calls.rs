//! A tool call as an editor draws it: its kind (from the tool's permission family), a title,
//! the files it touches, and — for a call that edits a file — the change as a diff of the
//! file's text before and after.

use std::path::PathBuf;
use std::sync::Arc;

use agent_client_protocol::v1::schema::{
    Content, Diff, ToolCallContent, ToolCallLocation, ToolKind,
};
use serde_json::Value;
use toolhost_core::{PermissionFamily, PermissionSubject, ToolCallResult, ToolRegistry, ToolSpec};

/// The largest file whose text is kept to show a diff: a larger one is shown as its result
/// text only.
pub const MAX_DIFF_FILE_BYTES: u64 = 1024 * 1024;

/// The kind of a call of `spec`: its permission family says read, edit, execute or fetch; a
/// tool that searches (Grep, Glob, WebSearch, tool_search) is `search`; a tool of no family is
/// `other`.
pub fn kind_of(spec: &ToolSpec) -> ToolKind {
    let name = spec.name.to_ascii_lowercase();
    if name.contains("search") || name == "grep" || name == "glob" {
        return ToolKind::Search;
    }
    match spec.family {
        PermissionFamily::Read => ToolKind::Read,
        PermissionFamily::Edit => ToolKind::Edit,
        PermissionFamily::Shell => ToolKind::Execute,
        PermissionFamily::Network => ToolKind::Fetch,
        PermissionFamily::McpData | PermissionFamily::Other => ToolKind::Other,
    }
}

/// What one call is about, worked out once when it starts.
#[derive(Clone, Debug, Default)]
pub struct CallFacts {
    /// The editor's title: the tool and what it works on (`Read src/lib.rs`, `Bash: make`).
    pub title: String,
    /// Its kind.
    pub kind: Option<ToolKind>,
    /// The files it touches, absolute.
    pub paths: Vec<PathBuf>,
    /// The line it starts at, when its arguments name one (`offset`, `line`).
    pub line: Option<u32>,
    /// For a call that edits one file: that file's text before the call (`None` inside:
    /// the file did not exist).
    pub before: Option<Option<String>>,
}

impl CallFacts {
    /// The facts of a call of `name` with `args` (the tool's own view of its paths: the
    /// workspace resolved them).
    pub fn of(registry: &Arc<ToolRegistry>, name: &str, args: &Value) -> Self {
        let Some(tool) = registry.get(name) else {
            return Self {
                title: name.to_owned(),
                ..Self::default()
            };
        };
        let spec = tool.spec();
        let subject = tool.permission_subject(args);
        let (detail, paths) = match &subject {
            PermissionSubject::Paths(paths) => (
                paths.first().map(|path| path.display().to_owned()),
                paths
                    .iter()
                    .map(|path| PathBuf::from(&path.absolute))
                    .collect(),
            ),
            PermissionSubject::Shell(_) => (
                args.get("command")
                    .and_then(Value::as_str)
                    .map(|command| format!(": {command}")),
                Vec::new(),
            ),
            PermissionSubject::Domain(domain) => (Some(domain.clone()), Vec::new()),
            PermissionSubject::McpServer(server) => (Some(server.name.clone()), Vec::new()),
            PermissionSubject::None => (None, Vec::new()),
        };
        let title = match detail {
            Some(detail) if detail.starts_with(':') => format!("{}{detail}", spec.name),
            Some(detail) => format!("{} {detail}", spec.name),
            None => spec.name.clone(),
        };
        let line = ["offset", "line"]
            .iter()
            .find_map(|key| args.get(*key).and_then(Value::as_u64))
            .and_then(|line| u32::try_from(line).ok());
        let before =
            (spec.family == PermissionFamily::Edit && paths.len() == 1).then(|| text_of(&paths[0]));
        Self {
            title,
            kind: Some(kind_of(&spec)),
            paths,
            line,
            before,
        }
    }

    /// Where the editor can jump to.
    pub fn locations(&self) -> Vec<ToolCallLocation> {
        self.paths
            .iter()
            .map(|path| ToolCallLocation::new(path.clone()).line(self.line))
            .collect()
    }

    /// What the editor shows when the call has ended: the diff of an edited file, else the
    /// result's text.
    pub fn content_after(&self, result: &ToolCallResult, args: &Value) -> Vec<ToolCallContent> {
        let text = result.text();
        let text_block = |text: String| {
            ToolCallContent::Content(Content::new(
                agent_client_protocol::v1::schema::ContentBlock::from(text),
            ))
        };
        if !result.is_error
            && let (Some(before), [path]) = (&self.before, self.paths.as_slice())
        {
            // Write says what the file now holds; anything else is read back.
            let after = args
                .get("content")
                .and_then(Value::as_str)
                .map(str::to_owned)
                .or_else(|| text_of(path));
            if let Some(after) = after {
                return vec![
                    ToolCallContent::Diff(Diff::new(path.clone(), after).old_text(before.clone())),
                    text_block(text),
                ];
            }
        }
        if text.is_empty() {
            Vec::new()
        } else {
            vec![text_block(text)]
        }
    }
}

/// The text of the file at `path`, when it is a text file small enough to diff.
fn text_of(path: &std::path::Path) -> Option<String> {
    let metadata = std::fs::metadata(path).ok()?;
    if !metadata.is_file() || metadata.len() > MAX_DIFF_FILE_BYTES {
        return None;
    }
    std::fs::read_to_string(path).ok()
}
