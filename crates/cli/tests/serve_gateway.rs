//! `toolhost serve` as a gateway that never waits on a server: it answers `initialize` with
//! the built-ins at once and each configured server's tools join when it is ready (announced
//! by `tools/list_changed`); a signal or the end of stdin while a server starts leaves no
//! process behind; a Streamable HTTP server restarted under it is reached again on a new
//! session; a call that times out says whether the server is slow or gone; re-served
//! definitions keep the server's `outputSchema` and only the hints it gave; and a server
//! that cannot be reached is one line of toolhost's, rmcp's detail only at
//! `TOOLHOST_LOG=debug`. The servers are real: `@modelcontextprotocol/server-everything` and
//! `server-filesystem`, installed by `tests/mcp-clients/setup.sh`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::{ServeProcess, toolhost};
use toolhost_test_support::{
    EverythingHttp, free_port, is_running, node, npm_entry_point, read_pid, write_project_config,
};

fn text_of(result: &Value) -> String {
    result["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// `[mcp_servers.NAME]` running `/bin/sh -c SHELL`, with `extra` lines.
fn shell_entry(name: &str, shell: &str, extra: &str) -> String {
    format!("[mcp_servers.{name}]\ncommand = \"/bin/sh\"\nargs = [\"-c\", {shell:?}]\n{extra}")
}

/// A shell line that execs server-everything on stdio.
fn exec_everything() -> String {
    format!(
        "exec '{}' '{}' stdio",
        node(),
        npm_entry_point("@modelcontextprotocol/server-everything").display()
    )
}

/// Waits until `path` exists (a script wrote it); fails after 30 s.
fn wait_for_file(path: &Path) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !path.exists() {
        assert!(
            Instant::now() < deadline,
            "{} never appeared",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Fails unless process `pid` is gone (reaped or a zombie) within a few seconds.
fn assert_gone(pid: u32, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(5);
    while is_running(pid) {
        if Instant::now() > deadline {
            let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
            panic!("{what} ({pid}) outlived toolhost serve");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn serve_answers_at_once_and_a_slow_servers_tools_join_when_it_is_ready() {
    let dir = tempfile::tempdir().unwrap();
    let go = dir.path().join("go");
    // A server that does not start until the test says so (a database it waits for).
    let shell = format!(
        "while [ ! -e '{}' ]; do sleep 0.05; done; {}",
        go.display(),
        exec_everything()
    );
    write_project_config(dir.path(), &shell_entry("slow", &shell, ""));
    let mut server = ServeProcess::start(dir.path(), &["--allow", "mcp__slow__echo"]);
    // Answered while the server is still waiting: the built-ins are there, its tools not yet.
    server.initialize();
    let before = server.tool_names(1);
    assert!(before.contains(&"Read".to_owned()), "{before:?}");
    assert!(
        !before.iter().any(|name| name.starts_with("mcp__slow")),
        "{before:?}"
    );
    let read = server.call(2, "ListDir", json!({"path": "."}));
    assert_eq!(read["isError"], false, "{read}");

    std::fs::write(&go, "").unwrap();
    let after = server.tool_names_with("mcp__slow__echo");
    assert!(after.contains(&"Read".to_owned()), "{after:?}");
    let echo = server.call(3, "mcp__slow__echo", json!({"message": "late"}));
    assert_eq!(text_of(&echo), "Echo: late");
}

/// How a test ends `serve`.
#[derive(Clone, Copy, Debug)]
enum Ending {
    Signal(&'static str),
    EndOfInput,
}

/// Starts serve with a server that writes its pid and never answers, ends serve while the
/// server starts, and checks that the server is gone.
fn ending_serve_during_a_start_leaves_no_server(ending: Ending, required: bool) {
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("server.pid");
    let shell = format!("echo $$ > '{}'; exec sleep 300", pid_file.display());
    let extra = format!("required = {required}\n");
    write_project_config(dir.path(), &shell_entry("stuck", &shell, &extra));
    let mut server = ServeProcess::start(dir.path(), &[]);
    if !required {
        // Only a required server is waited for; this one is not in the way.
        server.initialize();
    }
    wait_for_file(&pid_file);
    let stuck = read_pid(&pid_file);
    assert!(is_running(stuck));

    match ending {
        Ending::Signal(signal) => {
            let status = Command::new("kill")
                .args([&format!("-{signal}"), &server.id().to_string()])
                .status()
                .unwrap();
            assert!(status.success());
        }
        Ending::EndOfInput => {}
    }
    let exited = server.close_stdin_and_wait(Duration::from_secs(20));
    assert!(
        exited.is_some(),
        "serve did not end ({ending:?}, required = {required})"
    );
    assert_gone(stuck, "the server still starting");
}

#[test]
fn sigterm_while_a_required_server_starts_stops_it() {
    ending_serve_during_a_start_leaves_no_server(Ending::Signal("TERM"), true);
}

#[test]
fn sigint_while_a_server_starts_in_the_background_stops_it() {
    ending_serve_during_a_start_leaves_no_server(Ending::Signal("INT"), false);
}

#[test]
fn the_end_of_stdin_while_a_server_starts_stops_it() {
    ending_serve_during_a_start_leaves_no_server(Ending::EndOfInput, false);
}

#[test]
fn the_end_of_stdin_while_a_required_server_starts_stops_it() {
    ending_serve_during_a_start_leaves_no_server(Ending::EndOfInput, true);
}

#[test]
fn a_streamable_http_server_restarted_under_serve_is_reached_on_a_new_session() {
    let dir = tempfile::tempdir().unwrap();
    let mut upstream = EverythingHttp::start("streamableHttp", 0, &[], &[]);
    let port = upstream.port;
    write_project_config(
        dir.path(),
        &format!("[mcp_servers.web]\ntype = \"http\"\nurl = \"http://127.0.0.1:{port}/mcp\"\n"),
    );
    let mut server = ServeProcess::start(dir.path(), &["--allow", "mcp__web__echo"]);
    server.initialize();
    server.tool_names_with("mcp__web__echo");
    let echo = server.call(1, "mcp__web__echo", json!({"message": "one"}));
    assert_eq!(text_of(&echo), "Echo: one", "{echo}");

    // Down: the call cannot reach it, and says so (after one more try on a new session).
    upstream.kill();
    let down = server.call(2, "mcp__web__echo", json!({"message": "two"}));
    assert_eq!(down["isError"], true, "{down}");
    assert!(text_of(&down).contains("'web'"), "{down}");

    // Back on the same port, without the old session, which it refuses with a 400.
    let _restarted = EverythingHttp::start("streamableHttp", port, &[], &[]);
    let echo = server.call(3, "mcp__web__echo", json!({"message": "three"}));
    assert_eq!(text_of(&echo), "Echo: three", "{echo}");
}

#[test]
fn a_restarted_servers_stale_session_refused_with_400_is_replaced_on_the_same_call() {
    let dir = tempfile::tempdir().unwrap();
    let mut upstream = EverythingHttp::start("streamableHttp", 0, &[], &[]);
    let port = upstream.port;
    write_project_config(
        dir.path(),
        &format!("[mcp_servers.web]\ntype = \"http\"\nurl = \"http://127.0.0.1:{port}/mcp\"\n"),
    );
    let mut server = ServeProcess::start(dir.path(), &["--allow", "mcp__web__echo"]);
    server.initialize();
    server.tool_names_with("mcp__web__echo");
    let echo = server.call(1, "mcp__web__echo", json!({"message": "before"}));
    assert_eq!(text_of(&echo), "Echo: before", "{echo}");

    upstream.kill();
    let _restarted = EverythingHttp::start("streamableHttp", port, &[], &[]);
    let echo = server.call(2, "mcp__web__echo", json!({"message": "after"}));
    assert_eq!(text_of(&echo), "Echo: after", "{echo}");
}

#[test]
fn a_call_that_times_out_says_whether_the_server_is_slow_or_gone() {
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("server.pid");
    let shell = format!("echo $$ > '{}'; {}", pid_file.display(), exec_everything());
    write_project_config(dir.path(), &shell_entry("ev", &shell, "tool_timeout = 1\n"));
    let mut server = ServeProcess::start(dir.path(), &["--allow", "mcp__ev"]);
    server.initialize();
    server.tool_names_with("mcp__ev__trigger-long-running-operation");

    // Alive but slow: it still answers a ping.
    let slow = server.call(
        1,
        "mcp__ev__trigger-long-running-operation",
        json!({"duration": 10, "steps": 2}),
    );
    assert_eq!(slow["isError"], true, "{slow}");
    assert!(text_of(&slow).contains("raise tool_timeout"), "{slow}");

    // Stopped: no answer to the call nor to a ping.
    let pid = read_pid(&pid_file);
    assert!(
        Command::new("kill")
            .args(["-STOP", &pid.to_string()])
            .status()
            .unwrap()
            .success()
    );
    let gone = server.call(2, "mcp__ev__echo", json!({"message": "hello?"}));
    let _ = Command::new("kill")
        .args(["-CONT", &pid.to_string()])
        .status();
    assert_eq!(gone["isError"], true, "{gone}");
    let text = text_of(&gone);
    assert!(text.contains("does not answer a ping"), "{text}");
    assert!(!text.contains("raise tool_timeout"), "{text}");
}

/// The MCP definitions `toolhost tools --format mcp` prints, by name.
fn mcp_definitions(workspace: &Path) -> Vec<Value> {
    let output = toolhost(workspace)
        .args(["tools", "--format", "mcp"])
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap()
}

fn definition<'a>(definitions: &'a [Value], name: &str) -> &'a Value {
    definitions
        .iter()
        .find(|definition| definition["name"] == name)
        .unwrap_or_else(|| panic!("{name} not defined"))
}

#[test]
fn re_served_definitions_keep_the_output_schema_and_only_the_hints_the_server_gave() {
    let dir = tempfile::tempdir().unwrap();
    let script = npm_entry_point("@modelcontextprotocol/server-filesystem");
    let workspace = dir.path().canonicalize().unwrap();
    write_project_config(
        dir.path(),
        &format!(
            "[mcp_servers.fs]\ncommand = {:?}\nargs = [{:?}, {:?}]\n",
            node(),
            script.display().to_string(),
            workspace.display().to_string()
        ),
    );
    let definitions = mcp_definitions(dir.path());
    let read = definition(&definitions, "mcp__fs__read_text_file");
    // The server gave two hints: exactly those are passed on, no destructiveHint beside
    // readOnlyHint.
    assert_eq!(
        read["annotations"],
        json!({"readOnlyHint": true, "openWorldHint": false})
    );
    assert_eq!(
        read["outputSchema"]["properties"]["content"]["type"],
        "string"
    );
    // A toolhost tool keeps its four hints.
    assert_eq!(
        definition(&definitions, "Read")["annotations"]["destructiveHint"],
        false
    );

    // The gateway lists the same definitions.
    let mut server = ServeProcess::start(dir.path(), &[]);
    server.initialize();
    server.tool_names_with("mcp__fs__read_text_file");
    server.send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}));
    let listed = server.wait_for("tools/list reply", |m| m["id"] == 1);
    let tools = listed["result"]["tools"].as_array().unwrap();
    let served = definition(tools, "mcp__fs__read_text_file");
    assert_eq!(served["annotations"], read["annotations"]);
    assert_eq!(served["outputSchema"], read["outputSchema"]);
}

#[test]
fn an_unknown_tool_called_through_serve_is_the_json_rpc_error_invalid_params() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = ServeProcess::start(dir.path(), &[]);
    server.initialize();
    server.send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "Raed", "arguments": {"path": "x"}}}));
    let reply = server.wait_for("tools/call reply", |m| m["id"] == 1);
    assert_eq!(reply["error"]["code"], -32602, "{reply}");
    let message = reply["error"]["message"].as_str().unwrap();
    assert!(
        message.starts_with("Unknown tool 'Raed'. Did you mean 'Read'?"),
        "{message}"
    );
}

