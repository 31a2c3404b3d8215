//! What `node:os`, `process` and `node:crypto` learn from the host: the clean environment
//! (the one every child process gets), the home and temp folders, random bytes and digests.

use std::sync::Arc;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use rquickjs::{Ctx, Exception, Function, Object};
use serde_json::json;
use sha1::Digest as _;
use toolhost_exec::{FIXED_VARIABLES, INHERITED_VARIABLES};

use super::ScriptHost;

/// The most random bytes one call may ask for.
pub const MAX_RANDOM_BYTES: usize = 1024 * 1024;

/// `process.env`: the inherited essentials and the fixed variables, as a child gets them.
fn clean_environment() -> serde_json::Map<String, serde_json::Value> {
    let mut environment: serde_json::Map<String, serde_json::Value> = std::env::vars()
        .filter(|(name, _)| INHERITED_VARIABLES.contains(&name.as_str()) || name.starts_with("LC_"))
        .map(|(name, value)| (name, json!(value)))
        .collect();
    for (name, value) in FIXED_VARIABLES {
        environment.insert((*name).to_owned(), json!(value));
    }
    environment
}

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|name| name.trim().to_owned())
        .unwrap_or_else(|_| "localhost".to_owned())
}

/// The digest of `data` with `algorithm` (`sha256`, `sha1`, `md5`, `sha512`, `sha384`).
fn digest(algorithm: &str, data: &[u8]) -> Option<Vec<u8>> {
    Some(
        match algorithm.to_ascii_lowercase().replace('-', "").as_str() {
            "sha256" => sha2::Sha256::digest(data).to_vec(),
            "sha512" => sha2::Sha512::digest(data).to_vec(),
            "sha384" => sha2::Sha384::digest(data).to_vec(),
            "sha224" => sha2::Sha224::digest(data).to_vec(),
            "sha1" => sha1::Sha1::digest(data).to_vec(),
            "md5" => md5::Md5::digest(data).to_vec(),
            _ => return None,
        },
    )
}

pub(super) fn install<'js>(
    ctx: &Ctx<'js>,
    bindings: &Object<'js>,
    host: &Arc<ScriptHost>,
) -> rquickjs::Result<()> {
    let h = Arc::clone(host);
    bindings.set(
        "systemInfo",
        Function::new(ctx.clone(), move || {
            json!({
                "env": clean_environment(),
                "home": h.home().map(|home| home.to_string_lossy().into_owned()),
                "tmpdir": std::env::temp_dir().to_string_lossy(),
                "hostname": hostname(),
                "arch": std::env::consts::ARCH,
                "platform": std::env::consts::OS,
                "cpus": std::thread::available_parallelism().map_or(1, usize::from),
                "pid": std::process::id(),
            })
            .to_string()
        })?,
    )?;
    bindings.set(
        "randomBytes",
        Function::new(
            ctx.clone(),
            |ctx: Ctx<'js>, size: f64| -> rquickjs::Result<String> {
                let size = if size.is_finite() && size >= 0.0 {
                    size as usize
                } else {
                    0
                };
                if size > MAX_RANDOM_BYTES {
                    return Err(Exception::throw_range(
                        &ctx,
                        &format!("randomBytes: at most {MAX_RANDOM_BYTES} bytes at a time"),
                    ));
                }
                let mut bytes = vec![0_u8; size];
                getrandom::fill(&mut bytes).map_err(|error| {
                    Exception::throw_message(&ctx, &format!("no random bytes: {error}"))
                })?;
                Ok(BASE64.encode(bytes))
            },
        )?,
    )?;
    bindings.set(
        "digest",
        Function::new(
            ctx.clone(),
            |ctx: Ctx<'js>, algorithm: String, data: String| -> rquickjs::Result<String> {
                let bytes = BASE64.decode(data).map_err(|error| {
                    Exception::throw_message(&ctx, &format!("digest: bad input: {error}"))
                })?;
                digest(&algorithm, &bytes)
                    .map(|hash| BASE64.encode(hash))
                    .ok_or_else(|| {
                        Exception::throw_message(
                            &ctx,
                            &format!(
                                "crypto: digest '{algorithm}' is not available (sha256, sha512, \
                             sha384, sha224, sha1, md5 are)"
                            ),
                        )
                    })
            },
        )?,
    )
}
