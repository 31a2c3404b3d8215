//! Slash commands (R28, R16): Claude Code's `.claude/commands/` loaded unchanged, every
//! expansion rule of the README, `@file` and `` !`command` `` through Read and Bash with their
//! permissions, the filtered registry of a command's turn, and the `/name` line of a chat.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::sync::Arc;

use pretty_assertions::assert_eq;
use toolhost_agent::Permissions;
use toolhost_catalog::slash_commands::{
    CommandTurn, ExpandError, SlashCommandError, SlashCommands, parse_template, split_arguments,
};
use toolhost_config::{ConfigSources, Overrides};
use toolhost_core::permission::NonInteractiveApprover;
use toolhost_core::{CallOptions, ToolRegistry};
use toolhost_test_support::{HomeAndWorkspace, copy_tree, write_file};
use toolhost_tools::{BashSettings, Workspace, builtin_tools};

const FIXTURE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/claude-project");

fn claude_project() -> HomeAndWorkspace {
    let dirs = HomeAndWorkspace::new();
    copy_tree(Path::new(FIXTURE), &dirs.workspace);
    dirs
}

/// The built-in tools on `workspace` under the permission system, refusing whatever would
/// ask, with `allow` rules added.
fn registry(workspace: &Path, allow: &[&str]) -> ToolRegistry {
    let config = toolhost_catalog::load_config(&ConfigSources {
        workspace: workspace.to_path_buf(),
        overrides: Overrides {
            allow: allow.iter().map(|rule| (*rule).to_owned()).collect(),
            ..Overrides::default()
        },
        ..ConfigSources::default()
    })
    .unwrap();
    let permissions = Permissions::from_config(
        &config,
        workspace,
        Arc::new(NonInteractiveApprover::refusing()),
    )
    .unwrap();
    let registry = permissions.install(ToolRegistry::builder()).build();
    let workspace = Arc::new(Workspace::new(workspace).unwrap());
    assert!(
        registry
            .register_all(builtin_tools(
                workspace,
                BashSettings::default(),
                toolhost_tools::WebSearchSettings::default(),
                toolhost_tools::WebFetchSettings::default(),
            ))
            .is_empty()
    );
    registry
}

/// The text of a template with no files or commands.
fn text(body: &str, args: &str) -> String {
    let pieces = parse_template(body, args).unwrap();
    pieces
        .into_iter()
        .map(|piece| match piece {
            toolhost_catalog::slash_commands::Piece::Text(text) => text,
            other => panic!("unexpected {other:?}"),
        })
        .collect()
}

#[test]
fn a_claude_code_commands_folder_loads_unchanged_with_namespaced_names() {
    let dirs = claude_project();
    let commands = SlashCommands::for_workspace(&dirs.workspace, Some(&dirs.home));
    assert_eq!(commands.warnings(), []);
    let names: Vec<&str> = commands
        .commands()
        .iter()
        .map(|c| c.name.as_str())
        .collect();
    assert_eq!(names, ["explain", "frontend:component", "review"]);
    let review = commands.get("review").unwrap();
    assert_eq!(review.description, "Review a pull request");
    assert_eq!(
        review.argument_hint.as_deref(),
        Some("[pr-number] [priority]")
    );
    assert_eq!(
        review.allowed_tools.as_deref(),
        Some(&["Read".to_owned(), "Bash(echo:*)".to_owned()][..])
    );
    assert_eq!(review.model.as_deref(), Some("claude-sonnet-4-5"));
    // Without front matter, the first line describes the command.
    assert_eq!(
        commands.get("explain").unwrap().description,
        "Explain the code the user points at, step by step."
    );
}

#[test]
fn project_commands_win_over_user_commands() {
    let dirs = HomeAndWorkspace::new();
    write_file(dirs.workspace.join(".claude/commands/x.md"), "project");
    write_file(dirs.home.join(".toolhost/commands/x.md"), "user");
    write_file(dirs.home.join(".claude/commands/y.md"), "user y");
    let commands = SlashCommands::for_workspace(&dirs.workspace, Some(&dirs.home));
    assert_eq!(commands.get("x").unwrap().body, "project");
    assert_eq!(commands.get("y").unwrap().body, "user y");
}

#[test]
fn a_command_with_bad_front_matter_is_skipped_naming_file_and_line() {
    let dirs = HomeAndWorkspace::new();
    write_file(
        dirs.workspace.join(".toolhost/commands/bad.md"),
        "---\ndescription: ok\nmodel: [unclosed\n---\nbody",
    );
    let commands = SlashCommands::for_workspace(&dirs.workspace, None);
    assert!(commands.get("bad").is_none());
    let warning = commands.warnings()[0].to_string();
    assert!(warning.contains("bad.md:"), "{warning}");
    assert!(warning.contains("invalid front matter"), "{warning}");
}

