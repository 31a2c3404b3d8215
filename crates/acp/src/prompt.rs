//! A `session/prompt`'s content as the message the model reads. Text is text; an image is an
//! image; a resource link (an `@file` mention) becomes a line naming it, so that the model
//! reads it with its tools, under the permission rules; an embedded resource (the editor sent
//! the file's text) is given inline, marked with its URI. Audio and binary resources are
//! refused with an error that says so.

use agent_client_protocol::Error;
use agent_client_protocol::v1::schema::{ContentBlock as AcpBlock, EmbeddedResourceResource};
use toolhost_core::ContentBlock;

use crate::requests::invalid_params;

/// The message for `prompt`; its text starts with the text of the first block, so a slash
/// command typed first stays first.
pub fn message_content(prompt: &[AcpBlock]) -> Result<Vec<ContentBlock>, Error> {
    let mut content = Vec::new();
    for (index, block) in prompt.iter().enumerate() {
        let field = format!("prompt[{index}]");
        match block {
            AcpBlock::Text(text) => content.push(ContentBlock::text(text.text.clone())),
            AcpBlock::Image(image) => content.push(ContentBlock::Image {
                data: image.data.clone(),
                mime_type: image.mime_type.clone(),
            }),
            AcpBlock::ResourceLink(link) => content.push(ContentBlock::text(format!(
                "[@{}]({}) (read it with your tools if you need it)",
                link.name,
                path_of(&link.uri)
            ))),
            AcpBlock::Resource(embedded) => match &embedded.resource {
                EmbeddedResourceResource::TextResourceContents(resource) => {
                    content.push(ContentBlock::text(format!(
                        "<context uri=\"{}\">\n{}\n</context>",
                        path_of(&resource.uri),
                        resource.text
                    )));
                }
                EmbeddedResourceResource::BlobResourceContents(resource) => {
                    return Err(invalid_params(
                        format!(
                            "session/prompt: {field}: the binary resource {} cannot be sent to \
                             the model (text resources and images can)",
                            resource.uri
                        ),
                        &field,
                    ));
                }
                _ => return Err(unsupported(&field, "this kind of embedded resource")),
            },
            AcpBlock::Audio(_) => return Err(unsupported(&field, "audio")),
            _ => return Err(unsupported(&field, "this kind of content")),
        }
    }
    if content.is_empty() {
        return Err(invalid_params(
            "session/prompt: prompt: the prompt is empty".to_owned(),
            "prompt",
        ));
    }
    Ok(content)
}

/// The text of the prompt's first block, where a slash command would be.
pub fn leading_text(content: &[ContentBlock]) -> Option<&str> {
    content.first().and_then(ContentBlock::as_text)
}

/// A `file://` URI as the path it names; other URIs as they are.
fn path_of(uri: &str) -> &str {
    uri.strip_prefix("file://").unwrap_or(uri)
}

fn unsupported(field: &str, what: &str) -> Error {
    invalid_params(
        format!(
            "session/prompt: {field}: toolhost does not take {what} (initialize lists the \
             prompt capabilities)"
        ),
        field,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    fn blocks(value: serde_json::Value) -> Vec<AcpBlock> {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn links_and_embedded_files_reach_the_model_as_text() {
        let content = message_content(&blocks(json!([
            {"type": "text", "text": "explain"},
            {"type": "resource_link", "name": "lib.rs", "uri": "file:///w/src/lib.rs"},
            {"type": "resource", "resource": {"uri": "file:///w/a.txt", "text": "alpha"}}
        ])))
        .unwrap();
        assert_eq!(
            content,
            vec![
                ContentBlock::text("explain"),
                ContentBlock::text(
                    "[@lib.rs](/w/src/lib.rs) (read it with your tools if you need it)"
                ),
                ContentBlock::text("<context uri=\"/w/a.txt\">\nalpha\n</context>"),
            ]
        );
    }

    #[test]
    fn audio_is_refused_naming_the_block() {
        let error = message_content(&blocks(json!([
            {"type": "text", "text": "listen"},
            {"type": "audio", "data": "AAAA", "mimeType": "audio/wav"}
        ])))
        .unwrap_err();
        assert_eq!(error.data.unwrap()["field"], "prompt[1]");
    }
}
