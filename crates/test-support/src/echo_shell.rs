//! A stand-in for the Bash tool: a shell-family tool that runs nothing.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use toolhost_core::{
    PermissionFamily, PermissionSubject, ShellSubject, ToolContext, ToolError, ToolOutput,
    ToolSpec, TypedTool,
};

/// Parameters of [`EchoShell`].
#[derive(Deserialize, JsonSchema)]
pub struct EchoShellParams {
    /// The command line, words separated by spaces and commands by `&&`.
    pub command: String,
}

/// A sensitive tool named `Bash`, in the shell family, that reports its command to the
/// permission policy as the Bash tool would and answers `ran: COMMAND` without running it:
/// for tests of rules, asks, hooks and audits that need no process.
///
/// The subject has one simple command per `&&`-separated part, split on whitespace, fully
/// analysed, with the warning `runs as root` when the line mentions `sudo`.
pub struct EchoShell;

impl TypedTool for EchoShell {
    type Params = EchoShellParams;

    fn describe(&self) -> ToolSpec {
        ToolSpec::new("Bash", "Runs a command (echoes it).").with_family(PermissionFamily::Shell)
    }

    async fn run(
        &self,
        params: EchoShellParams,
        _ctx: ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput::text(format!("ran: {}", params.command)))
    }

    fn permission_subject(&self, args: &Value) -> PermissionSubject {
        let command = args["command"].as_str().unwrap_or_default();
        PermissionSubject::Shell(ShellSubject {
            commands: command
                .split("&&")
                .map(|part| part.split_whitespace().map(str::to_owned).collect())
                .collect(),
            fully_analysed: true,
            warnings: if command.contains("sudo") {
                vec!["runs as root".into()]
            } else {
                vec![]
            },
            ..ShellSubject::default()
        })
    }
}
