//! Skills (R27) as Claude Code writes them: discovery, precedence, bad front matter, what the
//! tools and the system prompt show, and the read-only roots of skill folders.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::sync::Arc;

use pretty_assertions::assert_eq;
use serde_json::json;
use toolhost_agent::skills::{ListSkills, ReadSkill};
use toolhost_catalog::skills::{SkillCatalog, SkillScope, SkillWarning};
use toolhost_core::ToolRegistry;
use toolhost_test_support::{HomeAndWorkspace, copy_tree, write_file};

const FIXTURE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/claude-project");

/// The Claude Code fixture project copied into a fresh workspace.
fn claude_project() -> HomeAndWorkspace {
    let dirs = HomeAndWorkspace::new();
    copy_tree(Path::new(FIXTURE), &dirs.workspace);
    dirs
}

fn skill_md(name: &str, description: &str) -> String {
    format!("---\nname: {name}\ndescription: {description}\n---\nBody of {name}.\n")
}

#[test]
fn a_claude_code_skills_folder_loads_unchanged() {
    let dirs = claude_project();
    let catalog = SkillCatalog::for_workspace(&dirs.workspace, Some(&dirs.home));
    assert_eq!(catalog.warnings(), []);
    let names: Vec<&str> = catalog.skills().iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["commit-messages", "pdf-forms"]);
    let pdf = catalog.get("pdf-forms").unwrap();
    assert_eq!(
        pdf.allowed_tools.as_deref(),
        Some(&["Read".to_owned(), "Bash(python3:*)".to_owned()][..])
    );
    assert_eq!(pdf.license.as_deref(), Some("Apache-2.0"));
    assert_eq!(
        pdf.metadata,
        Some(json!({"author": "example", "version": "1.0"}))
    );
    assert_eq!(pdf.scope, SkillScope::Project);
    assert!(!pdf.from_hub);
    assert_eq!(
        pdf.other_files().0,
        [PathBuf::from("FORMS.md"), PathBuf::from("scripts/fill.py")]
    );
    // A colon in a plain description is text, as Claude Code reads it.
    assert_eq!(
        catalog.get("commit-messages").unwrap().description,
        "Write commit messages: a short summary line, then why."
    );
}

#[test]
fn project_skills_win_over_user_skills_with_a_warning() {
    let dirs = HomeAndWorkspace::new();
    write_file(
        dirs.workspace.join(".toolhost/skills/deploy/SKILL.md"),
        skill_md("deploy", "Project deploy."),
    );
    write_file(
        dirs.home.join(".claude/skills/deploy/SKILL.md"),
        skill_md("deploy", "User deploy."),
    );
    write_file(
        dirs.home.join(".claude/skills/notes/SKILL.md"),
        skill_md("notes", "User notes."),
    );
    write_file(
        dirs.workspace.join(".agents/skills/lint/SKILL.md"),
        skill_md("lint", "Agents lint."),
    );
    let catalog = SkillCatalog::for_workspace(&dirs.workspace, Some(&dirs.home));
    let found: Vec<(&str, &str)> = catalog
        .skills()
        .iter()
        .map(|s| (s.name.as_str(), s.description.as_str()))
        .collect();
    assert_eq!(
        found,
        [
            ("deploy", "Project deploy."),
            ("lint", "Agents lint."),
            ("notes", "User notes.")
        ]
    );
    let [
        SkillWarning::Shadowed {
            name,
            kept,
            shadowed,
        },
    ] = catalog.warnings()
    else {
        panic!("{:?}", catalog.warnings());
    };
    assert_eq!(name, "deploy");
    assert!(kept.starts_with(&dirs.workspace));
    assert!(shadowed.starts_with(&dirs.home));
    assert!(
        catalog.warnings()[0]
            .to_string()
            .contains("project skills win")
    );
}

#[test]
fn bad_front_matter_skips_the_skill_with_a_warning_naming_file_and_line() {
    let dirs = HomeAndWorkspace::new();
    write_file(
        dirs.workspace.join(".claude/skills/broken/SKILL.md"),
        "---\nname: broken\ndescription: fine\nallowed-tools: [Read\n---\nbody\n",
    );
    write_file(
        dirs.workspace.join(".claude/skills/nodesc/SKILL.md"),
        // No description, and no paragraph to take one from.
        "---\nname: nodesc\n---\n# Only a heading\n",
    );
    write_file(
        dirs.workspace.join(".claude/skills/good/SKILL.md"),
        skill_md("good", "Good."),
    );
    let catalog = SkillCatalog::for_workspace(&dirs.workspace, None);
    assert_eq!(catalog.skills().len(), 1);
    let warnings: Vec<String> = catalog.warnings().iter().map(|w| w.to_string()).collect();
    assert_eq!(warnings.len(), 2, "{warnings:?}");
    let broken = dirs.workspace.join(".claude/skills/broken/SKILL.md");
    assert!(
        warnings[0].starts_with(&format!("skill skipped: {}:", broken.display())),
        "{warnings:?}"
    );
    let line: usize = warnings[0]
        .split(':')
        .nth(2)
        .unwrap()
        .parse()
        .unwrap_or_else(|_| panic!("no line in {}", warnings[0]));
    assert!((4..=5).contains(&line), "{warnings:?}");
    assert!(warnings[1].contains("nodesc/SKILL.md:1: the front matter has no `description`"));
}

