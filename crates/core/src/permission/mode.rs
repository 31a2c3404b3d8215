//! Permission modes: how much the user is asked.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// How much the user is asked (R37). Deny rules and the shell deny list hold in every mode.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum PermissionMode {
    /// Safe tools run; everything else asks unless a rule allows it.
    #[default]
    Default,
    /// Like `default`, but tools that edit files (Write, Edit) no longer ask.
    AcceptEdits,
    /// Only read-only tools are offered and may run: the model plans, nothing changes.
    Plan,
    /// Nothing asks; deny rules and the shell deny list still refuse.
    BypassPermissions,
}

impl PermissionMode {
    /// Every mode, in the order the documentation lists them.
    pub const ALL: [Self; 4] = [
        Self::Default,
        Self::AcceptEdits,
        Self::Plan,
        Self::BypassPermissions,
    ];

    /// The name used in configuration files and on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Default => "default",
            Self::AcceptEdits => "acceptEdits",
            Self::Plan => "plan",
            Self::BypassPermissions => "bypassPermissions",
        }
    }
}

impl fmt::Display for PermissionMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A mode name that is none of [`PermissionMode::ALL`].
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown permission mode '{0}': use one of default, acceptEdits, plan, bypassPermissions")]
pub struct UnknownMode(pub String);

impl FromStr for PermissionMode {
    type Err = UnknownMode;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|mode| mode.as_str() == text)
            .ok_or_else(|| UnknownMode(text.to_owned()))
    }
}
