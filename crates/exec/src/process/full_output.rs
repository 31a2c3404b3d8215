//! The file that keeps a command's whole combined output, created only once the output
//! outgrows the capture cap: most commands print little, and a file created and removed on
//! every run is a cost every tool call would pay.

use std::path::PathBuf;

use tokio::fs::File;
use tokio::io::AsyncWriteExt;

/// Writes the whole output to `path` if, and only if, it grows past `cap` bytes.
pub(crate) struct FullOutputFile {
    path: PathBuf,
    cap: usize,
    state: State,
}

enum State {
    /// Not past the cap yet: the bytes so far, in memory.
    Pending(Vec<u8>),
    /// Past the cap: the file, holding everything so far.
    Open(File),
    /// The file could not be created or written; the run goes on without it.
    Failed,
}

impl FullOutputFile {
    pub(crate) fn new(path: PathBuf, cap: usize) -> Self {
        Self {
            path,
            cap,
            state: State::Pending(Vec::new()),
        }
    }

    /// Adds `bytes` to the output.
    pub(crate) async fn push(&mut self, bytes: &[u8]) {
        match &mut self.state {
            State::Pending(buffered) if buffered.len() + bytes.len() <= self.cap => {
                buffered.extend_from_slice(bytes);
            }
            State::Pending(buffered) => {
                let buffered = std::mem::take(buffered);
                self.state = match self.open_with(&buffered, bytes).await {
                    Ok(file) => State::Open(file),
                    Err(error) => {
                        tracing::warn!(path = %self.path.display(), %error, "could not write the full output file");
                        State::Failed
                    }
                };
            }
            State::Open(file) => {
                if let Err(error) = file.write_all(bytes).await {
                    tracing::warn!(path = %self.path.display(), %error, "stopped writing the full output file");
                    self.state = State::Failed;
                }
            }
            State::Failed => {}
        }
    }

    /// The file, when the output outgrew the cap and all of it was written.
    pub(crate) async fn finish(self) -> Option<PathBuf> {
        let State::Open(mut file) = self.state else {
            return None;
        };
        match file.flush().await {
            Ok(()) => Some(self.path),
            Err(error) => {
                tracing::warn!(path = %self.path.display(), %error, "could not finish the full output file");
                None
            }
        }
    }

    async fn open_with(&self, buffered: &[u8], bytes: &[u8]) -> std::io::Result<File> {
        let mut file = File::create(&self.path).await?;
        file.write_all(buffered).await?;
        file.write_all(bytes).await?;
        Ok(file)
    }
}
