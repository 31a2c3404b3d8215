//! An editor's view of the files, for a session an editor drives (`toolhost acp` with a
//! client that offers `fs/read_text_file` and `fs/write_text_file`): Read sees its buffers,
//! unsaved changes included, and Write lands in them. Paths are resolved and judged by the
//! workspace and the permission rules first, exactly as for the disk; only the bytes come from
//! (or go to) the editor. A session without one reads and writes the disk.

use std::path::Path;
use std::sync::{Arc, PoisonError, RwLock};

use toolhost_core::ToolContext;

/// Reads and writes text files through an editor.
#[async_trait::async_trait]
pub trait EditorFiles: Send + Sync {
    /// The whole text of `path` as the editor has it; `Err` says why not.
    async fn read_text(&self, path: &Path) -> Result<String, String>;
    /// Replaces the whole text of `path` in the editor (creating the file); `Err` says why
    /// not.
    async fn write_text(&self, path: &Path, text: &str) -> Result<(), String>;
}

/// The editor of a session, kept in its [`toolhost_core::SessionState`]: set by the face that
/// runs the session, read by Read and Write.
#[derive(Default)]
pub struct SessionEditor(RwLock<Option<Arc<dyn EditorFiles>>>);

impl SessionEditor {
    /// From now on the session's files go through `editor`.
    pub fn set(&self, editor: Arc<dyn EditorFiles>) {
        *self.0.write().unwrap_or_else(PoisonError::into_inner) = Some(editor);
    }

    /// The editor of the session `ctx` belongs to, if it has one.
    pub fn of(ctx: &ToolContext) -> Option<Arc<dyn EditorFiles>> {
        ctx.session()
            .state
            .get_or_default::<SessionEditor>()
            .0
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}
