//! TypeScript to JavaScript with oxc: types are stripped, enums and namespaces lowered, and
//! everything else left as written (QuickJS runs modern JavaScript as it is).

use std::path::Path;

use oxc::allocator::Allocator;
use oxc::codegen::{Codegen, CodegenOptions};
use oxc::parser::Parser;
use oxc::semantic::SemanticBuilder;
use oxc::span::SourceType;
use oxc::transformer::{TransformOptions, Transformer};

/// Whether a file is TypeScript, by its extension (`.ts`, `.mts`, `.cts`).
pub fn is_typescript(path: &Path) -> bool {
    matches!(
        path.extension().and_then(|ext| ext.to_str()),
        Some("ts" | "mts" | "cts")
    )
}

/// A TypeScript module as JavaScript, with the way back to the lines of the source.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Transpiled {
    /// The JavaScript.
    pub code: String,
    /// For each line of `code` (0-based), the 1-based line of the TypeScript it came from
    /// (0 where nothing maps), so that errors point at the file as written.
    pub line_map: Vec<u32>,
}

/// Transpiles a TypeScript module to JavaScript; the error lists the first problems with their
/// line numbers.
pub fn transpile_typescript(path: &Path, source: &str) -> Result<Transpiled, String> {
    let allocator = Allocator::default();
    let source_type = SourceType::ts().with_module(true);
    let parsed = Parser::new(&allocator, source, source_type).parse();
    if parsed.diagnostics.has_errors() {
        return Err(describe_errors(source, &parsed.diagnostics));
    }
    let mut program = parsed.program;
    // Enum members are evaluated so that `enum Mode { A = 1, B = A * 2 }` lowers correctly.
    let semantic = SemanticBuilder::new().with_enum_eval(true).build(&program);
    if semantic.diagnostics.has_errors() {
        return Err(describe_errors(source, &semantic.diagnostics));
    }
    let scoping = semantic.semantic.into_scoping();
    let transformed = Transformer::new(&allocator, path, &TransformOptions::default())
        .build_with_scoping(scoping, &mut program);
    if transformed.diagnostics.has_errors() {
        return Err(describe_errors(source, &transformed.diagnostics));
    }
    let options = CodegenOptions {
        source_map_path: Some(path.to_path_buf()),
        ..CodegenOptions::default()
    };
    let generated = Codegen::new().with_options(options).build(&program);
    let lines = generated.code.lines().count();
    let mut line_map = vec![0_u32; lines];
    if let Some(map) = &generated.map {
        for token in map.get_tokens() {
            let at = usize::try_from(token.get_dst_line()).unwrap_or(usize::MAX);
            if let Some(slot) = line_map.get_mut(at)
                && *slot == 0
            {
                *slot = token.get_src_line() + 1;
            }
        }
    }
    Ok(Transpiled {
        code: generated.code,
        line_map,
    })
}

fn describe_errors(source: &str, diagnostics: &oxc::diagnostics::Diagnostics) -> String {
    const SHOWN: usize = 3;
    let count = diagnostics.errors().count();
    let mut described: Vec<String> = diagnostics
        .errors()
        .take(SHOWN)
        .map(|error| {
            let line = error
                .labels
                .first()
                .map(|label| line_of(source, label.offset()));
            match line {
                Some(line) => format!("line {line}: {}", error.message),
                None => error.message.to_string(),
            }
        })
        .collect();
    if count > SHOWN {
        described.push(format!("and {} more", count - SHOWN));
    }
    format!("TypeScript error: {}", described.join("; "))
}

fn line_of(source: &str, offset: u32) -> usize {
    let offset = usize::try_from(offset).unwrap_or(usize::MAX);
    source
        .get(..offset.min(source.len()))
        .map_or(1, |before| before.matches('\n').count() + 1)
}
