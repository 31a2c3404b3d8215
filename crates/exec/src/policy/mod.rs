//! The command policy: a shell command line parsed into simple commands and checked against
//! a deny list, risk warnings and the workspace boundary.
//!
//! Every simple command is found, however it is nested (pipelines, `&&`/`||`/`;` lists,
//! subshells, `$(…)`, backticks, process substitution, heredocs fed to a shell, and the code
//! string of `bash -c`, `sh -c`, `su -c`, `eval` or `echo … | sh`), and checked after peeling
//! off wrappers such as `sudo`, `env`, `timeout` and `xargs`.

mod parse;
mod paths;
mod prefix;
mod rules;
mod words;
mod wrappers;

use std::path::PathBuf;

pub use parse::{Redirect, RedirectDirection, SimpleCommand};
pub use paths::{OutsidePath, normalize};
pub use prefix::command_matches_prefix;
pub use rules::{DenyRule, RiskKind};
pub use words::Word;

use parse::{ParsedScript, parse_script};
use paths::{PathScope, is_block_device};
use rules::{Finding, check_command};
use wrappers::{PRIVILEGE_WRAPPERS, operands, program_name, unwrap_command};

/// How deep shell code inside shell code (`bash -c "sh -c '…'"`) is followed before the
/// command is called unparseable.
pub const MAX_NESTING_DEPTH: usize = 8;

const SHELLS: &[&str] = &["sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish"];
const INTERPRETERS: &[&str] = &["python", "python3", "perl", "ruby", "node"];
const DOWNLOADERS: &[&str] = &["curl", "wget", "fetch", "http", "xh", "aria2c"];

/// The policy's judgement of a whole command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// On the deny list: never run it, whatever the permissions say.
    Denied {
        /// The rule that matched.
        rule: DenyRule,
        /// What the command would do, and where, written for the model.
        reason: String,
    },
    /// Not denied, but with warnings (an unparseable command is always here): ask first.
    Risky,
    /// Nothing found; permission rules decide.
    Ordinary,
}

/// A warning about one part of a command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RiskWarning {
    /// What kind of risk.
    pub kind: RiskKind,
    /// What it means, written for the user and the model.
    pub message: String,
    /// The command (or shell source) it was found in.
    pub command: String,
}

/// Everything the policy found in a command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandAnalysis {
    /// The verdict: denied, risky or ordinary.
    pub verdict: Verdict,
    /// Every simple command, in source order, nested ones included; permission rules such as
    /// `Bash(git status:*)` are evaluated on each of them.
    pub commands: Vec<SimpleCommand>,
    /// Every file redirection.
    pub redirects: Vec<Redirect>,
    /// The warnings, in the order found.
    pub warnings: Vec<RiskWarning>,
    /// Paths in arguments and redirections that lead outside the workspace.
    pub outside_workspace: Vec<OutsidePath>,
}

impl CommandAnalysis {
    /// Whether the command is on the deny list.
    pub fn is_denied(&self) -> bool {
        matches!(self.verdict, Verdict::Denied { .. })
    }

    /// Whether every simple command matches one of `rules` (each a prefix of words, like
    /// `["git", "status"]` for `Bash(git status:*)`). A compound command is allowed only when
    /// all its parts are.
    pub fn all_commands_match(&self, rules: &[&[&str]]) -> bool {
        !self.commands.is_empty()
            && self
                .commands
                .iter()
                .all(|command| rules.iter().any(|rule| command.matches_prefix(rule)))
    }
}

/// The policy for one workspace: analyses command lines.
#[derive(Debug, Clone)]
pub struct CommandPolicy {
    scope: PathScope,
}

impl CommandPolicy {
    /// A policy for the workspace at `workspace_root`; commands run in the root and `~` is the
    /// current user's `HOME`.
    pub fn new(workspace_root: impl Into<PathBuf>) -> Self {
        let root = paths::normalize(&workspace_root.into());
        let mut roots = vec![root.clone()];
        if let Ok(canonical) = root.canonicalize()
            && canonical != root
        {
            roots.push(canonical);
        }
        Self {
            scope: PathScope {
                roots,
                working_dir: root,
                home: std::env::var_os("HOME").map(PathBuf::from),
            },
        }
    }

    /// The folder the command will run in, for resolving relative paths.
    pub fn working_dir(mut self, folder: impl Into<PathBuf>) -> Self {
        self.scope.working_dir = paths::normalize(&folder.into());
        self
    }

    /// The home folder `~` and `$HOME` stand for (`None`: unknown, so always outside).
    pub fn home_dir(mut self, home: Option<PathBuf>) -> Self {
        self.scope.home = home;
        self
    }

    /// Analyses a command line.
    pub fn analyze(&self, command: &str) -> CommandAnalysis {
        let mut analysis = CommandAnalysis {
            verdict: Verdict::Ordinary,
            commands: Vec::new(),
            redirects: Vec::new(),
            warnings: Vec::new(),
            outside_workspace: Vec::new(),
        };
        self.analyze_source(command, 0, &mut analysis);
        if analysis.verdict == Verdict::Ordinary && !analysis.warnings.is_empty() {
            analysis.verdict = Verdict::Risky;
        }
        analysis
    }

