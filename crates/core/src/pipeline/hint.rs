//! The hint appended to every error result (R15).

use crate::content::ContentBlock;

/// Appended to every error result so the model changes course instead of retrying blindly.
pub const ERROR_HINT: &str = "[Analyze the error above and try a different approach.]";

/// Ends `content` with [`ERROR_HINT`], once.
pub(crate) fn append_error_hint(content: &mut Vec<ContentBlock>) {
    if let Some(ContentBlock::Text { text }) = content.last_mut() {
        if text.ends_with(ERROR_HINT) {
            return;
        }
        if !text.is_empty() {
            text.push_str("\n\n");
        }
        text.push_str(ERROR_HINT);
    } else {
        content.push(ContentBlock::text(ERROR_HINT));
    }
}
