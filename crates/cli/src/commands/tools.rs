//! `toolhost tools`: the registry as a table or as definitions in a provider's shape.

use std::io::Write as _;
use std::process::ExitCode;

use clap::{Args, ValueEnum};
use toolhost_core::{DefinitionFormat, Sensitivity, ToolRegistry};

use toolhost_agent::tool_set::CustomToolSources;

// Arguments of `toolhost tools` (a plain comment: see `Command` in main.rs).
#[derive(Debug, Args)]
pub struct ToolsArgs {
    /// How to print the tools.
    #[arg(long, value_enum, default_value_t = ToolsFormat::Table)]
    format: ToolsFormat,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum ToolsFormat {
    /// One line per tool: name, label, whether it asks, description.
    Table,
    /// Every spec in full, as JSON.
    Json,
    /// OpenAI function-calling definitions.
    Openai,
    /// Anthropic tool definitions.
    Anthropic,
    /// MCP `tools/list` entries.
    Mcp,
    /// A reference page in Markdown: each tool's description and parameters (the book's
    /// tool reference is this output).
    Markdown,
}

/// Prints the registry in the chosen format.
pub fn run(
    registry: &ToolRegistry,
    sources: &CustomToolSources,
    args: &ToolsArgs,
) -> anyhow::Result<ExitCode> {
    let output = match args.format {
        ToolsFormat::Table => table(registry, sources),
        ToolsFormat::Json => serde_json::to_string_pretty(&specs_with_sources(registry, sources)?)?,
        ToolsFormat::Openai => definitions(registry, DefinitionFormat::OpenAi)?,
        ToolsFormat::Anthropic => definitions(registry, DefinitionFormat::Anthropic)?,
        ToolsFormat::Mcp => definitions(registry, DefinitionFormat::Mcp)?,
        ToolsFormat::Markdown => super::tools_reference::page(&registry.specs()),
    };
    // A reader that stops early (`| head`) is an error to return, not a panic.
    let mut stdout = std::io::stdout().lock();
    writeln!(stdout, "{output}")?;
    stdout.flush()?;
    Ok(ExitCode::SUCCESS)
}

fn definitions(registry: &ToolRegistry, format: DefinitionFormat) -> anyhow::Result<String> {
    Ok(serde_json::to_string_pretty(
        &registry.definitions_as(format),
    )?)
}

/// Every spec as JSON; a custom tool's carries `"source"`, the module it came from.
fn specs_with_sources(
    registry: &ToolRegistry,
    sources: &CustomToolSources,
) -> anyhow::Result<Vec<serde_json::Value>> {
    registry
        .specs()
        .into_iter()
        .map(|spec| {
            let mut value = serde_json::to_value(&spec)?;
            if let (Some(source), Some(object)) = (sources.get(&spec.name), value.as_object_mut()) {
                object.insert("source".to_owned(), source.display().to_string().into());
            }
            Ok(value)
        })
        .collect()
}

fn table(registry: &ToolRegistry, sources: &CustomToolSources) -> String {
    let specs = registry.specs();
    if specs.is_empty() {
        return "No tools are registered.".to_owned();
    }
    let rows: Vec<[String; 5]> = specs
        .iter()
        .map(|spec| {
            let asks = match spec.sensitivity {
                Sensitivity::Safe => "never",
                Sensitivity::Edit => "edits",
                Sensitivity::Sensitive => "yes",
            };
            let summary = spec.description.lines().next().unwrap_or_default();
            let source = sources
                .get(&spec.name)
                .map_or_else(|| "built-in".to_owned(), |path| path.display().to_string());
            [
                spec.name.clone(),
                spec.label.clone(),
                asks.to_owned(),
                source,
                summary.to_owned(),
            ]
        })
        .collect();
    let header = ["NAME", "LABEL", "ASKS", "SOURCE", "DESCRIPTION"].map(str::to_owned);
    let widths: Vec<usize> = (0..4)
        .map(|column| {
            std::iter::once(&header)
                .chain(&rows)
                .map(|row| row[column].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    std::iter::once(&header)
        .chain(&rows)
        .map(|row| {
            format!(
                "{:w0$}  {:w1$}  {:w2$}  {:w3$}  {}",
                row[0],
                row[1],
                row[2],
                row[3],
                row[4],
                w0 = widths[0],
                w1 = widths[1],
                w2 = widths[2],
                w3 = widths[3]
            )
            .trim_end()
            .to_owned()
        })
        .collect::<Vec<_>>()
        .join("\n")
}
