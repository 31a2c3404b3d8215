//! The line maps of the TypeScript modules an engine transpiled, so that an error's line is the
//! one the author wrote. The loader records them; the error descriptions read them.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

/// A transpiled module's line map and generated code.
type LineMap = (Vec<u32>, Arc<str>);

/// Per engine: for each transpiled module, its line map and generated code.
#[derive(Clone, Debug, Default)]
pub(crate) struct SourceMaps(Arc<Mutex<HashMap<String, LineMap>>>);

impl SourceMaps {
    /// Records the line map and generated code of the TypeScript module `file`.
    pub(crate) fn record(&self, file: &str, line_map: Vec<u32>, code: &str) {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(file.to_owned(), (line_map, Arc::from(code)));
    }

    pub(crate) fn lookup(&self, file: &str, line: u32) -> (u32, Option<Arc<str>>) {
        let maps = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        match maps.get(file) {
            Some((map, code)) => {
                let index = usize::try_from(line.saturating_sub(1)).unwrap_or(usize::MAX);
                let original = map.get(index).copied().filter(|line| *line > 0);
                (original.unwrap_or(line), Some(Arc::clone(code)))
            }
            None => (line, None),
        }
    }
}
