//! Claude Code's tool names, as its agent files (`tools:`), commands and skills
//! (`allowed-tools:`) write them, and what each is called here. Names that are the same in
//! both (`Read`, `Bash`, `WebFetch`, …) need no entry.

/// What one of Claude Code's tool names stands for in toolhost.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClaudeTool {
    /// The tool of this name here.
    Renamed(&'static str),
    /// Nothing here does what it does: the entry is left out, and the message says why.
    NotOffered(&'static str),
}

/// Why the background-shell tools are not offered.
const FOREGROUND_BASH: &str = "toolhost's Bash runs in the foreground only";

/// Claude Code's names that differ from toolhost's, with what they become.
const CLAUDE_TOOLS: &[(&str, ClaudeTool)] = &[
    ("Task", ClaudeTool::Renamed("spawn_agent")),
    ("Agent", ClaudeTool::Renamed("spawn_agent")),
    ("LS", ClaudeTool::Renamed("ListDir")),
    ("Skill", ClaudeTool::Renamed("read_skill")),
    ("SlashCommand", ClaudeTool::Renamed("slash_command")),
    ("NotebookRead", ClaudeTool::Renamed("Read")),
    (
        "NotebookEdit",
        ClaudeTool::NotOffered("toolhost has no notebook cell editor (Edit changes the file)"),
    ),
    (
        "TodoRead",
        ClaudeTool::NotOffered("TodoWrite's result and reminders show the list"),
    ),
    ("BashOutput", ClaudeTool::NotOffered(FOREGROUND_BASH)),
    ("KillBash", ClaudeTool::NotOffered(FOREGROUND_BASH)),
    ("KillShell", ClaudeTool::NotOffered(FOREGROUND_BASH)),
    (
        "ExitPlanMode",
        ClaudeTool::NotOffered("plan mode ends when the user changes the mode"),
    ),
];

/// What Claude Code's tool `name` is here, when it is one of its names that differ.
pub fn claude_tool(name: &str) -> Option<ClaudeTool> {
    CLAUDE_TOOLS
        .iter()
        .find(|(claude, _)| *claude == name)
        .map(|(_, tool)| *tool)
}

/// `entry` of a tool list (`Task`, `Bash(git:*)`, `mcp__github`) with a Claude Code tool name
/// put as toolhost names it; `Err` says why the entry means nothing here.
pub fn toolhost_entry(entry: &str) -> Result<String, String> {
    let trimmed = entry.trim();
    let (tool, rest) = match trimmed.find('(') {
        Some(open) => trimmed.split_at(open),
        None => (trimmed, ""),
    };
    match claude_tool(tool.trim()) {
        Some(ClaudeTool::Renamed(name)) => Ok(format!("{name}{rest}")),
        Some(ClaudeTool::NotOffered(why)) => Err(format!("'{tool}' is not offered: {why}")),
        None => Ok(trimmed.to_owned()),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn claude_names_become_toolhost_names_and_the_rest_stay() {
        assert_eq!(toolhost_entry("Task").unwrap(), "spawn_agent");
        assert_eq!(toolhost_entry(" LS ").unwrap(), "ListDir");
        assert_eq!(toolhost_entry("MultiEdit").unwrap(), "MultiEdit");
        assert_eq!(toolhost_entry("Read(src/**)").unwrap(), "Read(src/**)");
        assert_eq!(toolhost_entry("mcp__github").unwrap(), "mcp__github");
        assert_eq!(toolhost_entry("TodoWrite").unwrap(), "TodoWrite");
        let refused = toolhost_entry("TodoRead").unwrap_err();
        assert!(refused.contains("'TodoRead' is not offered"), "{refused}");
    }
}
