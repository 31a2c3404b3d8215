//! What custom tools (`toolhost-script`) get from this program: the workspace as their file
//! system (read, write, list, create folders, remove, rename), and `node:fs` and `exec` authorised by the same permission policy as the
//! Read, Write and Bash tools.

use std::io::Read as _;
use std::sync::Arc;

use serde_json::{Value, json};
use toolhost_core::permission::{Decision, PermissionPolicy};
use toolhost_core::{Authorization, Authorizer, CallRequest, SessionInfo, Tool};
use toolhost_script::{
    Callers, DirEntry, EntryKind, ExecGate, ExecRequest, FileAccess, FileGate, FileRequest,
    FsError, ScriptFileSystem,
};
use toolhost_tools::fs::atomic_write;
use toolhost_tools::{Access, ResolvedPath, Workspace, WorkspaceError};

/// `node:fs/promises` on the workspace: every path resolved by [`Workspace::resolve`] (symlink
/// checks, `restrict_to_workspace`) and opened through the [`toolhost_tools::ResolvedPath`]
/// methods that check the open handle again; writes atomic like the Write tool's.
///
/// Paths below the OS temp folder (outside the workspace and the folder holding it) resolve
/// in `temp`, a workspace of their own rooted there: extensions keep caches and scratch files
/// in it (see `temp_writes`).
pub struct WorkspaceFileSystem {
    /// The session's workspace.
    pub workspace: Arc<Workspace>,
    /// The OS temp folder as a workspace, when there is one.
    pub temp: Option<Arc<Workspace>>,
}

impl WorkspaceFileSystem {
    fn resolve(&self, path: &str, access: Access) -> Result<ResolvedPath, FsError> {
        match &self.temp {
            Some(temp) if super::temp_writes::in_temp_folder(path, self.workspace.root()) => {
                temp.resolve(path, access)
            }
            _ => self.workspace.resolve(path, access),
        }
        .map_err(refused)
    }
}

fn refused(error: WorkspaceError) -> FsError {
    let code = match &error {
        WorkspaceError::Io { source, .. } => match source.kind() {
            std::io::ErrorKind::NotFound => "ENOENT",
            std::io::ErrorKind::IsADirectory => "EISDIR",
            std::io::ErrorKind::NotADirectory => "ENOTDIR",
            std::io::ErrorKind::PermissionDenied => "EACCES",
            std::io::ErrorKind::AlreadyExists => "EEXIST",
            std::io::ErrorKind::DirectoryNotEmpty => "ENOTEMPTY",
            _ => "EIO",
        },
        _ => "EACCES",
    };
    FsError::new(error.to_string()).with_code(code)
}

impl ScriptFileSystem for WorkspaceFileSystem {
    fn read(&self, path: &str) -> Result<Vec<u8>, FsError> {
        let resolved = self.resolve(path, Access::Read)?;
        let mut bytes = Vec::new();
        resolved
            .open_file()
            .map_err(refused)?
            .read_to_end(&mut bytes)
            .map_err(|error| refused(WorkspaceError::io("read", &resolved, error)))?;
        Ok(bytes)
    }

    fn write(&self, path: &str, content: &[u8]) -> Result<(), FsError> {
        let resolved = self.resolve(path, Access::Write)?;
        atomic_write(&resolved, &[content])
            .map(|_| ())
            .map_err(refused)
    }

    fn list(&self, path: &str) -> Result<Vec<DirEntry>, FsError> {
        let resolved = self.resolve(path, Access::Read)?;
        let mut listed: Vec<DirEntry> = resolved
            .read_dir()
            .map_err(refused)?
            .into_iter()
            .map(|entry| DirEntry {
                name: entry.name.to_string_lossy().into_owned(),
                kind: match entry.kind {
                    toolhost_tools::EntryKind::File => EntryKind::File,
                    toolhost_tools::EntryKind::Directory => EntryKind::Directory,
                    toolhost_tools::EntryKind::Symlink => EntryKind::Symlink,
                    _ => EntryKind::Other,
                },
            })
            .collect();
        listed.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(listed)
    }

    fn create_dir(&self, path: &str, recursive: bool) -> Result<(), FsError> {
        let resolved = self.resolve(path, Access::Write)?;
        let made = if recursive {
            std::fs::create_dir_all(resolved.as_path())
        } else {
            std::fs::create_dir(resolved.as_path())
        };
        made.map_err(|error| refused(WorkspaceError::io("create the folder", &resolved, error)))
    }

    fn remove(&self, path: &str, recursive: bool) -> Result<(), FsError> {
        let resolved = self.resolve(path, Access::Write)?;
        if resolved.as_path() == self.workspace.root() {
            return Err(FsError::new("the workspace itself is never removed").with_code("EPERM"));
        }
        let io = |error| refused(WorkspaceError::io("remove", &resolved, error));
        // A symlink is removed itself, never what it points to.
        let metadata = std::fs::symlink_metadata(resolved.as_path()).map_err(io)?;
        let removed = match (metadata.is_dir(), recursive) {
            (true, true) => std::fs::remove_dir_all(resolved.as_path()),
            (true, false) => std::fs::remove_dir(resolved.as_path()),
            (false, _) => std::fs::remove_file(resolved.as_path()),
        };
        removed.map_err(io)
    }

