//! `require`, `__filename` and `__dirname` for ES modules that use them without defining them:
//! pi loads extensions with jiti, which gives ES modules these CommonJS names, and published
//! extensions rely on it.

use std::path::Path;

/// The ES module `code` of `path`, with `require`, `__filename` and `__dirname` defined when it
/// uses them without defining them: pi loads extensions with jiti, which gives ES modules these
/// CommonJS names, and published extensions rely on it. They go on the first line, so that line
/// numbers stay those of the file.
pub(crate) fn with_commonjs_names(path: &Path, code: String) -> String {
    let file = serde_json::to_string(&path.to_string_lossy()).unwrap_or_default();
    let folder = serde_json::to_string(
        &path
            .parent()
            .map(|folder| folder.to_string_lossy().into_owned())
            .unwrap_or_default(),
    )
    .unwrap_or_default();
    let mut prefix = String::new();
    for (name, value) in [
        (
            "require",
            format!("globalThis.__toolhost.requireFrom({file})"),
        ),
        ("__filename", file.clone()),
        ("__dirname", folder),
    ] {
        if uses(&code, name) && !declares(&code, name) {
            prefix.push_str(&format!("const {name} = {value}; "));
        }
    }
    if prefix.is_empty() {
        code
    } else {
        prefix + &code
    }
}

/// Whether `name` occurs in `code` as a whole word.
fn uses(code: &str, name: &str) -> bool {
    code.match_indices(name).any(|(at, _)| {
        let before = code[..at].chars().next_back();
        let after = code[at + name.len()..].chars().next();
        !before.is_some_and(is_identifier_char) && !after.is_some_and(is_identifier_char)
    })
}

/// Whether `code` declares `name` itself (`const require = createRequire(…)`, `function
/// require`, an import of that name, or a destructuring `const { require } = …`), so that a
/// second declaration would not compile.
fn declares(code: &str, name: &str) -> bool {
    ["const", "let", "var", "function", "class", "import"]
        .iter()
        .any(|keyword| {
            code.match_indices(keyword).any(|(at, _)| {
                let rest = &code[at + keyword.len()..];
                let starts_word = !code[..at]
                    .chars()
                    .next_back()
                    .is_some_and(is_identifier_char);
                if !starts_word || !rest.starts_with(char::is_whitespace) {
                    return false;
                }
                let declared = rest.trim_start();
                let name_follows = declared
                    .strip_prefix(name)
                    .is_some_and(|after| !after.chars().next().is_some_and(is_identifier_char));
                // `{ a, require }` or `[require]`: the names up to the closing bracket.
                let destructured = declared
                    .strip_prefix(['{', '['])
                    .and_then(|inside| inside.split(['}', ']']).next())
                    .is_some_and(|names| uses(names, name));
                name_follows || destructured
            })
        })
}

fn is_identifier_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '$'
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commonjs_names_are_given_to_es_modules_that_use_them_undefined() {
        let path = Path::new("/tools/ext/index.ts");
        let given = with_commonjs_names(path, "const x = require(\"./a.js\");".to_owned());
        assert_eq!(
            given,
            "const require = globalThis.__toolhost.requireFrom(\"/tools/ext/index.ts\"); \
             const x = require(\"./a.js\");"
        );
        let own = "import { createRequire } from \"node:module\";\n\
                   const require = createRequire(import.meta.url);\nrequire(\"./a.js\");";
        assert_eq!(with_commonjs_names(path, own.to_owned()), own);
        let dirname = with_commonjs_names(path, "const here = __dirname;".to_owned());
        assert!(
            dirname.starts_with("const __dirname = \"/tools/ext\"; "),
            "{dirname}"
        );
        let destructured = "const { require, other } = globalThis.loader; require(\"x\");";
        assert_eq!(
            with_commonjs_names(path, destructured.to_owned()),
            destructured
        );
        let imported = "import { require } from \"./shim.js\"; require(\"x\");";
        assert_eq!(with_commonjs_names(path, imported.to_owned()), imported);
        let untouched = "const requirement = 1; x.__dirnames = 2;";
        assert_eq!(with_commonjs_names(path, untouched.to_owned()), untouched);
    }
}
