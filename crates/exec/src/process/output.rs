//! Reading a child's stdout and stderr as they arrive: streamed to the caller's callback,
//! captured head + tail, and optionally written whole to a file.

use std::path::PathBuf;
use std::sync::Arc;

use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::process::{ChildStderr, ChildStdout};
use tokio_util::sync::CancellationToken;

use super::capture::{CapturedOutput, HeadTailCapture};
use super::full_output::FullOutputFile;

/// Size of one read from a pipe, and so the largest chunk a callback receives.
const READ_CHUNK_BYTES: usize = 16 * 1024;

/// Which stream a chunk came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OutputStream {
    /// The child's standard output.
    Stdout,
    /// The child's standard error.
    Stderr,
}

/// A piece of output as it was read from the child. Chunks of one stream arrive in order;
/// between the two streams, in the order they were read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutputChunk {
    /// Which stream the bytes came from.
    pub stream: OutputStream,
    /// The raw bytes (not necessarily whole lines or whole UTF-8 characters).
    pub bytes: Vec<u8>,
}

/// The callback receiving output chunks while the process runs.
pub type OutputCallback = Arc<dyn Fn(OutputChunk) + Send + Sync>;

/// Where the output goes while it is read.
pub(crate) struct OutputSinks {
    pub(crate) cap: usize,
    pub(crate) callback: Option<OutputCallback>,
    pub(crate) full_output: Option<FullOutputFile>,
}

/// What the reader kept once both pipes closed (or reading was stopped).
#[derive(Default)]
pub(crate) struct CollectedOutput {
    pub(crate) stdout: CapturedOutput,
    pub(crate) stderr: CapturedOutput,
    pub(crate) combined: CapturedOutput,
    /// The full-output file, when the output outgrew the cap and the file was written whole.
    pub(crate) full_output_path: Option<PathBuf>,
}

pub(crate) async fn collect_output(
    mut stdout: Option<ChildStdout>,
    mut stderr: Option<ChildStderr>,
    sinks: OutputSinks,
    stop: CancellationToken,
) -> CollectedOutput {
    let mut stdout_capture = HeadTailCapture::new(sinks.cap);
    let mut stderr_capture = HeadTailCapture::new(sinks.cap);
    let mut combined_capture = HeadTailCapture::new(sinks.cap);
    let mut full_output = sinks.full_output;
    let mut stdout_buffer = vec![0_u8; READ_CHUNK_BYTES];
    let mut stderr_buffer = vec![0_u8; READ_CHUNK_BYTES];
    while stdout.is_some() || stderr.is_some() {
        let (stream, read) = tokio::select! {
            () = stop.cancelled() => break,
            read = read_some(&mut stdout, &mut stdout_buffer) => (OutputStream::Stdout, read),
            read = read_some(&mut stderr, &mut stderr_buffer) => (OutputStream::Stderr, read),
        };
        let bytes = match (stream, read) {
            (OutputStream::Stdout, Ok(read)) if read > 0 => &stdout_buffer[..read],
            (OutputStream::Stderr, Ok(read)) if read > 0 => &stderr_buffer[..read],
            // End of file or a broken pipe: this stream is done.
            (OutputStream::Stdout, _) => {
                stdout = None;
                continue;
            }
            (OutputStream::Stderr, _) => {
                stderr = None;
                continue;
            }
        };
        match stream {
            OutputStream::Stdout => stdout_capture.push(bytes),
            OutputStream::Stderr => stderr_capture.push(bytes),
        }
        combined_capture.push(bytes);
        if let Some(file) = &mut full_output {
            file.push(bytes).await;
        }
        if let Some(callback) = &sinks.callback {
            callback(OutputChunk {
                stream,
                bytes: bytes.to_vec(),
            });
        }
    }
    let full_output_path = match full_output {
        Some(file) => file.finish().await,
        None => None,
    };
    CollectedOutput {
        stdout: stdout_capture.finish(None),
        stderr: stderr_capture.finish(None),
        combined: combined_capture.finish(full_output_path.as_deref()),
        full_output_path,
    }
}

/// Reads from a stream that may already be closed; a closed stream never becomes ready.
async fn read_some<R: AsyncRead + Unpin>(
    stream: &mut Option<R>,
    buffer: &mut [u8],
) -> std::io::Result<usize> {
    match stream {
        Some(stream) => stream.read(buffer).await,
        None => std::future::pending().await,
    }
}
