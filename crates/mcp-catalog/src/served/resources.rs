//! The workspace's files, the skills' files and the stored sessions as MCP resources.
//!
//! - `file:///WORKSPACE/PATH`: a file of the workspace, listed as the Glob tool walks
//!   (`.gitignore` and hidden files left out) and read only when the permission rules let
//!   Read read it: a path a `deny` rule for Read names (or an `ask` rule: nobody can be asked
//!   about a resource) is neither listed nor readable, and nothing outside the workspace is
//!   (a symlink out of it included). Text is served as text, anything else as a blob.
//! - `skill://NAME/PATH`: a file of a skill's folder (`SKILL.md` and the rest), read-only as
//!   `read_skill` reads them.
//! - `session://ID`: one of this workspace's stored sessions, as the Markdown transcript of
//!   `toolhost sessions export --format markdown`.

use std::path::{Component, Path, PathBuf};

use base64::Engine as _;
use percent_encoding::{AsciiSet, CONTROLS, percent_decode_str, utf8_percent_encode};
use serde_json::json;
use toolhost_core::permission::Decision;
use toolhost_core::{Authorizer as _, SubjectPath};
use toolhost_mcp::rmcp::ErrorData;
use toolhost_mcp::rmcp::model::{ReadResourceResult, Resource, ResourceContents, ResourceTemplate};
use toolhost_session::views::{self, ExportFormat, ListScope};

use super::WorkspaceCatalog;

/// The most workspace files listed (and completed).
pub(super) const MAX_LISTED_FILES: usize = 5_000;

/// The largest file served.
const MAX_RESOURCE_BYTES: u64 = 8 * 1024 * 1024;

/// The most sessions listed.
const MAX_LISTED_SESSIONS: usize = 200;

/// What a path segment of a URI escapes.
const SEGMENT: &AsciiSet = &CONTROLS
    .add(b' ')
    .add(b'"')
    .add(b'#')
    .add(b'%')
    .add(b'<')
    .add(b'>')
    .add(b'?')
    .add(b'`')
    .add(b'{')
    .add(b'}');

/// Every resource: the workspace's files, the skills' files, the sessions.
pub(super) async fn list(catalog: &WorkspaceCatalog) -> Vec<Resource> {
    let mut resources: Vec<Resource> = workspace_files(catalog)
        .await
        .into_iter()
        .map(|relative| {
            Resource::new(file_uri(&catalog.workspace, &relative), relative.clone())
                .with_mime_type(mime_type(&relative))
        })
        .collect();
    for skill in catalog.found().skills.skills() {
        let (others, _) = skill.other_files();
        let files = std::iter::once(PathBuf::from("SKILL.md")).chain(others);
        for file in files {
            let relative = file.to_string_lossy().into_owned();
            resources.push(
                Resource::new(
                    skill_uri(&skill.name, &relative),
                    format!("{}/{relative}", skill.name),
                )
                .with_description(format!("a file of the skill {}", skill.name))
                .with_mime_type(mime_type(&relative)),
            );
        }
    }
    for (id, title) in sessions(catalog) {
        resources.push(
            Resource::new(format!("session://{id}"), format!("session {id}"))
                .with_title(title)
                .with_description("a stored session's transcript (read-only)")
                .with_mime_type("text/markdown"),
        );
    }
    resources
}

/// The three templates.
pub(super) fn templates(workspace: &Path) -> Vec<ResourceTemplate> {
    vec![
        ResourceTemplate::new(file_template(workspace), "workspace file")
            .with_description("a file of the workspace, as Read may read it"),
        ResourceTemplate::new("skill://{skill}/{+path}", "skill file")
            .with_description("a file of a skill's folder (SKILL.md and the files beside it)"),
        ResourceTemplate::new("session://{id}", "session transcript")
            .with_description("a stored session of this workspace, as Markdown (read-only)")
            .with_mime_type("text/markdown"),
    ]
}

/// The URI template of workspace files: the workspace's `file://` URI, then `{+path}`.
pub(super) fn file_template(workspace: &Path) -> String {
    format!(
        "{}/{{+path}}",
        file_uri(workspace, "").trim_end_matches('/')
    )
}

