//! Processes a test started, or that the code under test started: which are they, and are
//! they still there?

use std::path::Path;
use std::time::{Duration, Instant};

/// Whether process `pid` is still running; a zombie waiting for its parent counts as gone
/// (Linux: reads `/proc/PID/stat`).
pub fn is_running(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // The state follows the command name, which is in parentheses and may hold any byte.
        Ok(stat) => !stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with(['Z', 'X'])),
        Err(_) => false,
    }
}

/// How long [`read_pid`] waits for a script to finish writing its pid.
const PID_WRITE_WAIT: Duration = Duration::from_secs(10);

/// The process id a script wrote to `path` (`echo $! > FILE`), surrounding whitespace aside.
/// The shell creates the file before it writes the number, so an empty or partial file is
/// read again until the number is whole (at most [`PID_WRITE_WAIT`]).
pub fn read_pid(path: &Path) -> u32 {
    let deadline = Instant::now() + PID_WRITE_WAIT;
    loop {
        let text = std::fs::read_to_string(path)
            .unwrap_or_else(|error| panic!("cannot read {}: {error}", path.display()));
        match text.trim().parse() {
            Ok(pid) if text.ends_with('\n') => return pid,
            Ok(_) | Err(_) if Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(10));
            }
            Ok(pid) => return pid,
            Err(error) => panic!("{} holds {text:?}, not a pid: {error}", path.display()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_runs_and_a_reaped_child_does_not() {
        assert!(is_running(std::process::id()));
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        assert!(!is_running(pid));
    }

    #[test]
    fn a_pid_file_is_read_without_its_newline() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("helper.pid");
        std::fs::write(&path, "4242\n").unwrap();
        assert_eq!(read_pid(&path), 4242);
    }
}
