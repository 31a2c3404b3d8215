//! The client side's typed lines: plain `tools/call` results, parsed straight into rmcp's
//! `CallToolResult` rather than tried as each of the fifteen server results before it (see
//! [`crate::typed_lines`]; ~70 k instructions per call forwarded through the gateway).
//!
//! A line is taken here only when rmcp could read it as nothing but a call result: a response
//! with the three JSON-RPC keys whose result holds `content` and no key a call result lacks
//! (every result type rmcp tries first needs some other key). Anything else, a result whose
//! `resultType` is not `complete` included, is left to rmcp.

use std::borrow::Cow;

use rmcp::model::{
    CallToolResult, ContentBlock, JsonRpcMessage, JsonRpcResponse, JsonRpcVersion2_0, MetaObject,
    RequestId, ResultType, ServerResult,
};
use rmcp::service::{RoleClient, RxJsonRpcMessage};
use serde::{Deserialize, Deserializer};
use serde_json::Value;

/// The envelope of a plain response; any other key makes the line rmcp's.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ResponseEnvelope<'a> {
    #[serde(borrow)]
    jsonrpc: Cow<'a, str>,
    id: RequestId,
    result: CallResultFields,
}

/// Exactly the keys of a call result.
#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct CallResultFields {
    result_type: Option<ResultType>,
    content: Vec<ContentBlock>,
    // A present `null` is kept apart from an absent key, as rmcp keeps it.
    #[serde(default, deserialize_with = "present")]
    structured_content: Option<Value>,
    is_error: Option<bool>,
    #[serde(rename = "_meta")]
    meta: Option<MetaObject>,
}

fn present<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(deserializer).map(Some)
}

/// The line as rmcp would have parsed it, when it is a plain `tools/call` result; `None` for
/// anything else.
pub(super) fn typed_call_result(line: &[u8]) -> Option<RxJsonRpcMessage<RoleClient>> {
    // Anything else is passed over without being parsed twice.
    memchr::memmem::find(line, b"\"content\"")?;
    let envelope: ResponseEnvelope<'_> = serde_json::from_slice(line).ok()?;
    let fields = envelope.result;
    if envelope.jsonrpc != "2.0"
        || fields
            .result_type
            .as_ref()
            .is_some_and(|kind| !kind.is_complete())
    {
        return None;
    }
    let mut result = CallToolResult::default();
    result.result_type = fields.result_type;
    result.content = fields.content;
    result.structured_content = fields.structured_content;
    result.is_error = fields.is_error;
    result.meta = fields.meta;
    Some(JsonRpcMessage::Response(JsonRpcResponse {
        jsonrpc: JsonRpcVersion2_0,
        id: envelope.id,
        result: ServerResult::CallToolResult(result),
    }))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    /// What rmcp's own parser makes of `line`.
    fn rmcp_parse(line: &str) -> RxJsonRpcMessage<RoleClient> {
        serde_json::from_str(line).unwrap()
    }

    #[test]
    fn a_call_result_is_parsed_as_rmcp_parses_it() {
        for line in [
            r#"{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"a\nb"}]}}"#,
            r#"{"jsonrpc":"2.0","id":"x","result":{"content":[],"isError":true,"_meta":{"k":1}}}"#,
            r#"{"jsonrpc":"2.0","id":8,"result":{"content":[{"type":"image","data":"AA==","mimeType":"image/png"}],"structuredContent":null}}"#,
            r#"{"jsonrpc":"2.0","id":9,"result":{"resultType":"complete","content":[],"structuredContent":{"n":2}}}"#,
        ] {
            let typed =
                typed_call_result(line.as_bytes()).unwrap_or_else(|| panic!("not taken: {line}"));
            let parsed = rmcp_parse(line);
            assert!(
                matches!(&parsed, JsonRpcMessage::Response(response)
                    if matches!(response.result, ServerResult::CallToolResult(_))),
                "rmcp reads {line} as something else"
            );
            // rmcp's types have no equality: compared as they would be sent on.
            assert_eq!(
                serde_json::to_value(&typed).unwrap(),
                serde_json::to_value(&parsed).unwrap(),
                "{line}"
            );
        }
    }

    #[test]
    fn anything_else_is_left_to_rmcp() {
        for line in [
            // Other results, and results with keys a call result lacks.
            r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{"contents":[{"uri":"a://b","text":"c"}]}}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{"content":[],"extra":1}}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{"resultType":"task","content":[]}}"#,
            // Not a plain response.
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"content"}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"content":[]}}"#,
            r#"{"jsonrpc":"1.0","id":1,"result":{"content":[]}}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{"content":[]},"x":0}"#,
        ] {
            assert!(typed_call_result(line.as_bytes()).is_none(), "{line}");
        }
    }
}
