//! The official ACP TypeScript SDK drives the real `toolhost acp` as an editor would
//! (`tests/mcp-clients/node/acp_client.mjs`), against a scripted model on loopback: initialize,
//! a new session, a prompt in which the model reads (through the editor's buffer), edits (the
//! editor allows it always), writes (through the editor), runs a command and writes its todo
//! list (drawn as a plan), a mode switch, a slow command cancelled, and the session loaded again
//! by a second process, in the mode it was last in. Every message the agent sent is checked, in
//! order. A configured MCP server's prompts (the reference server `server-everything`) are
//! offered as commands, and a prompt starting with one runs it.
//!
//! Needs `eval "$(tests/mcp-clients/setup.sh)"` (scripts/test.sh does it).

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "support/agent_runs.rs"]
mod agent_runs;
mod support;

use std::path::Path;
use std::process::Command;

use agent_runs::Fixture;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use toolhost_test_support::{
    HomeAndWorkspace, MockModel, Reply, node, npm_entry_point, write_file,
};

/// What the editor's buffer of notes.txt holds beyond the file (acp_client.mjs adds it).
const UNSAVED: &str = "an unsaved line, only in the editor's buffer\n";

/// One message of the transcript acp_client.mjs prints.
#[derive(Debug)]
struct Message {
    kind: String,
    payload: Value,
}

/// Runs acp_client.mjs `args` against `toolhost acp` in `dirs`, asking `model`.
fn run_client(dirs: &HomeAndWorkspace, model: &MockModel, args: &[&str]) -> Vec<Message> {
    let script =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/mcp-clients/node/acp_client.mjs");
    let output = Command::new(node())
        .arg(script)
        .arg(assert_cmd::cargo::cargo_bin("toolhost"))
        .arg(&dirs.workspace)
        .args(args)
        .env("HOME", &dirs.home)
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("ANTHROPIC_BASE_URL")
        .env("OPENAI_BASE_URL", model.openai_base_url())
        .env("OPENAI_API_KEY", "sk-test")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "acp_client.mjs {args:?} failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let workspace = dirs.workspace.display().to_string();
    let shell_time = regex::Regex::new(r"after [0-9.]+ s\]").unwrap();
    stdout
        .lines()
        .map(|line| {
            // Paths of the temporary workspace read as $WS, and the shell's times as N, so that
            // whole values compare.
            let line = line.replace(&workspace, "$WS");
            let line = shell_time.replace_all(&line, "after N s]");
            let value: Value = serde_json::from_str(&line).unwrap();
            Message {
                kind: value["kind"].as_str().unwrap().to_owned(),
                payload: value["payload"].clone(),
            }
        })
        .collect()
}

/// The transcript in a form to compare whole: each update by its type with the fields an
/// editor draws (consecutive text chunks of one kind joined); the other messages as they came,
/// without what varies from run to run (session ids, raw tool output).
fn summary(messages: &[Message]) -> Vec<Value> {
    let mut summary: Vec<Value> = Vec::new();
    for message in messages {
        let payload = &message.payload;
        let entry = match message.kind.as_str() {
            "update" => {
                let update = &payload["update"];
                let kind = update["sessionUpdate"].as_str().unwrap();
                match kind {
                    "agent_message_chunk" | "agent_thought_chunk" | "user_message_chunk" => {
                        let text = update["content"]["text"].as_str().unwrap_or_default();
                        if let Some(last) = summary.last_mut()
                            && last[kind].is_string()
                            && kind != "user_message_chunk"
                        {
                            let joined = format!("{}{text}", last[kind].as_str().unwrap());
                            last[kind] = json!(joined);
                            continue;
                        }
                        json!({ kind: text })
                    }
                    "tool_call" => json!({
                        "tool_call": update["toolCallId"],
                        "title": update["title"],
                        "kind": update["kind"],
                        "status": update["status"],
                        "locations": update["locations"],
                        "rawInput": update["rawInput"],
                    }),
                    "tool_call_update" => json!({
                        "tool_call_update": update["toolCallId"],
                        "status": update["status"],
                        "content": update["content"],
                    }),
                    "available_commands_update" => json!({ kind: update["availableCommands"] }),
                    "current_mode_update" => json!({ kind: update["currentModeId"] }),
                    "plan" => json!({ kind: update["entries"] }),
                    other => json!({ other: update }),
                }
            }
            "permission" => json!({
                "permission": payload["toolCall"]["toolCallId"],
                "options": payload["options"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|option| json!([option["optionId"], option["kind"]]))
                    .collect::<Vec<_>>(),
            }),
            "read" => json!({ "read": payload["path"] }),
            kind if kind.starts_with("terminal/") => {
                let mut request = payload.clone();
                let request = request.as_object_mut().unwrap();
                request.remove("sessionId");
                // The variables' values (the MCP bridge's port and token) vary: their names.
                if let Some(env) = request.get_mut("env") {
                    *env = env
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|variable| variable["name"].clone())
                        .collect();
                }
                json!({ kind: request })
            }
            "write" => json!({ "write": payload["path"], "content": payload["content"] }),
            "response" => {
                let mut response = payload["response"].clone();
                if let Some(object) = response.as_object_mut() {
                    object.remove("sessionId");
                    object.remove("agentInfo");
                }
                json!({ "response": payload["method"], "result": response })
            }
            _ => json!({ message.kind.as_str(): payload }),
        };
        summary.push(entry);
    }
    summary
}

