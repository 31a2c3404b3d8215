//! Tests of Claude Code's `.mcp.json` and `mcpServers` reading (mcp.rs).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use pretty_assertions::assert_eq;

use super::*;

fn lookup(name: &str) -> Option<String> {
    (name == "TOKEN").then(|| "secret".to_owned())
}

#[test]
fn claude_code_files_are_read_as_they_are() {
    let text = r#"{
  "mcpServers": {
"files": { "command": "npx", "args": ["-y", "server", "${HOME:-/h}"], "env": {"K": "${TOKEN}"} },
"remote": { "type": "http", "url": "https://x/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"}, "oauth": {} },
"legacy": { "type": "sse", "url": "https://y/sse" }
  }
}"#;
    let servers = claude_mcp_json(Path::new("/w/.mcp.json"), text, Path::new("/w"), &lookup)
        .unwrap()
        .0;
    let names: Vec<_> = servers.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["files", "legacy", "remote"]);
    assert_eq!(
        servers[0].transport,
        McpTransport::Stdio {
            command: "npx".into(),
            args: vec!["-y".into(), "server".into(), "/h".into()],
            env: [("K".to_owned(), "secret".to_owned())].into(),
            cwd: None,
        }
    );
    assert_eq!(servers[0].origin, "/w/.mcp.json:3");
    assert_eq!(servers[1].transport.kind(), "sse");
    assert_eq!(
        servers[2].transport,
        McpTransport::Http {
            url: "https://x/mcp".into(),
            headers: [("Authorization".to_owned(), "Bearer secret".to_owned())].into(),
            bearer_token_env: None,
        }
    );
}

#[test]
fn the_client_credentials_grant_needs_its_client_and_other_grants_are_refused() {
    let server = |oauth: &str| {
        let file: FileMcpServer =
            toml::from_str(&format!("url = \"https://x/mcp\"\n[oauth]\n{oauth}")).unwrap();
        server_config(
            "x",
            "mcp_servers.x",
            file,
            String::new(),
            Path::new("/w"),
            &lookup,
        )
        .map(|server| server.oauth.grant)
    };
    assert_eq!(server(""), Ok(McpOAuthGrant::AuthorizationCode));
    assert_eq!(
        server("grant = \"client_credentials\"\nclient_id = \"bot\"\nclient_secret_env = \"S\""),
        Ok(McpOAuthGrant::ClientCredentials)
    );
    assert_eq!(
        server("grant = \"client_credentials\"\nclient_id = \"bot\""),
        Err(
            "mcp_servers.x.oauth.grant = \"client_credentials\" needs the client: set \
             client_id and client_secret_env"
                .to_owned()
        )
    );
    assert!(
        server("grant = \"implicit\"")
            .unwrap_err()
            .contains("'implicit' is not a grant toolhost knows")
    );
}

#[test]
fn oauth_settings_come_from_claude_codes_oauth_object_and_only_for_http_servers() {
    let text = r#"{"mcpServers": {
  "remote": {"type": "http", "url": "https://x/mcp",
         "oauth": {"clientId": "${TOKEN}-id", "callbackPort": 8080, "scopes": "read  write",
         "authServerMetadataUrl": "https://sso.example.com/meta.json"}},
  "local": {"command": "x", "oauth": {"clientId": "c"}}
}}"#;
    let (servers, warnings) =
        claude_mcp_json(Path::new("m"), text, Path::new("/w"), &lookup).unwrap();
    assert_eq!(servers.len(), 1);
    assert_eq!(
        servers[0].oauth,
        McpOAuth {
            client_id: Some("secret-id".into()),
            callback_port: Some(8080),
            scopes: vec!["read".into(), "write".into()],
            auth_server_metadata_url: Some("https://sso.example.com/meta.json".into()),
            ..McpOAuth::default()
        }
    );
    assert_eq!(warnings.len(), 1);
    assert!(
        warnings[0].contains("OAuth logins are for remote servers")
            && warnings[0].contains("the server 'local' is left out"),
        "{warnings:?}"
    );
}

