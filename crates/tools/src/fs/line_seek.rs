//! Finding where line K of a large file starts without reading it into memory.
//!
//! The file is read in fixed chunks with positional reads, counting newlines with SIMD
//! (`bytecount`); the chunks of one round are counted on several threads at once, so the scan
//! runs faster than a single `memchr` pass such as `tail -n +K`. Memory stays at one chunk per
//! thread, whatever the file's size.

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt as _;

/// The size of the pieces a scan reads.
pub const SCAN_CHUNK_BYTES: usize = 2 << 20;

/// The threads one scan uses at most.
const MAX_SCAN_THREADS: usize = 8;

/// Where a line starts, or how many lines the file has when it has fewer.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum LineStart {
    /// The byte offset of the line's first byte.
    At(u64),
    /// The file ends before the line; it has this many lines.
    PastEnd(u64),
}

/// The byte offset where 1-based line `line` starts in `file` of `size` bytes.
pub(crate) fn find_line_start(file: &File, size: u64, line: u64) -> io::Result<LineStart> {
    let newlines_to_skip = line.saturating_sub(1);
    if newlines_to_skip == 0 {
        return Ok(if size == 0 {
            LineStart::PastEnd(0)
        } else {
            LineStart::At(0)
        });
    }
    let threads = std::thread::available_parallelism()
        .map_or(1, usize::from)
        .clamp(1, MAX_SCAN_THREADS);
    let mut buffers: Vec<Vec<u8>> = (0..threads).map(|_| vec![0; SCAN_CHUNK_BYTES]).collect();
    let mut seen = 0u64;
    let mut offset = 0u64;
    while offset < size {
        // One round: up to `threads` consecutive chunks, counted in parallel.
        let counts: Vec<io::Result<(usize, u64)>> = std::thread::scope(|scope| {
            let handles: Vec<_> = buffers
                .iter_mut()
                .enumerate()
                .map(|(index, buffer)| {
                    let start = offset + (index * SCAN_CHUNK_BYTES) as u64;
                    scope.spawn(move || -> io::Result<(usize, u64)> {
                        if start >= size {
                            return Ok((0, 0));
                        }
                        let filled = read_full_at(file, buffer, start)?;
                        Ok((filled, bytecount::count(&buffer[..filled], b'\n') as u64))
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|handle| {
                    handle
                        .join()
                        .unwrap_or_else(|_| Err(io::Error::other("a scan thread panicked")))
                })
                .collect()
        });
        for (index, count) in counts.into_iter().enumerate() {
            let (filled, newlines) = count?;
            if filled == 0 {
                break;
            }
            if seen + newlines >= newlines_to_skip {
                let wanted = usize::try_from(newlines_to_skip - seen).unwrap_or(usize::MAX);
                let chunk = &buffers[index][..filled];
                let position = memchr::memchr_iter(b'\n', chunk)
                    .nth(wanted - 1)
                    .map_or(filled, |position| position + 1);
                let start = offset + (index * SCAN_CHUNK_BYTES + position) as u64;
                return Ok(if start >= size {
                    LineStart::PastEnd(seen + wanted as u64)
                } else {
                    LineStart::At(start)
                });
            }
            seen += newlines;
        }
        offset += (threads * SCAN_CHUNK_BYTES) as u64;
    }
    // The last line may lack its newline.
    let ends_with_newline = size > 0 && {
        let mut last = [0u8];
        file.read_exact_at(&mut last, size - 1)?;
        last[0] == b'\n'
    };
    Ok(LineStart::PastEnd(
        seen + u64::from(!ends_with_newline && size > 0),
    ))
}

/// Counts the lines of the whole file (a last line without newline counts).
pub(crate) fn count_lines(file: &File, size: u64) -> io::Result<u64> {
    match find_line_start(file, size, u64::MAX)? {
        LineStart::PastEnd(lines) => Ok(lines),
        LineStart::At(_) => Ok(u64::MAX),
    }
}

/// Reads until `buffer` is full or the file ends; returns the bytes read.
fn read_full_at(file: &File, buffer: &mut [u8], offset: u64) -> io::Result<usize> {
    let mut filled = 0;
    while filled < buffer.len() {
        match file.read_at(&mut buffer[filled..], offset + filled as u64) {
            Ok(0) => break,
            Ok(read) => filled += read,
            Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
            Err(error) => return Err(error),
        }
    }
    Ok(filled)
}
