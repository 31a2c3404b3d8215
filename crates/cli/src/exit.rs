//! The exit status and the error message, decided in one place for every error that reaches
//! `main`: `1` a failure at run time (a refused archive, a wrong hash, a network error, a
//! file that cannot be written), `2` a usage error (a flag, a name or a configuration that asks
//! for something that cannot be), `130` interrupted. What is a usage error is said by the
//! error's type: the configuration's errors, the names that do not exist, and the [`Usage`]
//! errors the commands raise for their own flags; anything else is a failure at run time.

use std::process::ExitCode;

use toolhost_agent::session_record::SessionChoiceError;
use toolhost_mcp::ServeError;
use toolhost_session::StoreError;
use toolhost_session::views::SessionsError;
use toolhost_skillhub::HubError;

/// A failure at run time.
pub const EXIT_FAILURE: u8 = 1;
/// A usage error (bad flags, arguments that are not JSON, a bad configuration).
pub const EXIT_USAGE: u8 = 2;
/// The command was interrupted (Ctrl-C), as shells report a process ended by SIGINT.
pub const EXIT_INTERRUPTED: u8 = 130;

/// A usage error a command raises itself: what was asked cannot be, and the message says what
/// to write instead.
#[derive(Debug)]
pub struct Usage(pub String);

impl std::fmt::Display for Usage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Usage {}

/// A [`Usage`] error as an `anyhow::Error`, for `return Err(usage(…))`.
pub fn usage(message: impl Into<String>) -> anyhow::Error {
    Usage(message.into()).into()
}

/// The command was interrupted; what it had to say about that it has said.
#[derive(Debug)]
pub struct Interrupted;

impl std::fmt::Display for Interrupted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("interrupted")
    }
}

impl std::error::Error for Interrupted {}

/// The exit status of an error that reached `main`.
pub fn status_of(error: &anyhow::Error) -> u8 {
    if error.chain().any(|cause| cause.is::<Interrupted>()) {
        return EXIT_INTERRUPTED;
    }
    if error.chain().any(is_usage) {
        EXIT_USAGE
    } else {
        EXIT_FAILURE
    }
}

fn is_usage(cause: &(dyn std::error::Error + 'static)) -> bool {
    if let Some(hub) = cause.downcast_ref::<HubError>() {
        return matches!(
            hub,
            HubError::NoHubs
                | HubError::UnknownSkill { .. }
                | HubError::BadId(_)
                | HubError::NotInstalled { .. }
        );
    }
    if let Some(sessions) = cause.downcast_ref::<SessionsError>() {
        return matches!(
            sessions,
            SessionsError::NotFound { .. } | SessionsError::Ambiguous { .. }
        );
    }
    // A store file that is not one toolhost can use is refused like a configuration file that
    // does not parse: the file is named, and nothing runs.
    if let Some(store) = cause.downcast_ref::<StoreError>() {
        return is_usage_store(store);
    }
    // Transparent over its store error, which the chain then skips.
    if let Some(choice) = cause.downcast_ref::<SessionChoiceError>() {
        return match choice {
            SessionChoiceError::Store(store) => is_usage_store(store),
            other => other.is_usage_error(),
        };
    }
    if let Some(serve) = cause.downcast_ref::<ServeError>() {
        return matches!(
            serve,
            ServeError::UnguardedRemote(_) | ServeError::EmptyToken
        );
    }
    cause.is::<Usage>()
        || cause.is::<toolhost_config::ConfigError>()
        || cause.is::<toolhost_config::UnknownAgent>()
        || cause.is::<toolhost_agent::AuditFileError>()
        || matches!(
            cause.downcast_ref::<toolhost_agent::tool_set::ToolSetError>(),
            Some(toolhost_agent::tool_set::ToolSetError::Workspace { .. })
        )
}

fn is_usage_store(store: &StoreError) -> bool {
    matches!(
        store,
        StoreError::NewerSchema { .. }
            | StoreError::Corrupt { .. }
            | StoreError::NotASessionStore { .. }
            | StoreError::SessionNotFound(_)
            | StoreError::AmbiguousPrefix { .. }
    )
}

/// The message for `error`: each cause once. Errors that already quote their cause in their
/// own message (`cannot write X: permission denied`, whose source is `permission denied`) would
/// otherwise say it twice in `{:#}`.
pub fn message_of(error: &anyhow::Error) -> String {
    let mut message = error.to_string();
    for cause in error.chain().skip(1) {
        let cause = cause.to_string();
        if !message.contains(&cause) {
            message.push_str(": ");
            message.push_str(&cause);
        }
    }
    message
}

/// Reports `error` on stderr and returns its exit status.
pub fn report(error: &anyhow::Error) -> ExitCode {
    let status = status_of(error);
    if status == EXIT_INTERRUPTED {
        eprintln!("toolhost: interrupted");
    } else {
        eprintln!("error: {}", message_of(error));
    }
    ExitCode::from(status)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug)]
    struct Quoting(std::io::Error);

    impl std::fmt::Display for Quoting {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            write!(f, "cannot write notes.txt: {}", self.0)
        }
    }

    impl std::error::Error for Quoting {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            Some(&self.0)
        }
    }

    #[test]
    fn a_cause_already_in_the_message_is_not_said_again() {
        let error = anyhow::Error::new(Quoting(std::io::Error::other("permission denied")));
        assert_eq!(
            message_of(&error),
            "cannot write notes.txt: permission denied"
        );
        let wrapped = error.context("installing the skill");
        assert_eq!(
            message_of(&wrapped),
            "installing the skill: cannot write notes.txt: permission denied"
        );
    }

    #[test]
    fn the_type_of_an_error_decides_its_status() {
        assert_eq!(status_of(&usage("--env x: write KEY=VALUE")), EXIT_USAGE);
        assert_eq!(status_of(&anyhow::anyhow!("network down")), EXIT_FAILURE);
        assert_eq!(
            status_of(&anyhow::Error::new(Interrupted)),
            EXIT_INTERRUPTED
        );
        assert_eq!(status_of(&usage("bad").context("while adding")), EXIT_USAGE);
    }
}
