//! Result handlers: extensions that rewrite a result after execution (R6).

use crate::content::ToolOutput;
use crate::pipeline::authorize::CallRequest;

/// Rewrites a tool's output after it ran: content, details and the error flag (R6).
///
/// Handlers run in the order they were added, on every call that reached execution
/// (successful, failed, panicked or cancelled), before truncation and the error hint.
#[async_trait::async_trait]
pub trait ResultHandler: Send + Sync {
    /// Inspects and may rewrite `output`.
    async fn handle(&self, request: CallRequest<'_>, output: &mut ToolOutput);
}
