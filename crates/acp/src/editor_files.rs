//! Read and Write through the editor (`fs/read_text_file`, `fs/write_text_file`), for a
//! client that offers them: the model sees unsaved buffers and its edits land in the editor.
//! The tools resolve and judge every path first (workspace, permission rules), as always. A
//! client that offers only one of the two gets neither: reads and writes then agree on what a
//! file holds.

use std::path::Path;

use agent_client_protocol::Client;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    FileSystemCapabilities, ReadTextFileRequest, WriteTextFileRequest,
};
use toolhost_tools::fs::EditorFiles;

/// The editor of one session.
pub struct ClientFiles {
    connection: ConnectionTo<Client>,
    session_id: String,
}

impl ClientFiles {
    /// The files of session `session_id` through `connection`, when `fs` offers both
    /// methods.
    pub fn new(
        connection: ConnectionTo<Client>,
        session_id: &str,
        fs: &FileSystemCapabilities,
    ) -> Option<Self> {
        (fs.read_text_file && fs.write_text_file).then(|| Self {
            connection,
            session_id: session_id.to_owned(),
        })
    }
}

#[async_trait::async_trait]
impl EditorFiles for ClientFiles {
    async fn read_text(&self, path: &Path) -> Result<String, String> {
        self.connection
            .send_request(ReadTextFileRequest::new(
                self.session_id.clone(),
                path.to_path_buf(),
            ))
            .block_task()
            .await
            .map(|response| response.content)
            .map_err(|error| error.to_string())
    }

    async fn write_text(&self, path: &Path, text: &str) -> Result<(), String> {
        self.connection
            .send_request(WriteTextFileRequest::new(
                self.session_id.clone(),
                path.to_path_buf(),
                text.to_owned(),
            ))
            .block_task()
            .await
            .map(|_| ())
            .map_err(|error| error.to_string())
    }
}