#[test]
fn a_headers_helper_is_kept_for_a_remote_server_and_ignored_for_stdio() {
    let text = r#"{"mcpServers": {
  "remote": {"type": "http", "url": "https://x/mcp", "headersHelper": "get-token"},
  "local": {"command": "srv", "headersHelper": "get-token"}
}}"#;
    let (servers, warnings) =
        claude_mcp_json(Path::new(".mcp.json"), text, Path::new("/w"), &lookup).unwrap();
    assert_eq!(servers[0].name, "local");
    assert_eq!(servers[0].headers_helper, None);
    assert_eq!(servers[1].headers_helper.as_deref(), Some("get-token"));
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0].contains("'local' has a headersHelper, which only a remote"),
        "{warnings:?}"
    );
}

#[test]
fn a_toml_headers_helper_expands_and_is_refused_on_a_stdio_server() {
    let remote = FileMcpServer {
        url: Some("https://x/mcp".into()),
        headers_helper: Some("get-token --key ${TOKEN}".into()),
        ..FileMcpServer::default()
    };
    let config = server_config(
        "r",
        "mcp_servers.r",
        remote,
        "o".into(),
        Path::new("/w"),
        &lookup,
    )
    .unwrap();
    assert_eq!(
        config.headers_helper.as_deref(),
        Some("get-token --key secret")
    );
    let local = FileMcpServer {
        command: Some("srv".into()),
        headers_helper: Some("get-token".into()),
        ..FileMcpServer::default()
    };
    let error = server_config(
        "l",
        "mcp_servers.l",
        local,
        "o".into(),
        Path::new("/w"),
        &lookup,
    )
    .unwrap_err();
    assert!(
        error.contains("mcp_servers.l.headers_helper is for http and sse"),
        "{error}"
    );
}

#[test]
fn an_sse_entry_keeps_its_bearer_token_env() {
    let file = FileMcpServer {
        kind: Some("sse".into()),
        url: Some("http://h/sse".into()),
        bearer_token_env: Some("LEGACY_TOKEN".into()),
        ..FileMcpServer::default()
    };
    let config = server_config(
        "old",
        "mcp_servers.old",
        file,
        "o".into(),
        Path::new("/w"),
        &lookup,
    )
    .unwrap();
    assert_eq!(
        config.transport,
        McpTransport::Sse {
            url: "http://h/sse".into(),
            headers: BTreeMap::new(),
            bearer_token_env: Some("LEGACY_TOKEN".into()),
        }
    );
}

#[test]
fn a_missing_variable_is_a_problem_of_that_server_only() {
    let text = r#"{"mcpServers": {"s": {"command": "x", "args": ["${NOPE}"]}}}"#;
    let (servers, _) =
        claude_mcp_json(Path::new(".mcp.json"), text, Path::new("/w"), &lookup).unwrap();
    let problem = servers[0].problem.as_deref().unwrap();
    assert!(problem.contains("NOPE is not set"), "{problem}");
}

#[test]
fn a_bad_file_names_its_line_and_a_bad_entry_is_left_out_with_a_warning() {
    let (line, _) = claude_mcp_json(
        Path::new("m"),
        "{\n\"mcpServers\": {,}}",
        Path::new("/"),
        &lookup,
    )
    .unwrap_err();
    assert_eq!(line, Some(2));
    let (servers, warnings) = claude_mcp_json(
        Path::new("m"),
        "{\"mcpServers\": {\n \"s\": {},\n \"good\": {\"command\": \"x\"}}}",
        Path::new("/"),
        &lookup,
    )
    .unwrap();
    assert_eq!(servers.len(), 1);
    assert_eq!(servers[0].name, "good");
    assert_eq!(warnings.len(), 1);
    assert!(warnings[0].starts_with("m:2: "), "{warnings:?}");
    assert!(
        warnings[0].contains("neither command nor url"),
        "{warnings:?}"
    );
    assert!(
        warnings[0].contains("the server 's' is left out"),
        "{warnings:?}"
    );
}
