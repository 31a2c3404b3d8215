//! What a server sends on its own (progress of running calls, `tools/list_changed`) and what
//! toolhost keeps of a stdio server's stderr for failure messages.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, PoisonError};

use rmcp::ClientHandler;
use rmcp::RoleClient;
use rmcp::model::{ClientCapabilities, ClientConfig, Implementation, ProgressNotificationParam};
use rmcp::service::NotificationContext;
use tokio::sync::Notify;
use toolhost_core::{ContentBlock, ToolContext, ToolUpdate};

/// How many lines of a stdio server's stderr are kept for failure messages.
pub const STDERR_TAIL_LINES: usize = 20;

/// What the server sends on its own: progress of running calls, and `tools/list_changed`.
#[derive(Clone)]
pub(crate) struct ClientEvents {
    pub(super) progress: Arc<Mutex<HashMap<String, ToolContext>>>,
    pub(crate) tools_changed: Arc<Notify>,
}

impl ClientHandler for ClientEvents {
    fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) -> impl Future<Output = ()> + Send + '_ {
        let key = token_key(&params.progress_token);
        let progress = self.progress.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(ctx) = progress.get(&key) {
            ctx.on_update(ToolUpdate {
                content: params.message.map(ContentBlock::text).into_iter().collect(),
                details: None,
                progress: Some(params.progress),
                total: params.total,
            });
        }
        std::future::ready(())
    }

    fn on_tool_list_changed(
        &self,
        _context: NotificationContext<RoleClient>,
    ) -> impl Future<Output = ()> + Send + '_ {
        self.tools_changed.notify_one();
        std::future::ready(())
    }

    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("toolhost", env!("CARGO_PKG_VERSION")),
        )
    }
}

pub(super) fn token_key(token: &impl serde::Serialize) -> String {
    serde_json::to_string(token).unwrap_or_default()
}

/// Removes a call's progress routing when the call ends, however it ends.
pub(super) struct ProgressRoute<'a> {
    pub(super) progress: &'a Mutex<HashMap<String, ToolContext>>,
    pub(super) key: String,
}

impl Drop for ProgressRoute<'_> {
    fn drop(&mut self) {
        self.progress
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&self.key);
    }
}

/// What a server said last, for the message of a call that fails: the last lines a stdio
/// server wrote on stderr, and why toolhost broke its connection (an SSE stream that sent an
/// event over the size limit), which a call waiting on that connection cannot see otherwise.
#[derive(Default)]
pub(crate) struct LastWords {
    stderr: Mutex<VecDeque<String>>,
    broken: Mutex<Option<String>>,
}

impl LastWords {
    pub(super) fn push(&self, line: String) {
        let mut lines = self.stderr.lock().unwrap_or_else(PoisonError::into_inner);
        if lines.len() == STDERR_TAIL_LINES {
            lines.pop_front();
        }
        lines.push_back(line);
    }

    /// Records why toolhost broke the connection.
    pub(super) fn connection_broke(&self, reason: String) {
        *self.broken.lock().unwrap_or_else(PoisonError::into_inner) = Some(reason);
    }

    /// Forgets the last connection's break, when a new connection is made.
    pub(super) fn forget_break(&self) {
        *self.broken.lock().unwrap_or_else(PoisonError::into_inner) = None;
    }

    /// `"; <why the connection broke>"` and `"; its stderr ended with:\n..."`, each when known.
    pub(crate) fn describe(&self) -> String {
        let mut text = String::new();
        if let Some(reason) = &*self.broken.lock().unwrap_or_else(PoisonError::into_inner) {
            text.push_str("; ");
            text.push_str(reason);
        }
        let lines = self.stderr.lock().unwrap_or_else(PoisonError::into_inner);
        if !lines.is_empty() {
            let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
            text.push_str("; its stderr ended with:\n");
            text.push_str(&lines.join("\n"));
        }
        text
    }
}
