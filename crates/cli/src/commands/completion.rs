//! `toolhost completion SHELL`: the completion script clap_complete writes for the command
//! line as clap knows it, so that it never lags behind a new command or flag.

use std::io::Write as _;
use std::process::ExitCode;

use clap::Args;
use clap_complete::Shell;

// Arguments of `toolhost completion` (a plain comment: see `Command` in main.rs).
#[derive(Debug, Args)]
pub struct CompletionArgs {
    /// The shell to write the script for.
    #[arg(value_enum)]
    shell: Shell,
}

/// Prints the script for `args.shell` on stdout.
pub fn run(args: &CompletionArgs, mut command: clap::Command) -> anyhow::Result<ExitCode> {
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut command, "toolhost", &mut script);
    let mut stdout = std::io::stdout().lock();
    stdout.write_all(&script)?;
    stdout.flush()?;
    Ok(ExitCode::SUCCESS)
}
