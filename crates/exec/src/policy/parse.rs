//! From shell source to simple commands, with a real parser (tree-sitter-bash).

use tree_sitter::{Node, Parser};

use super::words::{Word, node_text, word_of};

/// One simple command (`name args…`) found anywhere in a command line: inside pipelines,
/// lists, subshells, `$(…)`, backticks, process substitutions, or shell code passed as a
/// string (`bash -c '…'`, `eval '…'`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SimpleCommand {
    /// The command's words: the program, then its arguments, unquoted where static.
    pub words: Vec<Word>,
    /// Variable assignments written before the program (`LC_ALL=C sort` → `LC_ALL=C`).
    pub assignments: Vec<String>,
    /// The command's source text.
    pub source: String,
}

/// Whether a redirection reads or writes its target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RedirectDirection {
    /// `<`
    Read,
    /// `>`, `>>`, `&>`, `>|`, `<>`
    Write,
}

/// A redirection to or from a file (`> out.txt`, `2>> log`, `< in`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Redirect {
    /// Whether the target is read or written.
    pub direction: RedirectDirection,
    /// The file, unquoted where static.
    pub target: Word,
    /// The redirection's source text.
    pub source: String,
}

/// A command and what the parse tells about its surroundings.
#[derive(Debug)]
pub(crate) struct ParsedCommand {
    pub(crate) command: SimpleCommand,
    /// Text fed to its stdin by a heredoc or herestring.
    pub(crate) stdin_text: Option<String>,
    /// Commands nested in its words (`$(…)`, `<(…)`) are `commands[index + 1..nested_end]`.
    pub(crate) nested_end: usize,
}

/// Everything found in one piece of shell source.
#[derive(Debug, Default)]
pub(crate) struct ParsedScript {
    pub(crate) commands: Vec<ParsedCommand>,
    pub(crate) redirects: Vec<Redirect>,
    /// For each pipeline, the index of the first command of each stage, in order.
    pub(crate) pipelines: Vec<Vec<usize>>,
    /// Names of functions that call themselves in a pipeline or in the background.
    pub(crate) fork_bombs: Vec<String>,
    pub(crate) parse_failed: bool,
}

pub(crate) fn parse_script(source: &str) -> ParsedScript {
    let mut parser = Parser::new();
    let mut script = ParsedScript::default();
    if parser
        .set_language(&tree_sitter_bash::LANGUAGE.into())
        .is_err()
    {
        script.parse_failed = true;
        return script;
    }
    let Some(tree) = parser.parse(source, None) else {
        script.parse_failed = true;
        return script;
    };
    let root = tree.root_node();
    script.parse_failed = root.has_error();
    Walker {
        source,
        script: &mut script,
    }
    .visit(root);
    script
}

struct Walker<'w> {
    source: &'w str,
    script: &'w mut ParsedScript,
}

impl Walker<'_> {
    fn visit(&mut self, node: Node<'_>) {
        match node.kind() {
            "command" => self.command(node, None),
            "redirected_statement" => self.redirected_statement(node),
            "pipeline" => self.pipeline(node),
            "function_definition" => self.function_definition(node),
            "file_redirect" => {
                self.file_redirect(node);
                self.visit_children(node);
            }
            "comment" => {}
            _ => self.visit_children(node),
        }
    }

    fn visit_children(&mut self, node: Node<'_>) {
        let mut cursor = node.walk();
        let children: Vec<Node<'_>> = node.children(&mut cursor).collect();
        for child in children {
            self.visit(child);
        }
    }

    fn command(&mut self, node: Node<'_>, heredoc: Option<String>) {
        let mut words = Vec::new();
        let mut assignments = Vec::new();
        let mut stdin_text = heredoc;
        let mut cursor = node.walk();
        for child in node.named_children(&mut cursor) {
            match child.kind() {
                "variable_assignment" => assignments.push(node_text(child, self.source).to_owned()),
                "herestring_redirect" => {
                    let mut inner = child.walk();
                    stdin_text = child
                        .named_children(&mut inner)
                        .last()
                        .map(|value| word_of(value, self.source).text().to_owned());
                }
                "file_redirect" | "heredoc_redirect" | "comment" => {}
                _ => words.push(word_of(child, self.source)),
            }
        }
        let index = self.script.commands.len();
        self.script.commands.push(ParsedCommand {
            command: SimpleCommand {
                words,
                assignments,
                source: node_text(node, self.source).to_owned(),
            },
            stdin_text,
            nested_end: index + 1,
        });
        self.visit_children(node);
        let end = self.script.commands.len();
        if let Some(parsed) = self.script.commands.get_mut(index) {
            parsed.nested_end = end;
        }
    }

    fn redirected_statement(&mut self, node: Node<'_>) {
        let mut heredoc = None;
        let mut cursor = node.walk();
        for child in node.named_children(&mut cursor) {
            if child.kind() == "heredoc_redirect" {
                let mut inner = child.walk();
                heredoc = child
                    .named_children(&mut inner)
                    .find(|part| part.kind() == "heredoc_body")
                    .map(|body| node_text(body, self.source).to_owned());
            }
        }
        let mut cursor = node.walk();
        let children: Vec<Node<'_>> = node.children(&mut cursor).collect();
        for child in children {
            if child.kind() == "command" {
                self.command(child, heredoc.take());
            } else {
                self.visit(child);
            }
        }
    }

    fn pipeline(&mut self, node: Node<'_>) {
        let mut stages = Vec::new();
        let mut cursor = node.walk();
        let children: Vec<Node<'_>> = node.named_children(&mut cursor).collect();
        for child in children {
            let first = self.script.commands.len();
            self.visit(child);
            if self.script.commands.len() > first {
                stages.push(first);
            }
        }
        self.script.pipelines.push(stages);
    }

    fn function_definition(&mut self, node: Node<'_>) {
        let name = node
            .child_by_field_name("name")
            .map(|name| node_text(name, self.source).to_owned());
        let first = self.script.commands.len();
        self.visit_children(node);
        let Some(name) = name else {
            return;
        };
        let body = node
            .child_by_field_name("body")
            .map(|body| node_text(body, self.source))
            .unwrap_or_default();
        let calls_itself = self.script.commands[first..]
            .iter()
            .any(|parsed| parsed.command.words.first().and_then(Word::as_static) == Some(&name));
        if calls_itself && (body.contains('|') || body.contains('&')) {
            self.script.fork_bombs.push(name);
        }
    }

    fn file_redirect(&mut self, node: Node<'_>) {
        let mut operator = String::new();
        let mut cursor = node.walk();
        for child in node.children(&mut cursor) {
            if !child.is_named() {
                operator.push_str(child.kind());
            }
        }
        let Some(target) = node.child_by_field_name("destination") else {
            return;
        };
        // `2>&1`, `>&-`: duplicating a descriptor, not a file.
        if operator.ends_with('&') && matches!(target.kind(), "number" | "word") {
            let text = node_text(target, self.source);
            if text == "-" || text.chars().all(|character| character.is_ascii_digit()) {
                return;
            }
        }
        let direction = if operator.contains('>') {
            RedirectDirection::Write
        } else {
            RedirectDirection::Read
        };
        self.script.redirects.push(Redirect {
            direction,
            target: word_of(target, self.source),
            source: node_text(node, self.source).to_owned(),
        });
    }
}
