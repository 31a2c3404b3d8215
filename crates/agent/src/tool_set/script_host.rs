//! What custom tools (`toolhost-script`) get from this program: the workspace as their file
//! system, and `exec` authorised by the same permission policy as Bash.

use std::sync::Arc;

use serde_json::json;
use toolhost_core::permission::PermissionPolicy;
use toolhost_core::{Authorization, Authorizer, CallRequest, SessionInfo, Tool};
use toolhost_script::{DirEntry, EntryKind, ExecGate, ExecRequest, FsError, ScriptFileSystem};
use toolhost_tools::fs::atomic_write;
use toolhost_tools::{Access, Workspace, WorkspaceError};

/// `node:fs/promises` on the workspace: every path resolved by [`Workspace::resolve`] (symlink
/// checks, `restrict_to_workspace`), writes atomic like the Write tool's.
pub struct WorkspaceFileSystem(pub Arc<Workspace>);

fn refused(error: WorkspaceError) -> FsError {
    FsError::new(error.to_string()).with_code("EACCES")
}

fn io_error(action: &str, path: &str, error: &std::io::Error) -> FsError {
    let code = match error.kind() {
        std::io::ErrorKind::NotFound => "ENOENT",
        std::io::ErrorKind::PermissionDenied => "EACCES",
        std::io::ErrorKind::IsADirectory => "EISDIR",
        std::io::ErrorKind::NotADirectory => "ENOTDIR",
        _ => "EIO",
    };
    FsError::new(format!("cannot {action} {path}: {error}")).with_code(code)
}

impl ScriptFileSystem for WorkspaceFileSystem {
    fn read(&self, path: &str) -> Result<Vec<u8>, FsError> {
        let resolved = self.0.resolve(path, Access::Read).map_err(refused)?;
        std::fs::read(resolved.as_path()).map_err(|error| io_error("read", path, &error))
    }

    fn write(&self, path: &str, content: &[u8]) -> Result<(), FsError> {
        let resolved = self.0.resolve(path, Access::Write).map_err(refused)?;
        atomic_write(&resolved, &[content])
            .map(|_| ())
            .map_err(|error| FsError::new(error.to_string()))
    }

    fn list(&self, path: &str) -> Result<Vec<DirEntry>, FsError> {
        let resolved = self.0.resolve(path, Access::Read).map_err(refused)?;
        let entries = std::fs::read_dir(resolved.as_path())
            .map_err(|error| io_error("list", path, &error))?;
        let mut listed: Vec<DirEntry> = entries
            .flatten()
            .map(|entry| {
                let kind = match entry.file_type() {
                    Ok(kind) if kind.is_symlink() => EntryKind::Symlink,
                    Ok(kind) if kind.is_dir() => EntryKind::Directory,
                    Ok(kind) if kind.is_file() => EntryKind::File,
                    _ => EntryKind::Other,
                };
                DirEntry {
                    name: entry.file_name().to_string_lossy().into_owned(),
                    kind,
                }
            })
            .collect();
        listed.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(listed)
    }
}

/// Asks the permission policy about a custom tool's `exec` exactly as about a Bash call with
/// the same command line: Bash rules, the mode, hooks, approvals and the audit trail apply.
pub struct PermissionExecGate {
    /// The session's policy.
    pub policy: Arc<PermissionPolicy>,
    /// The Bash tool, whose spec and permission subject the request borrows.
    pub bash: Arc<dyn Tool>,
}

#[async_trait::async_trait]
impl ExecGate for PermissionExecGate {
    async fn authorize(&self, request: &ExecRequest) -> Result<(), String> {
        let args = json!({ "command": request.command_line });
        let spec = self.bash.spec();
        let subject = self.bash.permission_subject(&args);
        let session = SessionInfo::default();
        let call_id = format!("exec from {}", request.module.display());
        let decision = self
            .policy
            .authorize(CallRequest {
                call_id: &call_id,
                spec: &spec,
                args: &args,
                session: &session,
                subject: &subject,
                tool: self.bash.as_ref(),
            })
            .await;
        match decision {
            Authorization::Allow => Ok(()),
            Authorization::AllowAmended(amendment) if amendment.args.as_ref().is_none_or(|a| a == &args) => Ok(()),
            Authorization::AllowAmended(_) => Err(
                "a PreToolUse hook rewrote this command; a custom tool's exec runs only the command it asked for".to_owned(),
            ),
            Authorization::Deny { reason } => Err(reason),
        }
    }
}
