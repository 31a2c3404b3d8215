//! `toolhost sessions`: list, show, export, remove and search the stored sessions. The work is
//! in `toolhost_session::views`; this parses the flags, asks before deleting, and prints.

use std::io::{BufRead as _, IsTerminal as _, Write as _};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::SystemTime;

use clap::{Args, Subcommand};
use serde_json::json;
use toolhost_config::Config;
use toolhost_session::SessionStore;
use toolhost_session::views::{
    self, ExportFormat, ListScope, SessionsError, render_list, render_report,
};

/// `toolhost sessions …`.
#[derive(Debug, Subcommand)]
#[command(defer = true)]
pub enum SessionsCommand {
    /// List sessions, most recently changed first: this workspace's, or every one with --all.
    List(ListArgs),
    /// Show one session: its record, usage and cost per turn, branches, last messages.
    Show {
        /// The session's id, or a unique prefix of it.
        id: String,
        /// Print the report as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Print a session: every entry as JSON lines, or the current branch as Markdown.
    Export {
        /// The session's id, or a unique prefix of it.
        id: String,
        /// jsonl (every entry, every branch) or markdown (the conversation of the current
        /// branch).
        #[arg(long, default_value = "jsonl", value_name = "FORMAT")]
        format: ExportFormat,
    },
    /// Delete a session and its entries (asks first on a terminal).
    Rm {
        /// The session's id, or a unique prefix of it.
        id: String,
        /// Delete without asking.
        #[arg(long, short)]
        yes: bool,
        /// Print what was deleted as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Search the messages and tool results of every session (full text, every word).
    Search {
        /// The words to find.
        #[arg(required = true, num_args = 1..)]
        text: Vec<String>,
        /// The most hits to print.
        #[arg(long, default_value_t = 20)]
        limit: usize,
        /// Print the hits as JSON.
        #[arg(long)]
        json: bool,
    },
}

// Arguments of `toolhost sessions list` (a plain comment: see `Command` in main.rs).
#[derive(Debug, Args)]
pub struct ListArgs {
    /// Every workspace's sessions, not only this one's.
    #[arg(long)]
    all: bool,
    /// The most sessions to print.
    #[arg(long, default_value_t = 50)]
    limit: usize,
    /// Print the sessions as JSON.
    #[arg(long)]
    json: bool,
}

/// Exit status when the user answers no to `rm`.
const EXIT_DECLINED: u8 = 1;

/// Runs one `toolhost sessions` command on the store [`views::store_path`] names.
pub fn run(
    workspace: &Path,
    home: Option<&Path>,
    config: &Config,
    command: SessionsCommand,
) -> anyhow::Result<ExitCode> {
    let path = views::store_path(config, home)?;
    let store = views::open_existing(&path)?;
    let now = SystemTime::now();
    match command {
        SessionsCommand::List(args) => {
            let scope = if args.all {
                ListScope::All
            } else {
                ListScope::Workspace(
                    workspace
                        .canonicalize()
                        .unwrap_or_else(|_| workspace.to_path_buf()),
                )
            };
            let list = match &store {
                Some(store) => views::list(store, config, &scope, args.limit)?,
                None => Vec::new(),
            };
            if args.json {
                println!("{}", serde_json::to_string_pretty(&list)?);
            } else {
                print!("{}", render_list(&list, &scope, now));
            }
        }
        SessionsCommand::Show { id, json } => {
            let store = existing(store, &id, &path)?;
            let session = views::find(&store, &id)?;
            let report = views::report(&store, config, &session)?;
            if json {
                println!("{}", serde_json::to_string_pretty(&report)?);
            } else {
                print!("{}", render_report(&report, now));
            }
        }
        SessionsCommand::Export { id, format } => {
            let store = existing(store, &id, &path)?;
            let session = views::find(&store, &id)?;
            let mut stdout = std::io::stdout().lock();
            stdout.write_all(views::export(&store, &session, format)?.as_bytes())?;
            stdout.flush()?;
        }
        SessionsCommand::Rm { id, yes, json } => {
            let mut store = existing(store, &id, &path)?;
            let session = views::find(&store, &id)?;
            let title = session.title.as_deref().unwrap_or("untitled");
            if !yes {
                if !(std::io::stdin().is_terminal() && std::io::stderr().is_terminal()) {
                    return Err(crate::exit::usage(format!(
                        "not deleting session {} ({title}) without confirmation: there is no \
                         terminal to ask on; pass --yes",
                        session.id
                    )));
                }
                if !confirm(&format!(
                    "Delete session {} ({title}, {} entries)? [y/N] ",
                    session.id, session.entry_count
                ))? {
                    eprintln!("Nothing deleted.");
                    return Ok(ExitCode::from(EXIT_DECLINED));
                }
            }
            store.delete(&session.id)?;
            if json {
                println!("{}", json!({"deleted": session.id.as_str()}));
            } else {
                println!("Deleted session {} ({title}).", session.id);
            }
        }
        SessionsCommand::Search { text, limit, json } => {
            let query = text.join(" ");
            let hits = match &store {
                Some(store) => store.search(&query, limit)?,
                None => Vec::new(),
            };
            if json {
                let hits: Vec<_> = hits
                    .iter()
                    .map(|hit| {
                        json!({"session": hit.session.as_str(), "entry": hit.entry.0,
                               "kind": hit.kind, "snippet": hit.snippet})
                    })
                    .collect();
                println!("{}", serde_json::to_string_pretty(&hits)?);
            } else if hits.is_empty() {
                println!("No entry holds every word of '{query}'.");
            } else {
                for hit in &hits {
                    let snippet = hit.snippet.split_whitespace().collect::<Vec<_>>().join(" ");
                    println!(
                        "{}  {:>6}  {:<17}  {snippet}",
                        hit.session, hit.entry, hit.kind
                    );
                }
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The store, or the error a missing one means for a command that names a session.
fn existing(
    store: Option<SessionStore>,
    id: &str,
    path: &Path,
) -> Result<SessionStore, SessionsError> {
    store.ok_or_else(|| SessionsError::NotFound {
        id: id.to_owned(),
        store: PathBuf::from(path),
    })
}

/// Asks on stderr; yes is `y` or `yes`.
fn confirm(question: &str) -> anyhow::Result<bool> {
    let mut stderr = std::io::stderr().lock();
    stderr.write_all(question.as_bytes())?;
    stderr.flush()?;
    let mut answer = String::new();
    std::io::stdin().lock().read_line(&mut answer)?;
    Ok(matches!(
        answer.trim().to_ascii_lowercase().as_str(),
        "y" | "yes"
    ))
}
