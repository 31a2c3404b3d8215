//! What pi extensions keep in a session: their entries (`pi.appendEntry`) and its name
//! (`pi.setSessionName`).

use toolhost_session::{EntryKind, StoreError};

use toolhost_script::ExtensionStore;

use super::RecordedSession;

impl RecordedSession {
    /// Records an extension's state (pi's `appendEntry`).
    pub fn record_custom(
        &self,
        custom_type: &str,
        data: &serde_json::Value,
    ) -> Result<(), StoreError> {
        self.append(&EntryKind::Custom {
            custom_type: custom_type.to_owned(),
            data: data.clone(),
        })
    }

    /// Names the session (pi's `setSessionName`).
    pub fn set_title(&self, title: &str) -> Result<(), StoreError> {
        self.store().set_title(&self.id, title)
    }

    /// The extensions' entries on the path to the leaf, oldest first, as pi's session manager
    /// gives them: `{type: "custom", id, parentId, timestamp, customType, data}`.
    pub fn custom_entries(&self) -> Result<Vec<serde_json::Value>, StoreError> {
        let path = self.store().conversation(&self.id)?;
        let mut previous: Option<String> = None;
        let mut entries = Vec::new();
        for entry in path {
            if let EntryKind::Custom { custom_type, data } = entry.kind {
                let id = entry.id.0.to_string();
                let timestamp = entry
                    .created_at
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |elapsed| elapsed.as_millis());
                entries.push(serde_json::json!({
                    "type": "custom",
                    "id": id,
                    "parentId": previous,
                    "timestamp": timestamp,
                    "customType": custom_type,
                    "data": data,
                }));
                previous = Some(id);
            }
        }
        Ok(entries)
    }
}

impl ExtensionStore for RecordedSession {
    fn custom_entries(&self) -> Result<Vec<serde_json::Value>, String> {
        RecordedSession::custom_entries(self).map_err(|error| error.to_string())
    }

    fn record_custom(&self, custom_type: &str, data: &serde_json::Value) -> Result<(), String> {
        RecordedSession::record_custom(self, custom_type, data).map_err(|error| error.to_string())
    }

    fn set_title(&self, title: &str) -> Result<(), String> {
        RecordedSession::set_title(self, title).map_err(|error| error.to_string())
    }
}