#[test]
fn a_server_that_cannot_be_reached_is_one_line_and_rmcps_detail_needs_debug() {
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    write_project_config(
        dir.path(),
        &format!("[mcp_servers.down]\ntype = \"http\"\nurl = \"http://127.0.0.1:{port}/mcp\"\n"),
    );
    let output = toolhost(dir.path()).arg("tools").output().unwrap();
    assert!(output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{stderr}");
    assert!(
        lines[0].starts_with("warning: the MCP server 'down'") && lines[0].contains("refused"),
        "{stderr}"
    );

    let output = toolhost(dir.path())
        .arg("tools")
        .env("TOOLHOST_LOG", "debug")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("rmcp"), "{stderr}");
}

#[test]
fn doctor_names_each_server_that_started_and_each_that_did_not() {
    let dir = tempfile::tempdir().unwrap();
    let broken = "echo 'cannot open the database' >&2; exit 3";
    write_project_config(
        dir.path(),
        &format!(
            "{}{}",
            shell_entry("broken", broken, ""),
            shell_entry("ev", &exec_everything(), "")
        ),
    );
    let output = toolhost(dir.path()).arg("doctor").output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let line = |server: &str| {
        stdout
            .lines()
            .find(|line| line.contains(&format!("mcp        {server}:")))
            .unwrap_or_else(|| panic!("no line for {server}: {stdout}"))
            .to_owned()
    };
    assert!(line("ev").starts_with("ok  "), "{stdout}");
    assert!(line("ev").contains("started,"), "{stdout}");
    let broken = line("broken");
    assert!(broken.starts_with("warn"), "{stdout}");
    assert!(broken.contains("cannot open the database"), "{stdout}");
}

