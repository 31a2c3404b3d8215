//! A Streamable HTTP MCP server behind HTTPS: `@modelcontextprotocol/server-everything` served
//! over TLS (the preload `tests/mcp-clients/node/serve_tls.cjs`) with a certificate signed by a
//! throw-away CA made with `openssl`. With the CA trusted (`SSL_CERT_FILE`, which the system
//! verifier reads) its tools are called; without it, the failure names the server and says
//! the certificate does not verify. Needs `tests/mcp-clients/setup.sh` (scripts/test.sh runs it).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::Path;
use std::process::{Command, Stdio};

use predicates::prelude::*;
use support::toolhost;
use toolhost_test_support::{EverythingHttp, write_project_config};

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

#[test]
fn an_https_server_is_called_when_its_ca_is_trusted_and_named_when_it_is_not() {
    let dir = tempfile::tempdir().unwrap();
    let certificates = dir.path().join("certs");
    std::fs::create_dir(&certificates).unwrap();
    make_certificates(&certificates);
    // server-everything's Streamable HTTP transport, made HTTPS by the `serve_tls.cjs` preload.
    let server = EverythingHttp::start(
        "streamableHttp",
        0,
        &["serve_tls.cjs"],
        &[
            ("TOOLHOST_TEST_TLS_CERT", &certificates.join("leaf.pem")),
            ("TOOLHOST_TEST_TLS_KEY", &certificates.join("leaf.key")),
        ],
    );
    let workspace = dir.path().join("ws");
    write_project_config(
        &workspace,
        &format!(
            "[mcp_servers.secure]\nurl = \"https://localhost:{}/mcp\"\n",
            server.port
        ),
    );

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
