//! The audit trail: one entry per decision, written wherever an [`AuditSink`] puts it.

use std::time::SystemTime;

use serde::Serialize;
use serde_json::Value;
use sha2::{Digest as _, Sha256};

use super::decision::{Decision, DecisionSource};
use super::mode::PermissionMode;
use crate::subject::PermissionSubject;

/// One decision, as the audit trail records it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct AuditEntry {
    /// When the decision was made.
    #[serde(skip)]
    pub time: SystemTime,
    /// The call's id.
    pub call_id: String,
    /// The session, when the call belongs to one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// The tool.
    pub tool: String,
    /// [`arguments_digest`] of the arguments the decision was about (after a hook's rewrite).
    pub arguments_sha256: String,
    /// The mode in force.
    pub mode: PermissionMode,
    /// The final decision: allow or deny.
    pub decision: Decision,
    /// Whether a person (or the non-interactive approver) was asked.
    pub asked: bool,
    /// What made the decision.
    pub by: DecisionSource,
    /// What the tool said the call touches (its paths, commands or host), which rules were
    /// matched against.
    #[serde(skip_serializing_if = "PermissionSubject::is_none")]
    pub subject: PermissionSubject,
}

/// Why an entry could not be recorded.
#[derive(Debug, thiserror::Error)]
#[error("cannot write the audit trail: {0}")]
pub struct AuditError(pub String);

/// Where audit entries go. When recording fails, the permission policy refuses the call:
/// nothing runs unrecorded.
pub trait AuditSink: Send + Sync {
    /// Records one entry.
    fn record(&self, entry: &AuditEntry) -> Result<(), AuditError>;
}

/// The SHA-256 (lowercase hex) of the canonical JSON of `args`: object keys sorted, no
/// whitespace. Equal arguments give equal digests whatever order their keys came in.
pub fn arguments_digest(args: &Value) -> String {
    let mut canonical = String::new();
    write_canonical(args, &mut canonical);
    const HEX_DIGITS: &[u8; 16] = b"0123456789abcdef";
    let digest = Sha256::digest(canonical.as_bytes());
    let mut hex = String::with_capacity(2 * digest.len());
    for byte in digest {
        hex.push(char::from(HEX_DIGITS[usize::from(byte >> 4)]));
        hex.push(char::from(HEX_DIGITS[usize::from(byte & 0x0f)]));
    }
    hex
}

fn write_canonical(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            out.push('{');
            for (index, (key, value)) in entries.into_iter().enumerate() {
                if index > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(key.clone()).to_string());
                out.push(':');
                write_canonical(value, out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (index, item) in items.iter().enumerate() {
                if index > 0 {
                    out.push(',');
                }
                write_canonical(item, out);
            }
            out.push(']');
        }
        scalar => out.push_str(&scalar.to_string()),
    }
}
