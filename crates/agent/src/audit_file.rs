//! The audit trail as a JSON-lines file: one line appended per decision.

use std::fs::{File, OpenOptions};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

use serde_json::{Map, Value};
use toolhost_core::permission::{AuditEntry, AuditError, AuditSink};

/// Appends every decision to a file as one JSON object per line:
///
/// ```json
/// {"time":"2025-01-31T09:12:03.120Z","call_id":"c1","tool":"Bash","arguments_sha256":"…","mode":"default","decision":"allow","asked":false,"by":{"kind":"rules","list":"allow","rules":[{"rule":"Bash(git status)","origin":".toolhost/config.toml:3"}]},"subject":{"kind":"shell","value":{"commands":[["git","status"]],"fully_analysed":true}}}
/// ```
#[derive(Debug)]
pub struct JsonLinesAudit {
    path: PathBuf,
    file: Mutex<File>,
}

/// The audit file could not be opened.
#[derive(Debug, thiserror::Error)]
#[error(
    "cannot open the audit log {path} for appending: {source}; fix `[permissions] audit_log` or the folder's permissions"
)]
pub struct AuditFileError {
    /// The file.
    pub path: PathBuf,
    /// What the operating system said.
    pub source: std::io::Error,
}

impl JsonLinesAudit {
    /// Opens `path` for appending, creating it and its folder when missing.
    pub fn open(path: &Path) -> Result<Self, AuditFileError> {
        let error = |source| AuditFileError {
            path: path.to_owned(),
            source,
        };
        if let Some(parent) = path
            .parent()
            .filter(|parent| !parent.as_os_str().is_empty())
        {
            std::fs::create_dir_all(parent).map_err(error)?;
        }
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(error)?;
        Ok(Self {
            path: path.to_owned(),
            file: Mutex::new(file),
        })
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl AuditSink for JsonLinesAudit {
    fn record(&self, entry: &AuditEntry) -> Result<(), AuditError> {
        let fields = serde_json::to_value(entry).map_err(|error| AuditError(error.to_string()))?;
        let mut line = Map::new();
        line.insert(
            "time".to_owned(),
            Value::String(humantime::format_rfc3339_millis(entry.time).to_string()),
        );
        if let Value::Object(fields) = fields {
            line.extend(fields);
        }
        let mut text = Value::Object(line).to_string();
        text.push('\n');
        // One write per line on an append-mode file: lines from concurrent calls never mix.
        let mut file = self.file.lock().unwrap_or_else(PoisonError::into_inner);
        file.write_all(text.as_bytes())
            .and_then(|()| file.flush())
            .map_err(|error| AuditError(format!("{}: {error}", self.path.display())))
    }
}
