//! Permission rules: `Tool` or `Tool(specifier)`, parsed once when they are loaded.

use std::fmt;
use std::str::FromStr;

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};

/// Tools that read files: a `Read(…)` rule applies to all of them (on the paths they report).
pub const READ_FAMILY: [&str; 4] = ["Read", "Grep", "Glob", "ListDir"];

/// Tools that change files: an `Edit(…)` rule applies to both; a `Write(…)` rule to Write only.
pub const EDIT_FAMILY: [&str; 2] = ["Edit", "Write"];

/// Tools whose specifier is a shell command.
const SHELL_TOOLS: [&str; 1] = ["Bash"];

/// Tools whose specifier must be `domain:HOST`.
const DOMAIN_TOOLS: [&str; 1] = ["WebFetch"];

/// A permission rule such as `Bash(npm run test:*)`, `Read(src/**)`,
/// `WebFetch(domain:example.com)`, `mcp__github` or `Write`.
#[derive(Clone, Debug)]
pub struct PermissionRule {
    text: String,
    tool: ToolPattern,
    specifier: Option<Specifier>,
    origin: Option<String>,
}

/// Which tools a rule names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum ToolPattern {
    /// One tool (and, for `Read` and `Edit`, the rest of its family).
    Exact(String),
    /// `mcp__server`: every tool of that MCP server, named `mcp__<server>__<tool>`.
    ///
    /// The client's sanitiser (`toolhost_mcp::client::naming::server_segment`) keeps `__` out
    /// of server segments and drops a trailing `_`, so the first `__` after the segment ends
    /// it: `mcp__git` names `mcp__git__status` and `mcp__git___private` (tool `_private`), not
    /// the tools of `git-x` or `gitx`. The rule's server is read the same way (`mcp__git_` is
    /// `mcp__git`: a server configured as `git_` has the segment `git`).
    McpServer(String),
    /// `Name*`: every tool whose name starts with `Name` (`mcp__*`, `mcp__github__*`).
    Prefix(String),
}

/// What a rule's parenthesised part says.
#[derive(Clone, Debug)]
pub(crate) enum Specifier {
    /// `domain:example.com` (the host and its subdomains) or `domain:*.example.com` (only
    /// subdomains).
    Domain { host: String, subdomains_only: bool },
    /// Anything else: a shell command for shell subjects, a path glob for path subjects.
    Pattern {
        command: CommandPattern,
        paths: Option<PathPattern>,
    },
}

/// `git status` (exact argv) or `npm run test:*` (argv starting with these words).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct CommandPattern {
    pub(crate) words: Vec<String>,
    pub(crate) prefix: bool,
}

/// A gitignore-style path pattern, compiled.
#[derive(Clone, Debug)]
pub(crate) struct PathPattern {
    pub(crate) set: GlobSet,
    /// `//abs/path` patterns match absolute paths; all others match workspace-relative ones.
    pub(crate) absolute: bool,
}

/// Why a rule could not be parsed; says what is expected instead.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("invalid permission rule '{rule}': {problem}")]
pub struct RuleParseError {
    /// The rule as written.
    pub rule: String,
    /// What is wrong and what to write instead.
    pub problem: String,
}

impl PermissionRule {
    /// Parses `Tool` or `Tool(specifier)`.
    pub fn parse(text: &str) -> Result<Self, RuleParseError> {
        let trimmed = text.trim();
        let fail = |problem: String| RuleParseError {
            rule: trimmed.to_owned(),
            problem,
        };
        let (name, specifier) = match trimmed.find('(') {
            None => (trimmed, None),
            Some(open) => {
                let Some(inner) = trimmed[open + 1..].strip_suffix(')') else {
                    return Err(fail(
                        "a specifier must be closed by ')' at the end, as in 'Bash(git status)'"
                            .to_owned(),
                    ));
                };
                (&trimmed[..open], Some(inner.trim()))
            }
        };
        let tool = ToolPattern::parse(name).map_err(fail)?;
        let specifier = match specifier {
            None => None,
            Some("") => {
                return Err(fail(format!(
                    "the specifier is empty: write '{name}' alone to match every call of it"
                )));
            }
            Some(inner) => Some(Specifier::parse(name, inner).map_err(fail)?),
        };
        let text = match specifier {
            None => name.to_owned(),
            Some(_) => format!(
                "{name}({})",
                trimmed[name.len() + 1..trimmed.len() - 1].trim()
            ),
        };
        Ok(Self {
            text,
            tool,
            specifier,
            origin: None,
        })
    }

    /// The same rule, remembering where it was written (`~/.toolhost/config.toml:4`,
    /// `--allow`), for error messages and the audit trail.
    #[must_use]
    pub fn with_origin(mut self, origin: impl Into<String>) -> Self {
        self.origin = Some(origin.into());
        self
    }

    /// The rule as text, normalised (`Bash(git status)`).
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// Where the rule was written, when known.
    pub fn origin(&self) -> Option<&str> {
        self.origin.as_deref()
    }

    /// Whether the rule has a specifier (`Tool(…)`) rather than naming a whole tool.
    pub fn has_specifier(&self) -> bool {
        self.specifier.is_some()
    }

    /// Whether the rule names this tool (its specifier aside).
    pub fn names_tool(&self, tool: &str) -> bool {
        self.tool.matches(tool)
    }

    pub(crate) fn specifier(&self) -> Option<&Specifier> {
        self.specifier.as_ref()
    }
}

impl PartialEq for PermissionRule {
    fn eq(&self, other: &Self) -> bool {
        self.text == other.text
    }
}

impl Eq for PermissionRule {}

