//! What a server offers besides tools: prompts, resources and completions.
//!
//! The server knows nothing of where they come from: an embedder hands it a
//! [`ServedCatalog`] (`toolhost serve` hands the workspace's slash commands, skills, stored
//! sessions and files), and the server pages the lists and answers the requests with it. A
//! server without one declares none of the three capabilities.

use std::collections::BTreeMap;

use rmcp::ErrorData;
use rmcp::model::{
    ArgumentInfo, CompleteRequestParams, CompleteResult, CompletionInfo, GetPromptResult,
    ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult, PaginatedRequestParams,
    Prompt, ReadResourceResult, Reference, Resource, ResourceTemplate,
};
use serde_json::Value;
use tokio::sync::watch;
use toolhost_core::CallOptions;

/// How many resources one `resources/list` page holds.
pub const RESOURCES_PAGE_SIZE: usize = 500;

/// The prompts, resources and completions a server offers.
#[async_trait::async_trait]
pub trait ServedCatalog: Send + Sync + std::fmt::Debug {
    /// Every prompt, in the order listed.
    fn prompts(&self) -> Vec<Prompt>;

    /// The prompt `name` filled with `arguments`; `options` carry the session and the
    /// cancellation of the request, for the tool calls an expansion makes.
    async fn get_prompt(
        &self,
        name: &str,
        arguments: BTreeMap<String, String>,
        options: CallOptions,
    ) -> Result<GetPromptResult, ErrorData>;

    /// Every resource, in the order listed (the server pages them).
    async fn resources(&self) -> Vec<Resource>;

    /// The resource templates.
    fn resource_templates(&self) -> Vec<ResourceTemplate>;

    /// The contents of the resource at `uri`.
    async fn read_resource(&self, uri: &str) -> Result<ReadResourceResult, ErrorData>;

    /// Values for `argument` of the prompt or template `reference`, best first, given the
    /// arguments already chosen in `context`. An unknown prompt or template is an error.
    async fn complete(
        &self,
        reference: &Reference,
        argument: &ArgumentInfo,
        context: &BTreeMap<String, String>,
    ) -> Result<Vec<String>, ErrorData>;

    /// Told a new number whenever the prompts or the resources may have changed.
    fn subscribe_changes(&self) -> Option<watch::Receiver<u64>> {
        None
    }
}

/// One page of `catalog`'s resources, from `request`'s cursor (an offset into the list).
pub(super) async fn resources_page(
    catalog: &dyn ServedCatalog,
    request: Option<PaginatedRequestParams>,
) -> Result<ListResourcesResult, ErrorData> {
    let start = cursor_offset(request.as_ref())?;
    let all = catalog.resources().await;
    let end = all.len().min(start.saturating_add(RESOURCES_PAGE_SIZE));
    let page = all.get(start..end).unwrap_or_default().to_vec();
    let mut result = ListResourcesResult::with_all_items(page);
    if end < all.len() {
        result.next_cursor = Some(end.to_string());
    }
    Ok(result)
}

/// Every prompt (one page).
pub(super) fn prompts_page(catalog: &dyn ServedCatalog) -> ListPromptsResult {
    ListPromptsResult::with_all_items(catalog.prompts())
}

/// Every resource template (one page).
pub(super) fn templates_page(catalog: &dyn ServedCatalog) -> ListResourceTemplatesResult {
    ListResourceTemplatesResult::with_all_items(catalog.resource_templates())
}

/// `prompts/get`: the arguments must be strings, as the spec has them.
pub(super) async fn get_prompt(
    catalog: &dyn ServedCatalog,
    name: &str,
    arguments: Option<serde_json::Map<String, Value>>,
    options: CallOptions,
) -> Result<GetPromptResult, ErrorData> {
    let mut strings = BTreeMap::new();
    for (key, value) in arguments.unwrap_or_default() {
        let text = match value {
            Value::String(text) => text,
            Value::Null => continue,
            other => {
                return Err(ErrorData::invalid_params(
                    format!("prompt argument '{key}' must be a string, not {other}"),
                    None,
                ));
            }
        };
        strings.insert(key, text);
    }
    catalog.get_prompt(name, strings, options).await
}

/// `completion/complete`, cut to the spec's 100 values with `hasMore` and `total` set.
pub(super) async fn complete(
    catalog: &dyn ServedCatalog,
    request: CompleteRequestParams,
) -> Result<CompleteResult, ErrorData> {
    let context: BTreeMap<String, String> = request
        .context
        .and_then(|context| context.arguments)
        .map(|arguments| arguments.into_iter().collect())
        .unwrap_or_default();
    let mut values = catalog
        .complete(&request.r#ref, &request.argument, &context)
        .await?;
    let total = values.len();
    values.truncate(CompletionInfo::MAX_VALUES);
    let mut info =
        CompletionInfo::new(values).map_err(|error| ErrorData::internal_error(error, None))?;
    info.total = u32::try_from(total).ok();
    info.has_more = Some(total > CompletionInfo::MAX_VALUES);
    Ok(CompleteResult::new(info))
}

fn cursor_offset(request: Option<&PaginatedRequestParams>) -> Result<usize, ErrorData> {
    match request.and_then(|request| request.cursor.as_deref()) {
        None => Ok(0),
        Some(cursor) => cursor.parse().map_err(|_| {
            ErrorData::invalid_params(
                format!("'{cursor}' is not a cursor this server gave: list again from the start"),
                None,
            )
        }),
    }
}