// Rule 1: $ARGUMENTS is the raw string, trimmed.
#[test]
fn arguments_is_the_raw_string_trimmed() {
    assert_eq!(
        text("Fix: $ARGUMENTS.", "  issue 12 \"a b\"  "),
        "Fix: issue 12 \"a b\"."
    );
}

// Rule 2: $1…$9 are shell words; missing ones are empty; $10 is $1 then 0.
#[test]
fn positional_arguments_are_shell_words_and_missing_ones_are_empty() {
    assert_eq!(
        text("[$1] [$2] [$3] [$9] $10", "one 'two words'"),
        "[one] [two words] [] [] one0"
    );
}

#[test]
fn arguments_split_like_a_shell_with_quotes() {
    for (raw, words) in [
        ("a b   c", vec!["a", "b", "c"]),
        (
            "'single quoted' \"double quoted\"",
            vec!["single quoted", "double quoted"],
        ),
        (r#""say \"hi\"" 'it''s'"#, vec![r#"say "hi""#, "its"]),
        (r"one\ word back\\slash", vec!["one word", r"back\slash"]),
        (r#"a"b c"d '' """#, vec!["ab cd", "", ""]),
        (r#""keep \n as is""#, vec![r"keep \n as is"]),
        ("", vec![]),
    ] {
        assert_eq!(split_arguments(raw).unwrap(), words, "{raw}");
    }
    assert_eq!(
        split_arguments("'open").unwrap_err(),
        ExpandError::UnterminatedQuote { quote: '\'' }
    );
    assert_eq!(
        split_arguments("\"open").unwrap_err(),
        ExpandError::UnterminatedQuote { quote: '"' }
    );
}

// Rule 3: arguments a body never mentions are appended.
#[test]
fn unmentioned_arguments_are_appended() {
    assert_eq!(
        text("Explain this.", "src/main.rs"),
        "Explain this.\n\nARGUMENTS: src/main.rs"
    );
    assert_eq!(text("Explain this.", "  "), "Explain this.");
    assert_eq!(text("Only $2.", "a b"), "Only b.");
}

// Rule 6: escapes, and other dollars stay.
#[test]
fn backslash_escapes_and_other_dollars_stay() {
    assert_eq!(
        text(r"\$1 costs $HOME $0 \@me \!`x` C:\dir", "v"),
        "$1 costs $HOME $0 @me !`x` C:\\dir\n\nARGUMENTS: v"
    );
}

// Rules 4, 5 and 7: what is a file or a command, and substituted text is not scanned again.
#[test]
fn files_and_commands_are_recognised_and_arguments_are_never_rescanned() {
    use toolhost_catalog::slash_commands::Piece;
    assert_eq!(
        parse_template(
            "See @docs/$1.md, mail a@b.c; run !`git log -n $2` now",
            "intro 3"
        )
        .unwrap(),
        [
            Piece::Text("See ".into()),
            Piece::File("docs/intro.md".into()),
            Piece::Text(", mail a@b.c; run ".into()),
            Piece::Command("git log -n 3".into()),
            Piece::Text(" now".into()),
        ]
    );
    assert_eq!(
        parse_template("Say $ARGUMENTS", "@secret !`rm x`").unwrap(),
        [Piece::Text("Say @secret !`rm x`".into())]
    );
    // A lone `@` and an unclosed backtick are text.
    assert_eq!(text("@ and !`open", ""), "@ and !`open");
}

#[tokio::test]
async fn files_are_read_and_commands_run_through_the_registry_before_the_prompt() {
    let dirs = claude_project();
    let commands = SlashCommands::for_workspace(&dirs.workspace, None);
    let registry = registry(&dirs.workspace, &["Bash(echo:*)"]);
    let turn = commands
        .run(
            "review",
            "42 high",
            &registry,
            CallOptions::default(),
            false,
        )
        .await
        .unwrap();
    assert_eq!(
        turn.prompt,
        "Review PR #42 with priority high.\n\nCurrent branch: fixture-branch\n\n\
         Follow the conventions in <file path=\"CONVENTIONS.md\">\n     1\tUse tabs.\n</file>.\n"
    );
    assert_eq!(turn.expansion.files, ["CONVENTIONS.md"]);
    assert_eq!(turn.expansion.commands, ["echo fixture-branch"]);
    assert_eq!(turn.model.as_deref(), Some("claude-sonnet-4-5"));
}

#[tokio::test]
async fn a_command_that_bash_would_ask_for_is_refused_without_approval() {
    let dirs = claude_project();
    let commands = SlashCommands::for_workspace(&dirs.workspace, None);
    let registry = registry(&dirs.workspace, &[]);
    let error = commands
        .run("review", "1", &registry, CallOptions::default(), false)
        .await
        .unwrap_err();
    let SlashCommandError::Expand {
        source: ExpandError::Command { command, .. },
        ..
    } = &error
    else {
        panic!("{error}");
    };
    assert_eq!(command, "echo fixture-branch");
}

#[tokio::test]
async fn a_file_outside_the_workspace_is_not_read_and_its_at_word_stays_as_text() {
    let dirs = HomeAndWorkspace::new();
    write_file(
        dirs.workspace.join(".claude/commands/leak.md"),
        "Look at @/etc/passwd",
    );
    let commands = SlashCommands::for_workspace(&dirs.workspace, None);
    let turn = commands
        .run(
            "leak",
            "",
            &registry(&dirs.workspace, &[]),
            CallOptions::default(),
            false,
        )
        .await
        .unwrap();
    assert_eq!(turn.prompt, "Look at @/etc/passwd");
}

#[tokio::test]
async fn at_words_in_code_and_words_that_are_no_file_stay_as_text_and_files_are_inlined() {
    let dirs = HomeAndWorkspace::new();
    write_file(dirs.workspace.join("notes.md"), "the notes");
    write_file(
        dirs.workspace.join(".claude/commands/py.md"),
        "Use `@dataclass` and @notes.md, install @redocly/cli.\n\n```python\n@lru_cache(maxsize=2)\ndef f(): !`rm -rf x`\n```\nDone.",
    );
    let commands = SlashCommands::for_workspace(&dirs.workspace, None);
    let turn = commands
        .run(
            "py",
            "",
            &registry(&dirs.workspace, &[]),
            CallOptions::default(),
            false,
        )
        .await
        .unwrap();
    assert_eq!(
        turn.prompt,
        "Use `@dataclass` and <file path=\"notes.md\">\n     1\tthe notes\n</file>, install \
         @redocly/cli.\n\n```python\n@lru_cache(maxsize=2)\ndef f(): !`rm -rf x`\n```\nDone."
    );
}

#[tokio::test]
async fn a_chat_line_runs_the_command_and_restricts_the_turn_to_its_allowed_tools() {
    let dirs = claude_project();
    let commands = SlashCommands::for_workspace(&dirs.workspace, None);
    let registry = registry(&dirs.workspace, &["Bash(echo:*)"]);
    assert!(
        commands
            .run_line("not a command", &registry, CallOptions::default())
            .await
            .is_none()
    );
    let turn: CommandTurn = commands
        .run_line("/review 7 low", &registry, CallOptions::default())
        .await
        .unwrap()
        .unwrap();
    assert!(turn.prompt.starts_with("Review PR #7 with priority low."));
    assert_eq!(turn.model.as_deref(), Some("claude-sonnet-4-5"));
    // `Read` names the reading family; `Bash(echo:*)` keeps Bash, whose calls rules judge.
    assert_eq!(
        turn.tools(&registry).names(),
        ["Read", "ListDir", "Glob", "Grep", "Bash"]
    );
    let component = commands
        .run_line(
            "/frontend:component Button",
            &registry,
            CallOptions::default(),
        )
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        component.prompt,
        "Create a React component called Button in src/components/Button.tsx.\n"
    );
    assert_eq!(component.tools(&registry).names(), registry.names());
}

#[tokio::test]
async fn user_only_commands_are_refused_to_the_model_but_run_for_the_user() {
    let dirs = HomeAndWorkspace::new();
    write_file(
        dirs.workspace.join(".claude/commands/deploy.md"),
        "---\ndisable-model-invocation: true\n---\nDeploy.",
    );
    let commands = SlashCommands::for_workspace(&dirs.workspace, None);
    let registry = registry(&dirs.workspace, &[]);
    let error = commands
        .run("deploy", "", &registry, CallOptions::default(), false)
        .await
        .unwrap_err();
    assert!(matches!(error, SlashCommandError::UserOnly(_)), "{error}");
    let turn = commands
        .run_line("/deploy", &registry, CallOptions::default())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(turn.prompt, "Deploy.");
}

#[tokio::test]
async fn an_unknown_command_lists_the_commands() {
    let dirs = claude_project();
    let commands = SlashCommands::for_workspace(&dirs.workspace, None);
    let error = commands
        .run(
            "reveiw",
            "",
            &registry(&dirs.workspace, &[]),
            CallOptions::default(),
            false,
        )
        .await
        .unwrap_err()
        .to_string();
    assert_eq!(
        error,
        "there is no slash command '/reveiw'; the commands are: /explain, /frontend:component, /review"
    );
}