    fn analyze_source(&self, source: &str, depth: usize, analysis: &mut CommandAnalysis) {
        if depth > MAX_NESTING_DEPTH {
            warn(
                analysis,
                RiskKind::Unparsed,
                source,
                format!(
                    "shell code nested more than {MAX_NESTING_DEPTH} levels deep was not followed"
                ),
            );
            return;
        }
        let script = parse_script(source);
        if script.parse_failed {
            warn(
                analysis,
                RiskKind::Unparsed,
                source,
                "the command is not valid shell, so nothing about it can be trusted".into(),
            );
        }
        for name in &script.fork_bombs {
            deny(
                analysis,
                DenyRule::ForkBomb,
                format!(
                    "the function `{name}` calls itself in a pipeline or in the background: a fork bomb"
                ),
            );
        }
        for redirect in &script.redirects {
            if let (RedirectDirection::Write, Some(target)) =
                (redirect.direction, redirect.target.as_static())
                && is_block_device(target)
            {
                deny(
                    analysis,
                    DenyRule::RawDiskWrite,
                    format!("`{}` writes onto the disk device {target}", redirect.source),
                );
            }
            analysis
                .outside_workspace
                .extend(self.scope.outside(&redirect.target, &redirect.source));
            analysis.redirects.push(redirect.clone());
        }
        for index in 0..script.commands.len() {
            self.check_simple_command(&script, index, depth, analysis);
        }
        for pipeline in &script.pipelines {
            self.check_pipeline(&script, pipeline, depth, analysis);
        }
    }

    fn check_simple_command(
        &self,
        script: &ParsedScript,
        index: usize,
        depth: usize,
        analysis: &mut CommandAnalysis,
    ) {
        let parsed = &script.commands[index];
        let command = &parsed.command;
        analysis.commands.push(command.clone());
        let (effective, wrappers) = unwrap_command(&command.words);
        for wrapper in wrappers
            .iter()
            .filter(|wrapper| PRIVILEGE_WRAPPERS.contains(&wrapper.as_str()))
        {
            warn(
                analysis,
                RiskKind::PrivilegeEscalation,
                &command.source,
                format!("`{wrapper}` runs the command as another user, usually root"),
            );
        }
        let Some(first) = effective.first() else {
            return;
        };
        let Some(program) = first.as_static().map(program_name) else {
            warn(
                analysis,
                RiskKind::DynamicProgram,
                &command.source,
                format!(
                    "the program `{}` is only known when the command runs",
                    first.text()
                ),
            );
            return;
        };
        for finding in check_command(effective, self.scope.home.as_deref()) {
            match finding {
                Finding::Deny(rule, reason) => deny(analysis, rule, reason),
                Finding::Risk(kind, message) => warn(analysis, kind, &command.source, message),
            }
        }
        if program == "su" {
            warn(
                analysis,
                RiskKind::PrivilegeEscalation,
                &command.source,
                "`su` runs commands as another user, usually root".into(),
            );
        }
        let nested = script
            .commands
            .get(index + 1..parsed.nested_end)
            .unwrap_or_default();
        let runs_download = nested
            .iter()
            .any(|inner| is_downloader(&inner.command.words));
        match shell_code(program, effective) {
            ShellCode::Inline(Word::Static(code)) => {
                self.analyze_source(&code, depth + 1, analysis)
            }
            ShellCode::Inline(Word::Dynamic(_)) if runs_download => {
                warn(
                    analysis,
                    RiskKind::DownloadPipedToShell,
                    &command.source,
                    "downloaded text is run as shell code".into(),
                );
            }
            ShellCode::Inline(Word::Dynamic(code)) => {
                warn(
                    analysis,
                    RiskKind::DynamicShellCode,
                    &command.source,
                    format!("the shell code `{code}` is only known when the command runs"),
                );
            }
            ShellCode::Stdin => {
                if let Some(text) = &parsed.stdin_text {
                    self.analyze_source(text, depth + 1, analysis);
                }
            }
            ShellCode::File | ShellCode::InterpreterStdin if runs_download => {
                warn(
                    analysis,
                    RiskKind::DownloadPipedToShell,
                    &command.source,
                    "a download is run as a script".into(),
                );
            }
            ShellCode::File | ShellCode::InterpreterStdin | ShellCode::None => {}
        }
        analysis
            .outside_workspace
            .extend(
                self.scope
                    .check_arguments(program, effective, &command.source),
            );
    }

