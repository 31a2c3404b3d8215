//! A stdio MCP server in a few lines of Python, for tests that need a real server process
//! started by toolhost (its environment, its working folder) without installing one.

/// The script of a server named `server` offering one tool, `tool`, without parameters, whose
/// call answers with the text the Python expression `text` gives (`os` and `sys` are imported).
pub fn python_mcp_server(server: &str, tool: &str, text: &str) -> String {
    format!(
        r#"import json, os, sys
for line in sys.stdin:
    message = json.loads(line)
    if "id" not in message:
        continue
    method = message["method"]
    if method == "initialize":
        result = {{"protocolVersion": message["params"]["protocolVersion"],
                  "capabilities": {{"tools": {{}}}}, "serverInfo": {{"name": "{server}", "version": "1"}}}}
    elif method == "tools/list":
        result = {{"tools": [{{"name": "{tool}", "description": "A test tool.",
                             "inputSchema": {{"type": "object", "properties": {{}}}}}}]}}
    elif method == "tools/call":
        result = {{"content": [{{"type": "text", "text": {text}}}]}}
    else:
        result = {{}}
    print(json.dumps({{"jsonrpc": "2.0", "id": message["id"], "result": result}}), flush=True)
"#
    )
}
