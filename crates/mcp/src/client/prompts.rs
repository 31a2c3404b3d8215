//! The servers' prompts, for front ends that offer them as slash commands
//! (`/mcp__<server>__<prompt> args`, named as the servers' tools are): every prompt of the
//! started servers that declare prompts, and one prompt fetched and turned into the text of
//! a user message.

use std::collections::BTreeMap;
use std::sync::Arc;

use rmcp::model::{ContentBlock, GetPromptRequestParams, PaginatedRequestParams, Role};
use serde_json::{Map, Value};

use super::clients::McpClients;
use super::connection::ServerConnection;
use super::naming::{sanitize, server_segment};

/// How many pages of `prompts/list` one server is read for.
const MAX_PROMPT_PAGES: usize = 20;

/// One prompt of a started server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct McpPrompt {
    /// Its slash-command name, without the `/`: `mcp__<server>__<prompt>`.
    pub command: String,
    /// The configured server's name.
    pub server: String,
    /// The prompt's name on the server.
    pub name: String,
    /// What the server says it is for.
    pub description: String,
    /// Its arguments in order: name and whether it is required.
    pub arguments: Vec<(String, bool)>,
}

impl McpClients {
    /// Every prompt of the started servers that offer prompts, in server order. A server
    /// that fails to list them is left out, with a warning.
    pub async fn prompts(&self) -> Vec<McpPrompt> {
        let mut all = Vec::new();
        for server in self.started() {
            if server.is_in_process() {
                continue;
            }
            match server_prompts(&server).await {
                Ok(prompts) => all.extend(prompts),
                Err(error) => tracing::warn!(
                    "prompts/list of the MCP server '{}' failed: {error}",
                    server.config.name
                ),
            }
        }
        all
    }

    /// The prompt `prompt` filled with `arguments`, as the text of one user message: each
    /// message's text in order (an assistant's marked as such), embedded text resources
    /// inlined, other content named.
    ///
    /// # Errors
    /// The server is not running, or refused or failed the request.
    pub async fn prompt_text(
        &self,
        prompt: &McpPrompt,
        arguments: BTreeMap<String, String>,
    ) -> Result<String, String> {
        let server = self
            .started()
            .into_iter()
            .find(|server| server.config.name == prompt.server)
            .ok_or_else(|| format!("the MCP server '{}' is not running", prompt.server))?;
        let peer = server.peer().await.map_err(|error| error.to_string())?;
        let arguments: Map<String, Value> = arguments
            .into_iter()
            .map(|(key, value)| (key, Value::String(value)))
            .collect();
        let mut request = GetPromptRequestParams::new(&prompt.name);
        if !arguments.is_empty() {
            request = request.with_arguments(arguments);
        }
        let result = peer.get_prompt(request).await.map_err(|error| {
            format!(
                "prompts/get {} of the MCP server '{}' failed: {error}",
                prompt.name, prompt.server
            )
        })?;
        let mut parts = Vec::new();
        for message in result.messages {
            let text = content_text(&message.content);
            parts.push(match message.role {
                Role::Assistant => format!("(assistant) {text}"),
                _ => text,
            });
        }
        Ok(parts.join("\n\n"))
    }
}

async fn server_prompts(server: &Arc<ServerConnection>) -> Result<Vec<McpPrompt>, String> {
    let peer = server.peer().await.map_err(|error| error.to_string())?;
    if peer
        .peer_info()
        .is_none_or(|info| info.capabilities.prompts.is_none())
    {
        return Ok(Vec::new());
    }
    let mut prompts = Vec::new();
    let mut cursor = None;
    for _ in 0..MAX_PROMPT_PAGES {
        let page = peer
            .list_prompts(Some(PaginatedRequestParams::default().with_cursor(cursor)))
            .await
            .map_err(|error| error.to_string())?;
        let segment = server_segment(&server.config.name);
        prompts.extend(page.prompts.into_iter().map(|prompt| {
            McpPrompt {
                command: format!("mcp__{segment}__{}", sanitize(&prompt.name)),
                server: server.config.name.clone(),
                description: prompt.description.unwrap_or_default(),
                arguments: prompt
                    .arguments
                    .unwrap_or_default()
                    .into_iter()
                    .map(|argument| (argument.name, argument.required.unwrap_or(false)))
                    .collect(),
                name: prompt.name,
            }
        }));
        cursor = page.next_cursor;
        if cursor.is_none() {
            break;
        }
    }
    Ok(prompts)
}

fn content_text(content: &ContentBlock) -> String {
    let json = serde_json::to_value(content).unwrap_or_default();
    let text = |value: &Value| value.as_str().map(str::to_owned);
    match json.get("type").and_then(Value::as_str) {
        Some("text") => json.get("text").and_then(text).unwrap_or_default(),
        Some("resource") => {
            let resource = json.get("resource").cloned().unwrap_or_default();
            let uri = resource.get("uri").and_then(text).unwrap_or_default();
            match resource.get("text").and_then(text) {
                Some(body) => format!("<resource uri=\"{uri}\">\n{body}\n</resource>"),
                None => format!("[binary resource {uri}]"),
            }
        }
        Some("resource_link") => {
            let uri = json.get("uri").and_then(text).unwrap_or_default();
            format!("[resource {uri}]")
        }
        Some(other) => format!("[{other} content left out]"),
        None => String::new(),
    }
}