/// Reads the resource at `uri`.
pub(super) async fn read(
    catalog: &WorkspaceCatalog,
    uri: &str,
) -> Result<ReadResourceResult, ErrorData> {
    if let Some(rest) = uri.strip_prefix("session://") {
        return read_session(catalog, rest.trim_end_matches('/'), uri);
    }
    if let Some(rest) = uri.strip_prefix("skill://") {
        let (name, path) = rest.split_once('/').unwrap_or((rest, ""));
        let name = decode(name)?;
        let found = catalog.found();
        let Some(skill) = found.skills.get(&name) else {
            return Err(not_found(uri, &format!("there is no skill '{name}'")));
        };
        let path = decode(path)?;
        let file = inside(&skill.folder, &path)
            .ok_or_else(|| not_found(uri, "the path is not a file of the skill"))?;
        return read_file(&file, uri).await;
    }
    let Some(path) = uri.strip_prefix("file://") else {
        return Err(ErrorData::invalid_params(
            format!(
                "'{uri}' is not a resource of this server: its URIs start with file://, skill:// or session://"
            ),
            None,
        ));
    };
    let path = decode(path)?;
    let relative = Path::new(&path)
        .strip_prefix(&catalog.workspace)
        .map_err(|_| not_found(uri, "only files inside the workspace are served"))?
        .to_string_lossy()
        .into_owned();
    let file = inside(&catalog.workspace, &relative)
        .ok_or_else(|| not_found(uri, "the path leads out of the workspace or is not a file"))?;
    read_allowed(catalog, &relative).map_err(|reason| not_found(uri, &reason))?;
    read_file(&file, uri).await
}

/// The workspace's files (relative, `/`-separated) that Read may read, sorted, at most
/// [`MAX_LISTED_FILES`].
pub(super) async fn workspace_files(catalog: &WorkspaceCatalog) -> Vec<String> {
    let root = catalog.workspace.clone();
    let filter = catalog
        .registry
        .spec("Read")
        .and_then(|spec| catalog.policy.path_filter(&spec));
    let root_text = root.to_string_lossy().into_owned();
    tokio::task::spawn_blocking(move || {
        let mut files = Vec::new();
        let walk = ignore::WalkBuilder::new(&root).require_git(false).build();
        for entry in walk.filter_map(Result::ok) {
            if !entry.file_type().is_some_and(|kind| kind.is_file()) {
                continue;
            }
            let Ok(relative) = entry.path().strip_prefix(&root) else {
                continue;
            };
            let relative = relative.to_string_lossy().replace('\\', "/");
            let subject = SubjectPath::in_workspace(&root_text, &relative);
            if filter
                .as_ref()
                .is_some_and(|filter| !filter.allows(&subject))
            {
                continue;
            }
            files.push(relative);
            if files.len() >= MAX_LISTED_FILES {
                break;
            }
        }
        files.sort();
        files
    })
    .await
    .unwrap_or_default()
}

/// This workspace's sessions, newest first: id and title.
pub(super) fn sessions(catalog: &WorkspaceCatalog) -> Vec<(String, String)> {
    let Some(store) = catalog
        .sessions
        .as_deref()
        .and_then(|path| views::open_existing(path).ok().flatten())
    else {
        return Vec::new();
    };
    let scope = ListScope::Workspace(catalog.workspace.clone());
    views::list(&store, &catalog.config, &scope, MAX_LISTED_SESSIONS)
        .unwrap_or_default()
        .into_iter()
        .map(|summary| {
            let title = summary.title.unwrap_or_else(|| "(untitled)".to_owned());
            (summary.id, title)
        })
        .collect()
}

fn read_session(
    catalog: &WorkspaceCatalog,
    id: &str,
    uri: &str,
) -> Result<ReadResourceResult, ErrorData> {
    if !sessions(catalog).iter().any(|(known, _)| known == id) {
        return Err(not_found(uri, "no session of this workspace has that id"));
    }
    let store = catalog
        .sessions
        .as_deref()
        .and_then(|path| views::open_existing(path).ok().flatten())
        .ok_or_else(|| not_found(uri, "there is no session store"))?;
    let session = views::find(&store, id).map_err(|error| not_found(uri, &error.to_string()))?;
    let text = views::export(&store, &session, ExportFormat::Markdown)
        .map_err(|error| ErrorData::internal_error(error.to_string(), None))?;
    Ok(ReadResourceResult::new(vec![
        ResourceContents::text(text, uri).with_mime_type("text/markdown"),
    ]))
}

/// Whether the permission rules let Read read `relative` without asking anyone.
fn read_allowed(catalog: &WorkspaceCatalog, relative: &str) -> Result<(), String> {
    let Some(read) = catalog.registry.get("Read") else {
        return Err("the Read tool is not served, so no file is".to_owned());
    };
    let spec = read.spec();
    let subject = read.permission_subject(&json!({ "path": relative }));
    let evaluation = catalog.policy.evaluate(&spec, &subject, None);
    match evaluation.decision {
        Decision::Allow => Ok(()),
        Decision::Deny => Err(format!(
            "the permission rules refuse it: {}",
            evaluation.reason
        )),
        Decision::Ask => Err(format!(
            "reading it needs confirmation ({}), which a resource read cannot ask for: call Read instead",
            evaluation.reason
        )),
    }
}