#[test]
fn skill_folders_outside_the_workspace_are_its_read_only_roots() {
    let dirs = claude_project();
    write_file(
        dirs.home.join(".claude/skills/x/SKILL.md"),
        skill_md("x", "User x."),
    );
    let catalog = SkillCatalog::for_workspace(&dirs.workspace, Some(&dirs.home));
    assert_eq!(
        catalog.read_only_roots(&dirs.workspace),
        [dirs.home.join(".claude/skills/x")]
    );
}

#[tokio::test]
async fn list_skills_and_read_skill_disclose_progressively() {
    let dirs = claude_project();
    let catalog = Arc::new(SkillCatalog::for_workspace(&dirs.workspace, None));
    let registry = ToolRegistry::new();
    registry
        .register(ListSkills::new(Arc::clone(&catalog)))
        .unwrap();
    registry.register(ReadSkill::new(catalog)).unwrap();

    let listed = registry.execute("1", "list_skills", json!({})).await;
    assert_eq!(
        listed.text(),
        "2 skills (read one with read_skill):\n\
         - commit-messages: Write commit messages: a short summary line, then why.\n\
         - pdf-forms: Fill in PDF forms and extract their fields. Use when the user mentions \
         PDF forms or AcroForm fields.\n"
    );
    assert!(!listed.text().contains("Filling PDF forms"), "no bodies");

    let read = registry
        .execute("2", "read_skill", json!({"name": "pdf-forms"}))
        .await;
    assert!(!read.is_error, "{}", read.text());
    let folder = dirs.workspace.join(".claude/skills/pdf-forms");
    assert_eq!(
        read.text(),
        format!(
            "# Skill: pdf-forms\nFolder: {folder} (read-only)\n\n# Filling PDF forms\n\n\
             1. List the fields with `python3 scripts/fill.py --list FILE`.\n\
             2. See [FORMS.md](FORMS.md) for the field types.\n\n\
             Other files of this skill (read them with Read when needed):\n\
             - {folder}/FORMS.md\n- {folder}/scripts/fill.py\n",
            folder = folder.display()
        )
    );

    let missing = registry
        .execute("3", "read_skill", json!({"name": "nope"}))
        .await;
    assert!(missing.is_error);
    assert!(
        missing
            .text()
            .contains("There is no skill 'nope'. The skills are: commit-messages, pdf-forms.")
    );
}

#[test]
fn sensitivity_follows_r17_and_inheritance_r18() {
    use toolhost_agent::offered_registry::OfferedRegistry;
    use toolhost_agent::slash_command_tool::SlashCommandTool;
    use toolhost_catalog::slash_commands::SlashCommands;
    use toolhost_config::HubLimits;
    use toolhost_core::{Sensitivity, Tool};
    use toolhost_skillhub::{SkillHub, SkillhubInstall, SkillhubSearch};
    let catalog = Arc::new(SkillCatalog::default());
    let hub = Arc::new(SkillHub::new(
        Vec::new(),
        PathBuf::from("/nowhere"),
        HubLimits::default(),
    ));
    let slash = SlashCommandTool::new(
        Arc::new(SlashCommands::default()),
        OfferedRegistry::default(),
    );
    let specs = [
        ListSkills::new(Arc::clone(&catalog)).spec(),
        ReadSkill::new(catalog).spec(),
        toolhost_tools::Notify::new().spec(),
        SkillhubSearch::new(Arc::clone(&hub)).spec(),
        SkillhubInstall::new(hub).spec(),
        slash.spec(),
    ];
    let judged: Vec<(&str, Sensitivity, bool)> = specs
        .iter()
        .map(|spec| {
            (
                spec.name.as_str(),
                spec.sensitivity,
                spec.inherited_by_subagents,
            )
        })
        .collect();
    assert_eq!(
        judged,
        [
            ("list_skills", Sensitivity::Safe, true),
            ("read_skill", Sensitivity::Safe, true),
            ("Notify", Sensitivity::Safe, false),
            ("skillhub_search", Sensitivity::Sensitive, false),
            ("skillhub_install", Sensitivity::Sensitive, false),
            // Its `!` commands go through Bash's own rules.
            ("slash_command", Sensitivity::Safe, true),
        ]
    );
}
