//! The names a module imports from each specifier (`import { a, b as c } from "x"`,
//! `export { d } from "x"`), read from its source with oxc. The resolver uses them to see a
//! named import a built-in does not export before the engine refuses to link the module: such
//! a name is given a stand-in that fails when used, so that an extension importing one helper
//! toolhost lacks still loads and its other parts work.

use std::collections::HashMap;
use std::path::Path;

use oxc::allocator::Allocator;
use oxc::ast::ast::{ImportDeclarationSpecifier, ImportOrExportKind, ModuleExportName, Statement};
use oxc::parser::Parser;
use oxc::span::SourceType;

/// For each specifier a module names, the value names it imports from it (type-only imports
/// left out).
pub(crate) type NamedImports = HashMap<String, Vec<String>>;

/// The named value imports of the module in `path` (empty when it cannot be read or parsed:
/// the engine reports those problems itself).
pub(crate) fn named_imports(path: &Path) -> NamedImports {
    let Ok(source) = std::fs::read_to_string(path) else {
        return NamedImports::new();
    };
    let allocator = Allocator::default();
    let source_type = SourceType::from_path(path)
        .unwrap_or_else(|_| SourceType::mjs())
        .with_module(true);
    let parsed = Parser::new(&allocator, &source, source_type).parse();
    let mut imports = NamedImports::new();
    for statement in &parsed.program.body {
        match statement {
            Statement::ImportDeclaration(declaration)
                if declaration.import_kind != ImportOrExportKind::Type =>
            {
                let names = imports
                    .entry(declaration.source.value.to_string())
                    .or_default();
                for specifier in declaration.specifiers.iter().flatten() {
                    if let ImportDeclarationSpecifier::ImportSpecifier(named) = specifier
                        && named.import_kind != ImportOrExportKind::Type
                        && let ModuleExportName::IdentifierName(_)
                        | ModuleExportName::IdentifierReference(_) = &named.imported
                    {
                        names.push(named.imported.name().to_string());
                    }
                }
            }
            Statement::ExportFromDeclaration(declaration)
                if declaration.export_kind != ImportOrExportKind::Type =>
            {
                let names = imports
                    .entry(declaration.source.value.to_string())
                    .or_default();
                for specifier in &declaration.specifiers {
                    if specifier.export_kind != ImportOrExportKind::Type {
                        names.push(specifier.local.name().to_string());
                    }
                }
            }
            _ => {}
        }
    }
    imports
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn value_imports_are_listed_and_type_imports_left_out() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("ext.ts");
        std::fs::write(
            &file,
            "import type { A } from \"pkg\";\nimport { type B, c, d as e } from \"pkg\";\n\
             import f from \"other\";\nexport { g } from \"third\";\nexport const h = 1;\n",
        )
        .unwrap();
        let imports = named_imports(&file);
        assert_eq!(
            imports.get("pkg"),
            Some(&vec!["c".to_owned(), "d".to_owned()])
        );
        assert_eq!(imports.get("other"), Some(&Vec::new()));
        assert_eq!(imports.get("third"), Some(&vec!["g".to_owned()]));
    }
}
