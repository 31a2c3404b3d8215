//! `toolhost chat` on a pseudo-terminal for the chat tests: the test types into it and reads
//! the screen's bytes as they come.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::io::{Read as _, Write as _};
use std::process::{Child, ChildStdin};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use toolhost_test_support::{HomeAndWorkspace, MockModel};

/// `toolhost chat` on a pty, its output collected as it comes.
pub struct Terminal {
    child: Child,
    stdin: ChildStdin,
    screen: Arc<Mutex<String>>,
}

impl Terminal {
    pub fn start(dirs: &HomeAndWorkspace, model: &MockModel, args: &str) -> Self {
        Self::start_with_term(dirs, model, "dumb", args)
    }

    /// The chat under `TERM=term` (`dumb` keeps it in line mode whatever its flags say).
    pub fn start_with_term(
        dirs: &HomeAndWorkspace,
        model: &MockModel,
        term: &str,
        args: &str,
    ) -> Self {
        let (child, stdin, mut stdout) = super::support::chat_on_pty(
            &dirs.workspace,
            &dirs.home,
            &model.openai_base_url(),
            term,
            "stty rows 30 cols 100; ",
            args,
        );
        let screen = Arc::new(Mutex::new(String::new()));
        let collected = Arc::clone(&screen);
        std::thread::spawn(move || {
            let mut buffer = [0u8; 4096];
            while let Ok(read) = stdout.read(&mut buffer) {
                if read == 0 {
                    break;
                }
                collected
                    .lock()
                    .unwrap()
                    .push_str(&String::from_utf8_lossy(&buffer[..read]));
            }
        });
        Self {
            child,
            stdin,
            screen,
        }
    }

    pub fn type_keys(&mut self, keys: &str) {
        self.stdin.write_all(keys.as_bytes()).unwrap();
        self.stdin.flush().unwrap();
    }

    pub fn screen(&self) -> String {
        self.screen.lock().unwrap().clone()
    }

    /// Waits until the screen shows `text` after byte `from`; the offset just past it.
    pub fn wait_for(&self, text: &str, from: usize) -> usize {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let screen = self.screen();
            if let Some(at) = screen.get(from..).and_then(|rest| rest.find(text)) {
                return from + at + text.len();
            }
            assert!(
                Instant::now() < deadline,
                "the screen never showed {text:?}; it shows:\n{screen}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    pub fn wait_exit(&mut self) -> Option<i32> {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status.code();
            }
            assert!(
                Instant::now() < deadline,
                "chat did not exit:\n{}",
                self.screen()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Terminal {
    fn drop(&mut self) {
        let _ = self.child.kill();
    }
}
