//! The Rust half of `require()` (its JavaScript half is in `js/prelude.js`): where a
//! specifier leads, and a module's code compiled into the CommonJS wrapper function. Built-ins,
//! CommonJS files and JSON can be required; an ES module cannot (the engine links those only
//! through `import`), and the error says which package asked for which.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rquickjs::context::EvalOptions;
use rquickjs::{Ctx, Function, Object};
use serde_json::json;

use super::resolve::{Request, Resolved, package_of, resolve};
use super::{Format, builtins, format_of, throw_whole};

/// Checks that `source` is JSON; the error names the file, line and column.
pub(crate) fn check_json(name: &str, source: &str) -> Result<(), String> {
    serde_json::from_str::<serde_json::Value>(source)
        .map(|_| ())
        .map_err(|error| {
            format!(
                "{name} is not valid JSON: {} (line {}, column {})",
                error,
                error.line(),
                error.column()
            )
        })
}

/// Adds `resolveRequire` and `compileCommonJs` to the host bindings (`__toolhost_host`) of an
/// engine whose tool lives in `root`.
pub(crate) fn install<'js>(ctx: &Ctx<'js>, root: &Path) -> rquickjs::Result<()> {
    let bindings: Object = ctx.globals().get("__toolhost_host")?;
    let root: Arc<Path> = Arc::from(root);
    let at = Arc::clone(&root);
    bindings.set(
        "resolveRequire",
        Function::new(
            ctx.clone(),
            move |ctx: Ctx<'js>, specifier: String, from: String| -> rquickjs::Result<String> {
                let base = if from.is_empty() {
                    at.join("index.js").to_string_lossy().into_owned()
                } else {
                    from
                };
                match resolve(&at, &base, &specifier, Request::Require) {
                    Ok(Resolved::Builtin(name)) => {
                        Ok(json!({ "id": name, "kind": "builtin" }).to_string())
                    }
                    Ok(Resolved::File(path)) => {
                        Ok(json!({ "id": path, "kind": "file" }).to_string())
                    }
                    Err(message) => Err(throw_whole(&ctx, &message)),
                }
            },
        )?,
    )?;
    bindings.set(
        "compileCommonJs",
        Function::new(
            ctx.clone(),
            move |ctx: Ctx<'js>, id: String| -> rquickjs::Result<Function<'js>> {
                compile(&ctx, &root, &id)
            },
        )?,
    )?;
    Ok(())
}

/// The wrapper `function (exports, require, module, __filename, __dirname)` around the code
/// of `id` (a built-in's name or a file inside `root`).
fn compile<'js>(ctx: &Ctx<'js>, root: &Path, id: &str) -> rquickjs::Result<Function<'js>> {
    let body = match builtins::source(id) {
        Some(source) => source.to_owned(),
        None => {
            // The host bindings are reachable from tool code: never read outside the folder,
            // judged on the real path (no `..`, no symlink out).
            let path = PathBuf::from(id)
                .canonicalize()
                .ok()
                .filter(|real| real.starts_with(root))
                .ok_or_else(|| {
                    throw_whole(
                        ctx,
                        &format!("cannot require {id}: it is not a file inside the tool folder"),
                    )
                })?;
            let source = std::fs::read_to_string(&path)
                .map_err(|error| throw_whole(ctx, &format!("cannot read {id}: {error}")))?;
            match format_of(&path, root, &source) {
                Format::Json => {
                    check_json(id, &source).map_err(|message| throw_whole(ctx, &message))?;
                    format!("module.exports = {source}\n;")
                }
                Format::CommonJs => source,
                Format::EsModule => {
                    let asked = match package_of(&path) {
                        Some(package) => format!(" (of the package '{package}')"),
                        None => String::new(),
                    };
                    return Err(throw_whole(
                        ctx,
                        &format!(
                            "cannot require() {id}{asked}: it is an ES module, which the \
                             embedded engine loads only through `import`; import it instead, or \
                             use a CommonJS build of the package"
                        ),
                    ));
                }
            }
        }
    };
    // On one line, so that line numbers in stack traces stay those of the file.
    let wrapped =
        format!("(function (exports, require, module, __filename, __dirname) {{{body}\n}})");
    let mut options = EvalOptions::default();
    options.global = true;
    options.strict = false;
    options.filename = Some(id.to_owned());
    ctx.eval_with_options(wrapped, options)
}