impl fmt::Display for PermissionRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl FromStr for PermissionRule {
    type Err = RuleParseError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Self::parse(text)
    }
}

impl ToolPattern {
    fn parse(name: &str) -> Result<Self, String> {
        let (stem, wildcard) = match name.strip_suffix('*') {
            Some(stem) => (stem, true),
            None => (name, false),
        };
        if name.is_empty() {
            return Err("the tool name is missing, as in 'Read(src/**)'".to_owned());
        }
        if !stem
            .bytes()
            .all(|byte| byte.is_ascii_alphanumeric() || byte == b'_' || byte == b'-')
        {
            return Err(format!(
                "'{name}' is not a tool name: use letters, digits, '_' and '-', optionally \
                 ending in '*' (as in 'mcp__github__*')"
            ));
        }
        Ok(if wildcard {
            Self::Prefix(stem.to_owned())
        } else if let Some(server) = stem
            .strip_prefix("mcp__")
            .map(|server| server.trim_end_matches('_'))
            .filter(|server| !server.is_empty() && !server.contains("__"))
        {
            Self::McpServer(server.to_owned())
        } else {
            Self::Exact(stem.to_owned())
        })
    }

    pub(crate) fn matches(&self, tool: &str) -> bool {
        match self {
            Self::Exact(name) if name == "Read" => READ_FAMILY.contains(&tool),
            Self::Exact(name) if name == "Edit" => EDIT_FAMILY.contains(&tool),
            Self::Exact(name) => name == tool,
            Self::McpServer(server) => tool
                .strip_prefix("mcp__")
                .and_then(|rest| rest.strip_prefix(server.as_str()))
                .is_some_and(|rest| rest.is_empty() || rest.starts_with("__")),
            Self::Prefix(prefix) => tool.starts_with(prefix.as_str()),
        }
    }
}

impl Specifier {
    fn parse(tool: &str, inner: &str) -> Result<Self, String> {
        if let Some(domain) = inner.strip_prefix("domain:") {
            return parse_domain(domain.trim());
        }
        if DOMAIN_TOOLS.contains(&tool) {
            return Err(format!(
                "{tool} rules name a host: write '{tool}(domain:example.com)'"
            ));
        }
        let command = CommandPattern::parse(inner);
        let paths = if READ_FAMILY.contains(&tool) || EDIT_FAMILY.contains(&tool) {
            Some(PathPattern::parse(inner)?)
        } else if SHELL_TOOLS.contains(&tool) {
            if command.words.is_empty() {
                return Err(format!(
                    "the command is empty: write '{tool}(git status)' for one command or \
                     '{tool}(npm run test:*)' for a prefix"
                ));
            }
            None
        } else {
            // A tool core does not know: the subject it reports decides which reading applies.
            PathPattern::parse(inner).ok()
        };
        Ok(Self::Pattern { command, paths })
    }
}

fn parse_domain(domain: &str) -> Result<Specifier, String> {
    let (host, subdomains_only) = match domain.strip_prefix("*.") {
        Some(host) => (host, true),
        None => (domain, false),
    };
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    let valid = !host.is_empty()
        && host
            .bytes()
            .all(|byte| byte.is_ascii_alphanumeric() || byte == b'-' || byte == b'.');
    if !valid {
        return Err(format!(
            "'{domain}' is not a host name: write 'domain:example.com' (no scheme, path or port)"
        ));
    }
    Ok(Specifier::Domain {
        host,
        subdomains_only,
    })
}

impl CommandPattern {
    fn parse(inner: &str) -> Self {
        let (body, prefix) = match inner.strip_suffix(":*") {
            Some(body) => (body, true),
            None => (inner, false),
        };
        Self {
            words: body.split_whitespace().map(str::to_owned).collect(),
            prefix,
        }
    }
}

impl PathPattern {
    fn parse(inner: &str) -> Result<Self, String> {
        if inner.starts_with('~') {
            return Err(format!(
                "'~' is not expanded in rules: write the absolute path after '//', as in \
                 '//home/me/notes/**', or a path relative to the workspace ('{}')",
                inner.trim_start_matches(['~', '/'])
            ));
        }
        let (absolute, body) = if let Some(rest) = inner.strip_prefix("//") {
            (true, format!("/{rest}"))
        } else if let Some(rest) = inner.strip_prefix('/') {
            (false, rest.to_owned())
        } else {
            let rest = inner.strip_prefix("./").unwrap_or(inner);
            // gitignore: a pattern without an inner '/' matches at any depth.
            let anchored = rest.trim_end_matches('/').contains('/');
            (
                false,
                if anchored {
                    rest.to_owned()
                } else {
                    format!("**/{rest}")
                },
            )
        };
        let body = body.trim_end_matches('/');
        if body.is_empty() || body == "**/" {
            return Err("the path is empty: write a path or glob such as 'src/**'".to_owned());
        }
        let mut set = GlobSetBuilder::new();
        // A pattern that names a folder covers what is inside it, as in .gitignore; `dir/**`
        // also covers `dir` itself (a Grep or ListDir of the folder).
        let mut globs = vec![body.to_owned(), format!("{body}/**")];
        if let Some(base) = body.strip_suffix("/**").filter(|base| !base.is_empty()) {
            globs.push(base.to_owned());
        }
        for glob in globs {
            let compiled = GlobBuilder::new(&glob)
                .literal_separator(true)
                .backslash_escape(true)
                .build()
                .map_err(|error| format!("'{inner}' is not a valid glob: {}", error.kind()))?;
            set.add(compiled);
        }
        let set = set
            .build()
            .map_err(|error| format!("'{inner}' is not a valid glob: {error}"))?;
        Ok(Self { set, absolute })
    }
}