    fn check_pipeline(
        &self,
        script: &ParsedScript,
        stages: &[usize],
        depth: usize,
        analysis: &mut CommandAnalysis,
    ) {
        for (position, &stage) in stages.iter().enumerate().skip(1) {
            let consumer = &script.commands[stage].command;
            let (effective, _) = unwrap_command(&consumer.words);
            let Some(program) = effective
                .first()
                .and_then(Word::as_static)
                .map(program_name)
            else {
                continue;
            };
            let code = shell_code(program, effective);
            if !matches!(code, ShellCode::Stdin | ShellCode::InterpreterStdin) {
                continue;
            }
            for &earlier in &stages[..position] {
                let producer = &script.commands[earlier].command;
                let (produced, _) = unwrap_command(&producer.words);
                let printed = printed_text(produced);
                if is_downloader(produced) {
                    warn(
                        analysis,
                        RiskKind::DownloadPipedToShell,
                        &consumer.source,
                        format!("`{}` pipes a download into `{program}`", producer.source),
                    );
                } else if let (ShellCode::Stdin, Some(text)) = (&code, printed) {
                    self.analyze_source(&text, depth + 1, analysis);
                } else if code == ShellCode::Stdin {
                    warn(
                        analysis,
                        RiskKind::PipedIntoShell,
                        &consumer.source,
                        format!("the output of `{}` is run as shell code", producer.source),
                    );
                }
            }
        }
    }
}

fn deny(analysis: &mut CommandAnalysis, rule: DenyRule, reason: String) {
    if !analysis.is_denied() {
        analysis.verdict = Verdict::Denied { rule, reason };
    }
}

fn warn(analysis: &mut CommandAnalysis, kind: RiskKind, command: &str, message: String) {
    analysis.warnings.push(RiskWarning {
        kind,
        message,
        command: command.to_owned(),
    });
}

/// Where a command takes shell code from, if it runs any.
#[derive(Debug, PartialEq, Eq)]
enum ShellCode {
    /// A code string (`bash -c '…'`, `eval …`, `su -c …`).
    Inline(Word),
    /// A shell reading its script from stdin (`… | sh`, `bash <<EOF`).
    Stdin,
    /// A non-shell interpreter reading code from stdin (`… | python3`).
    InterpreterStdin,
    /// A script file (`bash script.sh`, `source x`, `bash <(…)`).
    File,
    /// Not a shell.
    None,
}

fn shell_code(program: &str, words: &[Word]) -> ShellCode {
    let arguments = words.get(1..).unwrap_or_default();
    match program {
        "eval" => {
            let mut code = Vec::new();
            for word in arguments {
                match word {
                    Word::Static(text) => code.push(text.as_str()),
                    Word::Dynamic(_) => return ShellCode::Inline(word.clone()),
                }
            }
            ShellCode::Inline(Word::Static(code.join(" ")))
        }
        "source" | "." => ShellCode::File,
        "su" => {
            let mut iterator = arguments.iter();
            while let Some(word) = iterator.next() {
                if matches!(word.text(), "-c" | "--command") {
                    return iterator
                        .next()
                        .cloned()
                        .map_or(ShellCode::None, ShellCode::Inline);
                }
                if let Some(code) = word.text().strip_prefix("--command=") {
                    return ShellCode::Inline(Word::Static(code.to_owned()));
                }
            }
            ShellCode::None
        }
        _ if SHELLS.contains(&program) => {
            let mut inline = false;
            let mut reads_stdin = false;
            let mut iterator = arguments.iter();
            while let Some(word) = iterator.next() {
                let text = word.text();
                if text == "--" {
                    continue;
                }
                if matches!(text, "-o" | "+o" | "-O" | "+O") {
                    iterator.next();
                } else if (text.starts_with('-') || text.starts_with('+')) && text.len() > 1 {
                    if !text.starts_with("--") {
                        inline |= text.contains('c');
                        reads_stdin |= text.contains('s');
                    }
                } else if inline {
                    return ShellCode::Inline(word.clone());
                } else if reads_stdin {
                    return ShellCode::Stdin;
                } else {
                    return ShellCode::File;
                }
            }
            if inline {
                ShellCode::None
            } else {
                ShellCode::Stdin
            }
        }
        _ if INTERPRETERS.contains(&program) => {
            let script = operands(arguments).into_iter().next();
            match script.map(Word::text) {
                None | Some("-") => ShellCode::InterpreterStdin,
                Some(_) => ShellCode::File,
            }
        }
        _ => ShellCode::None,
    }
}

fn is_downloader(words: &[Word]) -> bool {
    let (effective, _) = unwrap_command(words);
    effective
        .first()
        .and_then(Word::as_static)
        .is_some_and(|program| DOWNLOADERS.contains(&program_name(program)))
}

/// The text `echo`/`printf` with static arguments prints (options of echo dropped).
fn printed_text(words: &[Word]) -> Option<String> {
    let program = words.first().and_then(Word::as_static).map(program_name)?;
    if program != "echo" && program != "printf" {
        return None;
    }
    let mut parts = Vec::new();
    for word in &words[1..] {
        let text = word.as_static()?;
        if program == "echo"
            && parts.is_empty()
            && matches!(text, "-n" | "-e" | "-E" | "-ne" | "-en")
        {
            continue;
        }
        parts.push(text.replace("\\n", "\n"));
    }
    Some(parts.join(" "))
}
