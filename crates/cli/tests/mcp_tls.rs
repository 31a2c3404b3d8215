//! A Streamable HTTP MCP server behind HTTPS: `@modelcontextprotocol/server-everything` served
//! over TLS (the preload `tests/mcp-clients/node/serve_tls.cjs`) with a certificate signed by a
//! throw-away CA made with `openssl`. With the CA trusted (`SSL_CERT_FILE`, which the system
//! verifier reads) its tools are called; without it, the failure names the server and says
//! the certificate does not verify. Needs `tests/mcp-clients/setup.sh` (scripts/test.sh runs it).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::io::{BufRead as _, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};

use predicates::prelude::*;
use support::{node, node_modules, toolhost};

fn openssl(dir: &Path, args: &[&str]) {
    let status = Command::new("openssl")
        .args(args)
        .current_dir(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("openssl is missing: run tests/mcp-clients/setup.sh");
    assert!(status.success(), "openssl {args:?} failed");
}

/// A CA (`ca.pem`) and a certificate it signed for localhost and 127.0.0.1 (`leaf.pem`, `leaf.key`).
fn make_certificates(dir: &Path) {
    let days = ["-days", "2"];
    openssl(
        dir,
        &[
            &[
                "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key",
            ][..],
            &["-out", "ca.pem", "-subj", "/CN=toolhost test CA"],
            &days,
        ]
        .concat(),
    );
    openssl(
        dir,
        &[
            "req",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            "leaf.key",
            "-out",
            "leaf.csr",
            "-subj",
            "/CN=localhost",
        ],
    );
    std::fs::write(
        dir.join("san.ext"),
        "subjectAltName=DNS:localhost,IP:127.0.0.1\n",
    )
    .unwrap();
    openssl(
        dir,
        &[
            &[
                "x509", "-req", "-in", "leaf.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
            ][..],
            &["-CAcreateserial", "-out", "leaf.pem", "-extfile", "san.ext"],
            &days,
        ]
        .concat(),
    );
}

/// server-everything's Streamable HTTP transport over TLS on 127.0.0.1; killed when dropped.
struct HttpsServer {
    child: Child,
    port: u16,
}

impl HttpsServer {
    fn start(certificates: &Path) -> Self {
        let modules = node_modules();
        let preloads = modules.join("../node");
        let mut child = Command::new(node())
            .arg("--require")
            .arg(preloads.join("listen_loopback.cjs"))
            .arg("--require")
            .arg(preloads.join("serve_tls.cjs"))
            .arg(modules.join("@modelcontextprotocol/server-everything/dist/index.js"))
            .arg("streamableHttp")
            .env("PORT", "0")
            .env("TOOLHOST_TEST_TLS_CERT", certificates.join("leaf.pem"))
            .env("TOOLHOST_TEST_TLS_KEY", certificates.join("leaf.key"))
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stderr = BufReader::new(child.stderr.take().unwrap());
        let mut port = None;
        for line in stderr.lines().map_while(Result::ok) {
            if let Some(rest) = line.strip_prefix("toolhost-test: listening on 127.0.0.1:") {
                port = Some(rest.trim().parse().unwrap());
                break;
            }
        }
        let port = port.expect("server-everything (streamableHttp over TLS) never listened");
        Self { child, port }
    }
}

impl Drop for HttpsServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn an_https_server_is_called_when_its_ca_is_trusted_and_named_when_it_is_not() {
    let dir = tempfile::tempdir().unwrap();
    let certificates = dir.path().join("certs");
    std::fs::create_dir(&certificates).unwrap();
    make_certificates(&certificates);
    let server = HttpsServer::start(&certificates);
    let workspace = dir.path().join("ws");
    std::fs::create_dir_all(workspace.join(".toolhost")).unwrap();
    std::fs::write(
        workspace.join(".toolhost/config.toml"),
        format!(
            "[mcp_servers.secure]\nurl = \"https://localhost:{}/mcp\"\n",
            server.port
        ),
    )
    .unwrap();

    toolhost(&workspace)
        .env("SSL_CERT_FILE", certificates.join("ca.pem"))
        .args([
            "call",
            "mcp__secure__echo",
            r#"{"message": "over tls"}"#,
            "--yes",
        ])
        .assert()
        .success()
        .stdout(predicate::str::contains("Echo: over tls"));

    toolhost(&workspace)
        .env_remove("SSL_CERT_FILE")
        .env_remove("SSL_CERT_DIR")
        .arg("tools")
        .assert()
        .success()
        .stdout(predicate::str::contains("mcp__secure__").not())
        .stderr(predicate::str::contains("the MCP server 'secure'"))
        .stderr(predicate::str::contains("invalid peer certificate"));
}