async fn read_file(file: &Path, uri: &str) -> Result<ReadResourceResult, ErrorData> {
    let path = file.to_path_buf();
    let bytes = tokio::task::spawn_blocking(move || -> std::io::Result<Vec<u8>> {
        let length = std::fs::metadata(&path)?.len();
        if length > MAX_RESOURCE_BYTES {
            return Err(std::io::Error::other(format!(
                "it is {length} bytes, over the {MAX_RESOURCE_BYTES} served"
            )));
        }
        std::fs::read(&path)
    })
    .await
    .map_err(|error| ErrorData::internal_error(error.to_string(), None))?
    .map_err(|error| not_found(uri, &error.to_string()))?;
    let mime = mime_type(&file.to_string_lossy());
    let contents = match String::from_utf8(bytes) {
        Ok(text) => ResourceContents::text(text, uri).with_mime_type(mime),
        Err(error) => {
            let blob = base64::engine::general_purpose::STANDARD.encode(error.into_bytes());
            let mime = if mime.starts_with("text/") {
                "application/octet-stream".to_owned()
            } else {
                mime
            };
            ResourceContents::blob(blob, uri).with_mime_type(mime)
        }
    };
    Ok(ReadResourceResult::new(vec![contents]))
}

/// `root/relative` when it is a regular file that stays inside `root` (symlinks resolved).
fn inside(root: &Path, relative: &str) -> Option<PathBuf> {
    let relative = Path::new(relative);
    if relative
        .components()
        .any(|part| !matches!(part, Component::Normal(_)))
    {
        return None;
    }
    let root = root.canonicalize().ok()?;
    let file = root.join(relative).canonicalize().ok()?;
    (file.starts_with(&root) && file.is_file()).then_some(file)
}

/// The `file://` URI of `relative` under `workspace` (empty: the workspace itself).
pub(super) fn file_uri(workspace: &Path, relative: &str) -> String {
    let mut path = workspace.to_string_lossy().into_owned();
    if !relative.is_empty() {
        path = format!("{}/{relative}", path.trim_end_matches('/'));
    }
    let encoded: Vec<String> = path
        .split('/')
        .map(|segment| utf8_percent_encode(segment, SEGMENT).to_string())
        .collect();
    format!("file://{}", encoded.join("/"))
}

/// The `skill://` URI of a skill's file.
pub(super) fn skill_uri(skill: &str, relative: &str) -> String {
    let encoded: Vec<String> = relative
        .split('/')
        .map(|segment| utf8_percent_encode(segment, SEGMENT).to_string())
        .collect();
    format!(
        "skill://{}/{}",
        utf8_percent_encode(skill, SEGMENT),
        encoded.join("/")
    )
}

fn decode(text: &str) -> Result<String, ErrorData> {
    percent_decode_str(text)
        .decode_utf8()
        .map(|text| text.into_owned())
        .map_err(|_| ErrorData::invalid_params(format!("'{text}' is not UTF-8 once decoded"), None))
}

/// The spec's error for a resource there is none of (-32002), saying why.
fn not_found(uri: &str, why: &str) -> ErrorData {
    ErrorData::new(
        toolhost_mcp::rmcp::model::ErrorCode::RESOURCE_NOT_FOUND,
        format!("resource {uri} cannot be read: {why}"),
        Some(json!({ "uri": uri })),
    )
}

/// A MIME type from the file name's extension; `text/plain` when unknown (binary content is
/// served as a blob whatever this says).
fn mime_type(name: &str) -> String {
    let extension = name.rsplit_once('.').map_or("", |(_, extension)| extension);
    match extension.to_ascii_lowercase().as_str() {
        "md" | "markdown" => "text/markdown",
        "html" | "htm" => "text/html",
        "css" => "text/css",
        "csv" => "text/csv",
        "json" => "application/json",
        "js" | "mjs" | "cjs" => "text/javascript",
        "ts" => "text/x-typescript",
        "rs" => "text/x-rust",
        "py" => "text/x-python",
        "toml" => "application/toml",
        "yaml" | "yml" => "application/yaml",
        "xml" => "application/xml",
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "svg" => "image/svg+xml",
        "pdf" => "application/pdf",
        "zip" => "application/zip",
        _ => "text/plain",
    }
    .to_owned()
}