    fn rename(&self, from: &str, to: &str) -> Result<(), FsError> {
        let source = self.resolve(from, Access::Write)?;
        let target = self.resolve(to, Access::Write)?;
        std::fs::rename(source.as_path(), target.as_path())
            .map_err(|error| refused(WorkspaceError::io("rename", &source, error)))
    }
}

/// Asks about a call of `tool` with `args` that a custom tool makes on its own behalf,
/// exactly as about the model calling `tool` with them: the tool's subject, rules, mode,
/// hooks, approvals and the audit trail apply. The deciders are the authorisers of the calls
/// the module is running (`callers`: a sub-agent's own, which may be stricter), each of which
/// must allow it; outside a call, `policy`. A hook may not rewrite such a call.
async fn authorize_as(
    policy: &Arc<PermissionPolicy>,
    callers: &Callers,
    tool: &dyn Tool,
    args: &Value,
    call_id: &str,
) -> Result<(), String> {
    if callers.is_empty() {
        return authorize_with(policy.as_ref(), tool, args, call_id).await;
    }
    for caller in callers.authorizers() {
        authorize_with(caller.as_ref(), tool, args, call_id).await?;
    }
    Ok(())
}

async fn authorize_with(
    authorizer: &dyn Authorizer,
    tool: &dyn Tool,
    args: &Value,
    call_id: &str,
) -> Result<(), String> {
    let spec = tool.spec();
    let subject = tool.permission_subject(args);
    let session = SessionInfo::default();
    let decision = authorizer
        .authorize(CallRequest {
            call_id,
            spec: &spec,
            args,
            session: &session,
            subject: &subject,
            subject_of: &|args: &Value| tool.permission_subject(args),
        })
        .await;
    match decision {
        Authorization::Allow => Ok(()),
        Authorization::AllowAmended(amendment)
            if amendment
                .args
                .as_ref()
                .is_none_or(|rewritten| rewritten == args) =>
        {
            Ok(())
        }
        Authorization::AllowAmended(_) => Err(format!(
            "a PreToolUse hook rewrote this {} call; a custom tool's own calls run only as asked",
            spec.name
        )),
        Authorization::Deny { reason } => Err(reason),
    }
}

/// Asks the permission policy about a custom tool's `exec` exactly as about a Bash call with
/// the same command line.
pub struct PermissionExecGate {
    /// The session's policy, for requests made outside a call (a tool's `onSession`).
    pub policy: Arc<PermissionPolicy>,
    /// The Bash tool, whose spec and permission subject the request borrows.
    pub bash: Arc<dyn Tool>,
}

#[async_trait::async_trait]
impl ExecGate for PermissionExecGate {
    async fn authorize(&self, request: &ExecRequest) -> Result<(), String> {
        let args = json!({ "command": request.command_line });
        let call_id = format!("exec from {}", request.module.display());
        authorize_as(
            &self.policy,
            &request.callers,
            self.bash.as_ref(),
            &args,
            &call_id,
        )
        .await
    }
}

/// Asks the permission policy about a custom tool's `node:fs/promises` call exactly as about
/// the built-in tool doing the same: reading a file as Read, listing a folder as ListDir,
/// writing a file as Write — same subjects (the path as spelled and as resolved), so a
/// `deny = ["Read(.env)"]` keeps a custom tool out of `.env` too.
pub struct PermissionFileGate {
    /// The session's policy, for requests made outside a call (a tool's `onSession`).
    pub policy: Arc<PermissionPolicy>,
    /// The Read tool.
    pub read: Arc<dyn Tool>,
    /// The ListDir tool.
    pub list: Arc<dyn Tool>,
    /// The Write tool.
    pub write: Arc<dyn Tool>,
    /// The workspace's root: writes inside it are never the temp folder's.
    pub workspace_root: std::path::PathBuf,
}

#[async_trait::async_trait]
impl FileGate for PermissionFileGate {
    async fn authorize(&self, request: &FileRequest) -> Result<(), String> {
        let (tool, action) = match request.access {
            FileAccess::Read => (&self.read, "readFile"),
            FileAccess::List => (&self.list, "readdir"),
            FileAccess::Write => (&self.write, "writeFile"),
        };
        let args = json!({ "path": request.path });
        if request.access == FileAccess::Write
            && super::temp_writes::in_temp_folder(&request.path, &self.workspace_root)
        {
            // A write into the temp folder is not asked about; the rules still decide.
            let evaluation =
                self.policy
                    .evaluate(&tool.spec(), &tool.permission_subject(&args), None);
            return match evaluation.decision {
                Decision::Deny => Err(evaluation.reason),
                Decision::Allow | Decision::Ask => Ok(()),
            };
        }
        let call_id = format!("{action} from {}", request.module.display());
        authorize_as(
            &self.policy,
            &request.callers,
            tool.as_ref(),
            &args,
            &call_id,
        )
        .await
    }
}
