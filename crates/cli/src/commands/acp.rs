//! `toolhost acp`: toolhost as an Agent Client Protocol agent on stdin/stdout, for editors
//! (Zed, JetBrains IDEs, Neovim). The work is `toolhost_acp`'s; logs stay on stderr.

use std::path::Path;
use std::process::ExitCode;

use clap::Args;
use toolhost_acp::AcpLaunch;
use toolhost_config::Overrides;
use toolhost_config::model_choice::ModelFlags;

// Arguments of `toolhost acp` (a plain comment: see `Command` in main.rs).
#[derive(Debug, Args)]
pub struct AcpArgs {
    /// The provider: a `[providers.NAME]` of the configuration, `openai` or `anthropic`.
    #[arg(long, value_name = "NAME")]
    provider: Option<String>,
    /// The model to ask.
    #[arg(long, value_name = "NAME")]
    model: Option<String>,
}

/// Serves one editor until it closes stdin.
pub fn run(
    workspace: &Path,
    extra_file: Option<&Path>,
    overrides: Overrides,
    agent: &str,
    args: AcpArgs,
) -> anyhow::Result<ExitCode> {
    let mut launch = AcpLaunch::new(workspace.to_path_buf());
    launch.extra_file = extra_file.map(Path::to_path_buf);
    launch.overrides = overrides;
    launch.agent = agent.to_owned();
    launch.model = ModelFlags {
        provider: args.provider,
        model: args.model,
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(toolhost_acp::serve_stdio(launch))?;
    Ok(ExitCode::SUCCESS)
}
