//! Permission rules: `Tool` or `Tool(specifier)`, parsed once when they are loaded.

use std::fmt;
use std::str::FromStr;

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};

use crate::family::PermissionFamily;
use crate::spec::ToolSpec;
use crate::subject::PermissionSubject;

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
    /// The tool of that name and, when the name is a family's rule name (`Read`, `Edit`,
    /// `Bash`, `WebFetch`), every tool that declares that family.
    Exact {
        name: String,
        family: Option<PermissionFamily>,
    },
    /// `mcp__server`: every tool whose origin is that MCP server
    /// ([`crate::ToolOrigin::Mcp`]), whatever its name (a long name cut to 64 bytes too).
    ///
    /// Server parts never contain `__` nor end in `_` (the MCP client makes them so), and
    /// the rule's server is read the same way: `mcp__git_` is `mcp__git`, since a server
    /// configured as `git_` has the part `git`.
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

    /// Whether the rule names this tool (its specifier aside): by its name, its family or
    /// its origin.
    pub fn names_tool(&self, spec: &ToolSpec) -> bool {
        self.tool.matches(spec)
    }

    /// Whether the rule names this call: its tool (see [`Self::names_tool`]) or, for a call
    /// that reaches an MCP server's data, that server (`mcp__server`).
    pub fn names_call(&self, spec: &ToolSpec, subject: &PermissionSubject) -> bool {
        self.names_tool(spec) || self.names_server_of(subject)
    }

    /// Whether this is an `mcp__server` rule naming the server `subject` reaches.
    pub(crate) fn names_server_of(&self, subject: &PermissionSubject) -> bool {
        match (&self.tool, subject) {
            (ToolPattern::McpServer(rule_server), PermissionSubject::McpServer(server)) => {
                *rule_server == server.segment
            }
            _ => false,
        }
    }

    /// Whether the rule names whole MCP servers (`mcp__server`).
    pub(crate) fn names_mcp_server(&self) -> bool {
        matches!(self.tool, ToolPattern::McpServer(_))
    }

    pub(crate) fn specifier(&self) -> Option<&Specifier> {
        self.specifier.as_ref()
    }

    /// Whether the specifier can be read as a path pattern.
    pub(crate) fn has_path_pattern(&self) -> bool {
        matches!(
            self.specifier,
            Some(Specifier::Pattern { paths: Some(_), .. })
        )
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
            Self::Exact {
                name: stem.to_owned(),
                family: PermissionFamily::from_rule_name(stem),
            }
        })
    }

    pub(crate) fn matches(&self, spec: &ToolSpec) -> bool {
        match self {
            Self::Exact { name, family } => {
                *name == spec.name || family.is_some_and(|family| family == spec.family)
            }
            Self::McpServer(server) => spec.origin.mcp_server() == Some(server.as_str()),
            Self::Prefix(prefix) => spec.name.starts_with(prefix.as_str()),
        }
    }
}

impl Specifier {
    /// `tool` is the rule's tool part: a family's rule name fixes how the specifier reads;
    /// for any other tool both readings are kept and the subject the tool reports picks one.
    fn parse(tool: &str, inner: &str) -> Result<Self, String> {
        if let Some(domain) = inner.strip_prefix("domain:") {
            return parse_domain(domain.trim());
        }
        let family = PermissionFamily::from_rule_name(tool);
        if family == Some(PermissionFamily::Network) {
            return Err(format!(
                "{tool} rules name a host: write '{tool}(domain:example.com)'"
            ));
        }
        let command = CommandPattern::parse(inner);
        let paths = match family {
            Some(family) if family.touches_paths() => Some(PathPattern::parse(inner)?),
            Some(_) => {
                if command.words.is_empty() {
                    return Err(format!(
                        "the command is empty: write '{tool}(git status)' for one command or \
                         '{tool}(npm run test:*)' for a prefix"
                    ));
                }
                None
            }
            None => PathPattern::parse(inner).ok(),
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
    /// Claude Code's path forms: `//abs` an absolute path, `~/p` under `$HOME`, `/p` and `./p`
    /// anchored at the workspace root, and a bare `p` read as `.gitignore` reads it (without
    /// an inner `/` it matches at any depth).
    fn parse(inner: &str) -> Result<Self, String> {
        let (absolute, body) = if let Some(rest) = inner.strip_prefix("//") {
            (true, format!("/{rest}"))
        } else if inner == "~" || inner.starts_with("~/") {
            let Some(home) = std::env::var_os("HOME").filter(|home| !home.is_empty()) else {
                return Err(format!(
                    "'~' stands for $HOME, which is not set: write the absolute path after \
                     '//', as in '//home/me/{}'",
                    inner.trim_start_matches(['~', '/'])
                ));
            };
            let home = home.to_string_lossy();
            let home = globset::escape(home.trim_end_matches('/'));
            (true, format!("{home}{}", &inner[1..]))
        } else if inner.starts_with('~') {
            return Err(format!(
                "'{inner}': only '~/' is understood (the home folder); write another user's \
                 folder as an absolute path after '//'"
            ));
        } else if let Some(rest) = inner.strip_prefix('/') {
            (false, rest.to_owned())
        } else if let Some(rest) = inner.strip_prefix("./") {
            (false, rest.to_owned())
        } else {
            // gitignore: a pattern without an inner '/' matches at any depth.
            let anchored = inner.trim_end_matches('/').contains('/');
            (
                false,
                if anchored {
                    inner.to_owned()
                } else {
                    format!("**/{inner}")
                },
            )
        };
        let body = body.trim_end_matches('/');
        if body.is_empty() {
            // `Read(/)`, `Read(./)`: the workspace root and everything in it; `Read(//)`: all.
            let everything = match absolute {
                true => ["/**".to_owned(), "/".to_owned()],
                false => ["**".to_owned(), ".".to_owned()],
            };
            return Self::compile(inner, &everything, absolute);
        }
        // A pattern that names a folder covers what is inside it, as in .gitignore; `dir/**`
        // also covers `dir` itself (a Grep or ListDir of the folder).
        let mut globs = vec![body.to_owned(), format!("{body}/**")];
        if let Some(base) = body.strip_suffix("/**").filter(|base| !base.is_empty()) {
            globs.push(base.to_owned());
        }
        Self::compile(inner, &globs, absolute)
    }

    fn compile(inner: &str, globs: &[String], absolute: bool) -> Result<Self, String> {
        let mut set = GlobSetBuilder::new();
        for glob in globs {
            let compiled = GlobBuilder::new(glob)
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
