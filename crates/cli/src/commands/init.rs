//! `toolhost init`: sets a workspace up for toolhost — a commented `.toolhost/config.toml`
//! with every section at its defaults and, when the workspace has none, an `AGENTS.md` to hold
//! the instructions the agent reads. It never overwrites a file, and says what it wrote.

use std::io::Write as _;
use std::path::Path;
use std::process::ExitCode;

use anyhow::Context as _;

/// The configuration `init` writes: every key commented out at its default.
pub const CONFIG_TEMPLATE: &str = include_str!("init_config.toml");
/// The `AGENTS.md` skeleton.
const AGENTS_TEMPLATE: &str = include_str!("init_agents.md");

/// Writes what is missing of the two files and reports each.
pub fn run(workspace: &Path) -> anyhow::Result<ExitCode> {
    if !workspace.is_dir() {
        return Err(crate::exit::usage(format!(
            "cannot use {} as the workspace: it is not a folder",
            workspace.display()
        )));
    }
    let config = workspace.join(".toolhost/config.toml");
    let agents = workspace.join("AGENTS.md");
    for (path, text) in [(&config, CONFIG_TEMPLATE), (&agents, AGENTS_TEMPLATE)] {
        if create_new(path, text)? {
            println!("wrote {}", path.display());
        } else {
            println!("kept {} (it exists)", path.display());
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Writes `text` to `path` unless something is there already: `false` then. The file is
/// created with `create_new`, so that a file that appears meanwhile is never replaced.
fn create_new(path: &Path, text: &str) -> anyhow::Result<bool> {
    if let Some(folder) = path.parent() {
        std::fs::create_dir_all(folder)
            .with_context(|| format!("cannot create {}", folder.display()))?;
    }
    let mut file = match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
    {
        Ok(file) => file,
        Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => return Ok(false),
        Err(error) => {
            return Err(error).with_context(|| format!("cannot create {}", path.display()));
        }
    };
    file.write_all(text.as_bytes())
        .and_then(|()| file.sync_all())
        .with_context(|| format!("cannot write {}", path.display()))?;
    Ok(true)
}