/// A tool call's text content, as the editor shows it.
fn text_content(text: &str) -> Value {
    json!([{ "type": "content", "content": { "type": "text", "text": text } }])
}

#[test]
fn the_official_sdk_drives_a_session_with_approvals_files_a_cancel_and_a_reload() {
    let fixture = Fixture::new();
    let dirs = &fixture.dirs;
    write_file(dirs.workspace.join("notes.txt"), "draft notes\n");
    write_file(
        dirs.workspace.join(".toolhost/commands/review.md"),
        "---\ndescription: Review the changes\nargument-hint: '[file]'\n---\nReview $ARGUMENTS.\n",
    );
    let summary_text = "notes.txt: tidied\n";
    let todos = json!([
        {"content": "Tidy the notes", "activeForm": "Tidying the notes", "status": "completed"},
        {"content": "Wait for the build", "activeForm": "Waiting for the build", "status": "in_progress"},
        {"content": "Tell the team", "activeForm": "Telling the team", "status": "pending"}
    ]);
    // The todo list as the editor's plan: every entry of medium priority.
    let plan = json!({"plan": [
        {"content": "Tidy the notes", "priority": "medium", "status": "completed"},
        {"content": "Wait for the build", "priority": "medium", "status": "in_progress"},
        {"content": "Tell the team", "priority": "medium", "status": "pending"}
    ]});
    let model = fixture.model(vec![
        Reply::tool_call("call-read", "Read", json!({"path": "notes.txt"}))
            .with_reasoning("Reading the notes first.")
            .into(),
        Reply::tool_call(
            "call-edit",
            "Edit",
            json!({"path": "notes.txt", "old_string": "draft", "new_string": "final"}),
        )
        .into(),
        Reply::tool_call(
            "call-write",
            "Write",
            json!({"path": "summary.txt", "content": summary_text}),
        )
        .into(),
        Reply::tool_call("call-bash", "Bash", json!({"command": "cat notes.txt"})).into(),
        Reply::tool_call("call-todo", "TodoWrite", json!({"todos": todos.clone()})).into(),
        Reply::text("Tidied.").into(),
        Reply::tool_call(
            "call-slow",
            "Bash",
            json!({"command": "sleep 30 && echo never"}),
        )
        .into(),
    ]);

    let first = run_client(dirs, &model, &["first"]);
    let session_id = first
        .iter()
        .find(|message| message.kind == "response" && message.payload["method"] == "session/new")
        .map(|message| {
            message.payload["response"]["sessionId"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .unwrap();
    let options = json!([
        ["allow_once", "allow_once"],
        ["allow_always", "allow_always"],
        ["reject_once", "reject_once"],
        ["reject_always", "reject_always"]
    ]);
    let modes = json!({
        "currentModeId": "default",
        "availableModes": [
            {"id": "default", "name": "Default", "description": "Reads run; edits, commands and fetches ask unless a rule allows them"},
            {"id": "acceptEdits", "name": "Accept edits", "description": "File edits run without asking; commands and fetches still ask"},
            {"id": "plan", "name": "Plan", "description": "Only read-only tools: the agent plans, nothing changes"},
            {"id": "bypassPermissions", "name": "Bypass permissions", "description": "Nothing asks; deny rules and the shell deny list still refuse"}
        ]
    });
    let todo_result = text_content(
        "Todo list updated: 1 in progress, 1 pending, 1 completed.\n[x] Tidy the notes\n\
         [~] Waiting for the build\n[ ] Tell the team",
    );
    // With no providers configured, the one model: the conventional OpenAI provider's.
    let config_options = json!([{
        "id": "model",
        "name": "Model",
        "description": "The model the agent asks from the next request on",
        "category": "model",
        "type": "select",
        "currentValue": "openai/gpt-5-mini",
        "options": [
            {"value": "openai/gpt-5-mini", "name": "gpt-5-mini", "description": "the provider 'openai'"}
        ]
    }]);
    let commands = json!([{
        "name": "review",
        "description": "Review the changes",
        "input": {"hint": "[file]"}
    }]);
    assert_eq!(
        summary(&first),
        vec![
            json!({"response": "initialize", "result": {
                "protocolVersion": 1,
                "agentCapabilities": {
                    "loadSession": true,
                    "promptCapabilities": {"image": true, "audio": false, "embeddedContext": true},
                    "mcpCapabilities": {"http": true, "sse": true},
                    "sessionCapabilities": {},
                    "auth": {}
                },
                "authMethods": []
            }}),
            json!({"response": "session/new", "result": {"modes": modes, "configOptions": config_options}}),
            json!({"available_commands_update": commands}),
            json!({"agent_thought_chunk": "Reading the notes first."}),
            json!({"tool_call": "call-read", "title": "Read notes.txt", "kind": "read",
                   "status": "in_progress", "locations": [{"path": "$WS/notes.txt"}],
                   "rawInput": {"path": "notes.txt"}}),
            json!({"read": "$WS/notes.txt"}),
            json!({"tool_call_update": "call-read", "status": "completed",
                   "content": text_content(&format!("     1\tdraft notes\n     2\t{UNSAVED}"))}),
            json!({"tool_call": "call-edit", "title": "Edit notes.txt", "kind": "edit",
                   "status": "in_progress", "locations": [{"path": "$WS/notes.txt"}],
                   "rawInput": {"path": "notes.txt", "old_string": "draft", "new_string": "final"}}),
            json!({"permission": "call-edit", "options": options}),
            json!({"tool_call_update": "call-edit", "status": "completed", "content": [
                {"type": "diff", "path": "$WS/notes.txt", "oldText": "draft notes\n", "newText": "final notes\n"},
                text_content("Edited notes.txt: replaced 1 occurrence.\n\n     1\tfinal notes\n")[0],
            ]}),
            json!({"tool_call": "call-write", "title": "Write summary.txt", "kind": "edit",
                   "status": "in_progress", "locations": [{"path": "$WS/summary.txt"}],
                   "rawInput": {"path": "summary.txt", "content": summary_text}}),
            json!({"permission": "call-write", "options": options}),
            json!({"write": "$WS/summary.txt", "content": summary_text}),
            json!({"tool_call_update": "call-write", "status": "completed", "content": [
                {"type": "diff", "path": "$WS/summary.txt", "newText": summary_text},
                text_content("Created summary.txt: 1 line, 18 B.")[0],
            ]}),
            json!({"tool_call": "call-bash", "title": "Bash: cat notes.txt", "kind": "execute",
                   "status": "in_progress", "locations": null,
                   "rawInput": {"command": "cat notes.txt"}}),
            json!({"permission": "call-bash", "options": options}),
            // The output as it streams, then the result.
            json!({"tool_call_update": "call-bash", "status": null,
                   "content": text_content("final notes\n")}),
            json!({"tool_call_update": "call-bash", "status": "completed",
                   "content": text_content("final notes\n[exit code 0 after N s]")}),
            // Kind `other` is the default, which the wire leaves out.
            json!({"tool_call": "call-todo", "title": "TodoWrite", "kind": null,
                   "status": "in_progress", "locations": null, "rawInput": {"todos": todos}}),
            json!({"tool_call_update": "call-todo", "status": "completed", "content": todo_result}),
            plan.clone(),
            json!({"agent_message_chunk": "Tidied."}),
            json!({"response": "session/prompt", "result": {"stopReason": "end_turn"}}),
            json!({"current_mode_update": "acceptEdits"}),
            json!({"response": "session/set_mode", "result": {}}),
            json!({"tool_call": "call-slow", "title": "Bash: sleep 30 && echo never",
                   "kind": "execute", "status": "in_progress", "locations": null,
                   "rawInput": {"command": "sleep 30 && echo never"}}),
            json!({"permission": "call-slow", "options": options}),
            json!({"tool_call_update": "call-slow", "status": "failed", "content": text_content(
                "Tool 'Bash' was cancelled before it finished.\n\n[Analyze the error above and try a different approach.]"
            )}),
            json!({"response": "session/prompt", "result": {"stopReason": "cancelled"}}),
        ]
    );
    assert_eq!(
        std::fs::read_to_string(dirs.workspace.join("notes.txt")).unwrap(),
        "final notes\n"
    );
    assert_eq!(
        std::fs::read_to_string(dirs.workspace.join("summary.txt")).unwrap(),
        summary_text
    );
    let local =
        std::fs::read_to_string(dirs.workspace.join(".toolhost/config.local.toml")).unwrap();
    assert_eq!(local, "[permissions]\nallow = [\"Edit(/notes.txt)\"]\n");
    // The model read the link and the embedded file as text of the user's message.
    let first_request = &model.requests()[0].body;
    let user = first_request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rfind(|message| message["role"] == "user")
        .unwrap();
    let workspace = dirs.workspace.display();
    assert_eq!(
        user["content"],
        json!([
            {"type": "text", "text": "Tidy up notes.txt, please."},
            {"type": "text", "text": format!("[@notes.txt]({workspace}/notes.txt) (read it with your tools if you need it)")},
            {"type": "text", "text": format!("<context uri=\"{workspace}/style.md\">\nKeep it short.\n</context>")},
        ])
    );

    // A second process loads the session: the conversation told again, then the answer.
    let load = run_client(dirs, &model, &["load", &session_id]);
    let read = text_content(&format!("     1\tdraft notes\n     2\t{UNSAVED}"));
    let mut loaded_modes = modes.clone();
    loaded_modes["currentModeId"] = json!("acceptEdits");
    assert_eq!(
        summary(&load),
        vec![
            summary(&first)[0].clone(),
            json!({"user_message_chunk": "Tidy up notes.txt, please."}),
            json!({"user_message_chunk": "[@notes.txt]($WS/notes.txt) (read it with your tools if you need it)"}),
            json!({"user_message_chunk": "<context uri=\"$WS/style.md\">\nKeep it short.\n</context>"}),
            json!({"agent_thought_chunk": "Reading the notes first."}),
            summary(&first)[4].clone(),
            json!({"tool_call_update": "call-read", "status": "completed", "content": read}),
            summary(&first)[7].clone(),
            json!({"tool_call_update": "call-edit", "status": "completed",
                   "content": text_content("Edited notes.txt: replaced 1 occurrence.\n\n     1\tfinal notes\n")}),
            summary(&first)[10].clone(),
            json!({"tool_call_update": "call-write", "status": "completed",
                   "content": text_content("Created summary.txt: 1 line, 18 B.")}),
            summary(&first)[14].clone(),
            json!({"tool_call_update": "call-bash", "status": "completed",
                   "content": text_content("final notes\n[exit code 0 after N s]")}),
            summary(&first)[18].clone(),
            summary(&first)[19].clone(),
            plan,
            json!({"agent_message_chunk": "Tidied."}),
            json!({"user_message_chunk": "Now wait for the build."}),
            summary(&first)[25].clone(),
            summary(&first)[27].clone(),
            // The session comes back in the mode it was last in.
            json!({"response": "session/load", "result": {"modes": loaded_modes, "configOptions": config_options}}),
            json!({"available_commands_update": commands}),
        ]
    );
    assert_eq!(model.requests().len(), 7, "loading asks the model nothing");
}

/// The commands of every `available_commands_update` in `messages`.
fn available_commands(messages: &[Message]) -> Vec<Value> {
    messages
        .iter()
        .filter(|message| {
            message.kind == "update"
                && message.payload["update"]["sessionUpdate"] == "available_commands_update"
        })
        .flat_map(|message| {
            message.payload["update"]["availableCommands"]
                .as_array()
                .unwrap()
                .clone()
        })
        .collect()
}

#[test]
fn a_configured_servers_prompts_are_commands_and_a_prompt_starting_with_one_runs_it() {
    let fixture = Fixture::new();
    fixture.config(&format!(
        "[mcp_servers.ev]\ncommand = {:?}\nargs = [{:?}, \"stdio\"]\n",
        node(),
        npm_entry_point("@modelcontextprotocol/server-everything")
            .display()
            .to_string()
    ));
    let model = fixture.model(vec![Reply::text("Foggy.").into()]);
    let messages = run_client(
        &fixture.dirs,
        &model,
        &["prompt", "/mcp__ev__args-prompt 'San Francisco' CA"],
    );
    // The server's prompts in its order; a prompt's arguments are the hint (required ones in
    // angle brackets), a prompt without arguments has no input.
    assert_eq!(
        available_commands(&messages),
        vec![
            json!({"name": "mcp__ev__simple-prompt", "description": "A prompt with no arguments"}),
            json!({"name": "mcp__ev__args-prompt",
                   "description": "A prompt with two arguments, one required and one optional",
                   "input": {"hint": "<city> [state]"}}),
            json!({"name": "mcp__ev__completable-prompt",
                   "description": "First argument choice narrows values for second argument.",
                   "input": {"hint": "<department> <name>"}}),
            json!({"name": "mcp__ev__resource-prompt",
                   "description": "A prompt that includes an embedded resource reference",
                   "input": {"hint": "<resourceType> <resourceId>"}}),
        ]
    );
    // The words typed after the command fill its arguments, as in `toolhost chat`.
    let requests = model.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(
        agent_runs::last(&requests[0], "user"),
        "What's weather in San Francisco, CA?"
    );
    assert_eq!(
        summary(&messages).last().unwrap(),
        &json!({"response": "session/prompt", "result": {"stopReason": "end_turn"}})
    );
}

#[test]
fn the_editor_chooses_a_configured_model_for_the_next_turn_and_a_loaded_session_keeps_it() {
    let fixture = Fixture::new();
    let model = fixture.model(vec![
        Reply::tool_call("call-slow", "Bash", json!({"command": "sleep 1"})).into(),
        Reply::text("Waited.").into(),
        Reply::text("model-c here.").into(),
    ]);
    fixture.config(&format!(
        "[agent]\nprovider = \"mock\"\n\n[providers.mock]\napi = \"openai-chat\"\n\
         base_url = \"{url}\"\nmodel = \"model-a\"\n\n[providers.spare]\napi = \"openai-chat\"\n\
         base_url = \"{url}\"\nmodel = \"model-b\"\n",
        url = model.openai_base_url()
    ));
    fixture.agent_file(
        "helper",
        "---\nname: helper\ndescription: Helps.\nmodel: spare/model-c\n---\nYou help.\n",
    );
    // An alias names no model of its own: not offered.
    fixture.agent_file(
        "poet",
        "---\nname: poet\ndescription: Rhymes.\nmodel: sonnet\n---\nYou rhyme.\n",
    );
    let messages = run_client(&fixture.dirs, &model, &["model", "spare/model-c"]);
    let option = |current: &str| {
        json!([{
            "id": "model",
            "name": "Model",
            "description": "The model the agent asks from the next request on",
            "category": "model",
            "type": "select",
            "currentValue": current,
            "options": [
                {"value": "mock/model-a", "name": "model-a", "description": "the provider 'mock'"},
                {"value": "spare/model-b", "name": "model-b", "description": "the provider 'spare'"},
                {"value": "spare/model-c", "name": "model-c", "description": "the provider 'spare'"}
            ]
        }])
    };
    let summary = summary(&messages);
    assert_eq!(
        summary[1]["result"]["configOptions"],
        option("mock/model-a"),
        "{summary:#?}"
    );
    let refused = messages
        .iter()
        .find(|message| message.kind == "error")
        .unwrap();
    assert_eq!(refused.payload["code"], -32602);
    assert_eq!(refused.payload["data"]["field"], "value");
    assert_eq!(
        refused.payload["message"],
        "session/set_config_option: value: 'nowhere/no-model' is not a model offered; the \
         models are mock/model-a, spare/model-b, spare/model-c (configure others as \
         [providers.NAME] with a model)"
    );
    assert_eq!(
        summary
            .iter()
            .filter(|entry| entry["response"] == "session/set_config_option")
            .cloned()
            .collect::<Vec<_>>(),
        vec![json!({"response": "session/set_config_option",
                    "result": {"configOptions": option("spare/model-c")}})]
    );
    // The turn that ran when the model was chosen goes on with the old one; the next turn
    // asks the new one.
    let asked: Vec<Value> = model
        .requests()
        .iter()
        .map(|request| request.body["model"].clone())
        .collect();
    assert_eq!(
        asked,
        [json!("model-a"), json!("model-a"), json!("model-c")]
    );

    let session_id = messages[1].payload["response"]["sessionId"]
        .as_str()
        .unwrap()
        .to_owned();
    let load = run_client(&fixture.dirs, &model, &["load", &session_id]);
    let loaded = load
        .iter()
        .find(|message| message.kind == "response" && message.payload["method"] == "session/load")
        .unwrap();
    assert_eq!(
        loaded.payload["response"]["configOptions"],
        option("spare/model-c")
    );
}

#[test]
fn bash_runs_in_the_editors_terminal_when_configured_after_the_same_checks() {
    let fixture = Fixture::new();
    fixture.config("[shell]\neditor_terminal = true\nmax_output_bytes = 1000\n");
    let model = fixture.model(vec![
        Reply::tool_call("call-echo", "Bash", json!({"command": "echo checked"})).into(),
        Reply::tool_call("call-denied", "Bash", json!({"command": "rm -rf /"})).into(),
        Reply::tool_call(
            "call-long",
            "Bash",
            json!({"command": "sleep 30", "timeout": 1}),
        )
        .into(),
        Reply::tool_call("call-seq", "Bash", json!({"command": "seq 1 1000"})).into(),
        Reply::text("Checked.").into(),
        Reply::tool_call("call-slow", "Bash", json!({"command": "sleep 40"})).into(),
    ]);
    let messages = run_client(&fixture.dirs, &model, &["terminal"]);
    let options = json!([
        ["allow_once", "allow_once"],
        ["allow_always", "allow_always"],
        ["reject_once", "reject_once"],
        ["reject_always", "reject_always"]
    ]);
    let create = |command: &str| {
        json!({"terminal/create": {
            "command": "bash",
            "args": ["-c", command],
            "env": ["TOOLHOST_MCP_URL", "TOOLHOST_MCP_TOKEN"],
            "cwd": "$WS",
            "outputByteLimit": 1000
        }})
    };
    let terminal = |id: &str| json!({"type": "terminal", "terminalId": id});
    let numbers: String = (1..=1000).map(|n| format!("{n}\n")).collect();
    let request = |method: &str, id: &str| json!({ method: {"terminalId": id} });
    let call = |id: &str, command: &str, raw: Value| {
        json!({"tool_call": id, "title": format!("Bash: {command}"), "kind": "execute",
               "status": "in_progress", "locations": null, "rawInput": raw})
    };
    let mut summary = summary(&messages);
    // The cancelled command's terminal is killed, read and released as the turn ends: those
    // three may come before or after the prompt's answer.
    let cleanup: Vec<Value> = ["terminal/kill", "terminal/output", "terminal/release"]
        .iter()
        .map(|method| request(method, "term-4"))
        .collect();
    let after_cancel: Vec<Value> = summary
        .iter()
        .filter(|entry| cleanup.contains(entry))
        .cloned()
        .collect();
    summary.retain(|entry| !cleanup.contains(entry));
    assert_eq!(after_cancel, cleanup);
    assert_eq!(
        summary[3..],
        [
            call(
                "call-echo",
                "echo checked",
                json!({"command": "echo checked"})
            ),
            json!({"permission": "call-echo", "options": options}),
            create("echo checked"),
            // The call shows the terminal as soon as it exists.
            json!({"tool_call_update": "call-echo", "status": null, "content": [terminal("term-1")]}),
            request("terminal/wait_for_exit", "term-1"),
            request("terminal/output", "term-1"),
            request("terminal/release", "term-1"),
            json!({"tool_call_update": "call-echo", "status": "completed", "content": [
                terminal("term-1"),
                text_content("checked\n[exit code 0 after N s]")[0],
            ]}),
            // The deny list refuses it before any terminal is made.
            call("call-denied", "rm -rf /", json!({"command": "rm -rf /"})),
            json!({"tool_call_update": "call-denied", "status": "failed", "content": text_content(
                "The command is refused by the command policy: `rm -r /` would delete the whole \
                 filesystem\n\n[Analyze the error above and try a different approach.]"
            )}),
            // Its timeout kills it.
            call(
                "call-long",
                "sleep 30",
                json!({"command": "sleep 30", "timeout": 1})
            ),
            json!({"permission": "call-long", "options": options}),
            create("sleep 30"),
            json!({"tool_call_update": "call-long", "status": null, "content": [terminal("term-2")]}),
            request("terminal/wait_for_exit", "term-2"),
            request("terminal/kill", "term-2"),
            request("terminal/output", "term-2"),
            request("terminal/release", "term-2"),
            json!({"tool_call_update": "call-long", "status": "failed", "content": [
                terminal("term-2"),
                text_content(
                    "[timed out: the command was stopped after 1 s. Run it with a larger \
                     `timeout` (at most 600 s), make it faster, or run it in the background with \
                     its output sent to a file]\n\n[Analyze the error above and try a different \
                     approach.]"
                )[0],
            ]}),
            // The terminal keeps the end of a long output; the model is told the beginning is cut.
            call("call-seq", "seq 1 1000", json!({"command": "seq 1 1000"})),
            json!({"permission": "call-seq", "options": options}),
            create("seq 1 1000"),
            json!({"tool_call_update": "call-seq", "status": null, "content": [terminal("term-3")]}),
            request("terminal/wait_for_exit", "term-3"),
            request("terminal/output", "term-3"),
            request("terminal/release", "term-3"),
            json!({"tool_call_update": "call-seq", "status": "completed", "content": [
                terminal("term-3"),
                text_content(&format!(
                    "[the beginning of the output was cut: the editor's terminal keeps its \
                     end]\n{}[exit code 0 after N s]",
                    &numbers[numbers.len() - 1000..]
                ))[0],
            ]}),
            json!({"agent_message_chunk": "Checked."}),
            json!({"response": "session/prompt", "result": {"stopReason": "end_turn"}}),
            call("call-slow", "sleep 40", json!({"command": "sleep 40"})),
            json!({"permission": "call-slow", "options": options}),
            create("sleep 40"),
            json!({"tool_call_update": "call-slow", "status": null, "content": [terminal("term-4")]}),
            request("terminal/wait_for_exit", "term-4"),
            json!({"tool_call_update": "call-slow", "status": "failed", "content": text_content(
                "Tool 'Bash' was cancelled before it finished.\n\n[Analyze the error above and \
                 try a different approach.]"
            )}),
            json!({"response": "session/prompt", "result": {"stopReason": "cancelled"}}),
        ]
    );
    // The model read what the terminal printed.
    let requests = model.requests();
    let tool_message = requests[1].body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rfind(|message| message["role"] == "tool")
        .unwrap()
        .clone();
    assert!(
        tool_message["content"]
            .to_string()
            .starts_with("\"checked\\n[exit code 0 after "),
        "{tool_message}"
    );
}

#[test]
fn without_the_configuration_bash_runs_in_toolhost_even_when_the_editor_offers_terminals() {
    let fixture = Fixture::new();
    let model = fixture.model(vec![
        Reply::tool_call("call-echo", "Bash", json!({"command": "echo here"})).into(),
        Reply::text("Done.").into(),
        Reply::text("Nothing to run.").into(),
    ]);
    let messages = run_client(&fixture.dirs, &model, &["terminal"]);
    assert!(
        messages
            .iter()
            .all(|message| !message.kind.starts_with("terminal/")),
        "{:#?}",
        summary(&messages)
    );
    let ended = summary(&messages)
        .into_iter()
        .find(|entry| entry["tool_call_update"] == "call-echo" && entry["status"] == "completed")
        .unwrap();
    assert_eq!(
        ended["content"],
        text_content("here\n[exit code 0 after N s]")
    );
}
