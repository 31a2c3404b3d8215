//! The bindings behind `node:fs` (`js/fs.js`): one asynchronous entry (`fsCall`) for the
//! promise and callback forms and one synchronous entry (`fsCallSync`) for the `*Sync` forms.
//! Both take the same way: the embedder's [`FileGate`] first (the permission rules of Read,
//! ListDir and Write), then its [`ScriptFileSystem`] (the workspace rules) on the blocking pool.

use std::path::Path;
use std::sync::Arc;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use rquickjs::function::Async;
use rquickjs::{Ctx, Function, Object};
use serde::Deserialize;
use serde_json::{Value, json};

use super::ScriptHost;
use super::blocking::block_on;
use super::fs::{FileAccess, FileRequest, FsError, ScriptFileSystem};

/// One file operation, as `fs.js` sends it.
#[derive(Debug, Deserialize)]
#[serde(tag = "op", rename_all = "camelCase")]
enum FsOp {
    Read {
        path: String,
        #[serde(default)]
        encoding: Encoding,
    },
    Write {
        path: String,
        data: String,
        #[serde(default)]
        encoding: Encoding,
    },
    List {
        path: String,
    },
    Stat {
        path: String,
    },
    Mkdir {
        path: String,
        #[serde(default)]
        recursive: bool,
    },
    Remove {
        path: String,
        #[serde(default)]
        recursive: bool,
    },
    Rename {
        path: String,
        to: String,
    },
}

/// How bytes cross the boundary: text as it is, anything else as base64.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
enum Encoding {
    #[default]
    Utf8,
    Base64,
}

/// One module's way to the file system.
#[derive(Clone)]
struct FsGateway {
    host: Arc<ScriptHost>,
    module: Arc<Path>,
}

impl FsGateway {
    async fn authorize(&self, path: &str, access: FileAccess) -> Result<(), FsError> {
        let request = FileRequest {
            module: self.module.to_path_buf(),
            path: path.to_owned(),
            access,
            callers: self.host.in_flight.of(&self.module),
        };
        self.host
            .file_gate
            .authorize(&request)
            .await
            .map_err(|reason| FsError::new(reason).with_code("EACCES"))
    }

    async fn run(self, op: FsOp) -> Result<Value, FsError> {
        let (path, access) = match &op {
            FsOp::Read { path, .. } | FsOp::Stat { path } => (path, FileAccess::Read),
            FsOp::List { path } => (path, FileAccess::List),
            FsOp::Write { path, .. } | FsOp::Mkdir { path, .. } | FsOp::Remove { path, .. } => {
                (path, FileAccess::Write)
            }
            FsOp::Rename { path, to } => {
                self.authorize(to, FileAccess::Write).await?;
                (path, FileAccess::Write)
            }
        };
        self.authorize(path, access).await?;
        let fs = Arc::clone(&self.host.file_system);
        tokio::task::spawn_blocking(move || perform(fs.as_ref(), op))
            .await
            .unwrap_or_else(|error| Err(FsError::new(format!("file operation failed: {error}"))))
    }
}

fn perform(fs: &dyn ScriptFileSystem, op: FsOp) -> Result<Value, FsError> {
    match op {
        FsOp::Read { path, encoding } => {
            let bytes = fs.read(&path)?;
            Ok(match encoding {
                Encoding::Utf8 => json!(String::from_utf8_lossy(&bytes)),
                Encoding::Base64 => json!(BASE64.encode(bytes)),
            })
        }
        FsOp::Write {
            path,
            data,
            encoding,
        } => {
            let bytes = match encoding {
                Encoding::Utf8 => data.into_bytes(),
                Encoding::Base64 => BASE64
                    .decode(data)
                    .map_err(|error| FsError::new(format!("invalid data to write: {error}")))?,
            };
            fs.write(&path, &bytes).map(|()| Value::Null)
        }
        FsOp::List { path } => fs.list(&path).map(|entries| json!(entries)),
        FsOp::Stat { path } => fs.stat(&path).map(|stat| json!(stat)),
        FsOp::Mkdir { path, recursive } => fs.create_dir(&path, recursive).map(|()| Value::Null),
        FsOp::Remove { path, recursive } => fs.remove(&path, recursive).map(|()| Value::Null),
        FsOp::Rename { path, to } => fs.rename(&path, &to).map(|()| Value::Null),
    }
}

fn settle(result: Result<Value, FsError>) -> String {
    match result {
        Ok(value) => json!({ "ok": value }),
        Err(error) => json!({ "error": error.message, "code": error.code }),
    }
    .to_string()
}

fn parse(request: &str) -> Result<FsOp, FsError> {
    serde_json::from_str(request)
        .map_err(|error| FsError::new(format!("invalid file operation: {error}")))
}

/// Binds `fsCall` (a promise of the JSON answer) and `fsCallSync` (the JSON answer).
pub(crate) fn install<'js>(
    ctx: &Ctx<'js>,
    bindings: &Object<'js>,
    host: &Arc<ScriptHost>,
    module: &Arc<Path>,
) -> rquickjs::Result<()> {
    let gate = FsGateway {
        host: Arc::clone(host),
        module: Arc::clone(module),
    };
    let g = gate.clone();
    bindings.set(
        "fsCall",
        Function::new(
            ctx.clone(),
            Async(move |request: String| {
                let gate = g.clone();
                async move {
                    match parse(&request) {
                        Ok(op) => settle(gate.run(op).await),
                        Err(error) => settle(Err(error)),
                    }
                }
            }),
        )?,
    )?;
    bindings.set(
        "fsCallSync",
        Function::new(ctx.clone(), move |request: String| {
            let op = match parse(&request) {
                Ok(op) => op,
                Err(error) => return settle(Err(error)),
            };
            let limit = gate.host.limits().call_time_limit;
            let work = gate.clone().run(op);
            settle(block_on(work, limit).unwrap_or_else(|message| Err(FsError::new(message))))
        })?,
    )
}
