//! toolhost's permission modes as the session modes an editor offers in its mode picker
//! (`session/set_mode`), under the names the configuration uses.

use agent_client_protocol::Error;
use agent_client_protocol::v1::schema::{SessionMode, SessionModeId, SessionModeState};
use toolhost_core::permission::PermissionMode;

use crate::requests::invalid_params;

/// What the editor shows for `mode`: a name and a line.
fn described(mode: PermissionMode) -> (&'static str, &'static str) {
    match mode {
        PermissionMode::Default => (
            "Default",
            "Reads run; edits, commands and fetches ask unless a rule allows them",
        ),
        PermissionMode::AcceptEdits => (
            "Accept edits",
            "File edits run without asking; commands and fetches still ask",
        ),
        PermissionMode::Plan => (
            "Plan",
            "Only read-only tools: the agent plans, nothing changes",
        ),
        PermissionMode::BypassPermissions => (
            "Bypass permissions",
            "Nothing asks; deny rules and the shell deny list still refuse",
        ),
    }
}

/// Every mode, `current` marked.
pub fn mode_state(current: PermissionMode) -> SessionModeState {
    let modes = PermissionMode::ALL
        .into_iter()
        .map(|mode| {
            let (name, description) = described(mode);
            SessionMode::new(mode.as_str(), name).description(description.to_owned())
        })
        .collect();
    SessionModeState::new(mode_id(current), modes)
}

/// The id of `mode`: its name in the configuration.
pub fn mode_id(mode: PermissionMode) -> SessionModeId {
    SessionModeId::new(mode.as_str())
}

/// The mode a `session/set_mode` names.
pub fn parse_mode(id: &SessionModeId) -> Result<PermissionMode, Error> {
    id.0.parse::<PermissionMode>()
        .map_err(|error| invalid_params(format!("session/set_mode: modeId: {error}"), "modeId"))
}