#[test]
fn serve_over_http_opens_its_port_and_answers_initialize_while_a_server_starts() {
    use std::io::{BufRead as _, Read as _, Write as _};

    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("server.pid");
    let shell = format!("echo $$ > '{}'; exec sleep 300", pid_file.display());
    write_project_config(dir.path(), &shell_entry("stuck", &shell, ""));
    let mut serve = Command::new(assert_cmd::cargo::cargo_bin("toolhost"))
        .arg("--workspace")
        .arg(dir.path())
        .args(["serve", "--http", "0"])
        .env("HOME", dir.path())
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // The address is printed once the port is open, which waits for no server.
    let mut lines = std::io::BufReader::new(serve.stderr.take().unwrap()).lines();
    let url = loop {
        let line = lines
            .next()
            .expect("serve ended before it listened")
            .unwrap();
        if let Some(url) = line.strip_prefix("toolhost: serving MCP on ") {
            break url.trim().to_owned();
        }
    };
    let address = url
        .strip_prefix("http://")
        .and_then(|rest| rest.split('/').next())
        .unwrap()
        .to_owned();
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"}}})
    .to_string();
    let mut stream = std::net::TcpStream::connect(&address).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    write!(
        stream,
        "POST /mcp HTTP/1.1\r\nHost: {address}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n\
         Connection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer);
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(answer.contains("\"serverInfo\""), "{answer}");

    // The server it was still starting is stopped with serve.
    wait_for_file(&pid_file);
    let stuck = read_pid(&pid_file);
    let _ = Command::new("kill")
        .args(["-TERM", &serve.id().to_string()])
        .status();
    let _ = serve.wait();
    assert_gone(stuck, "the server still starting");
}
