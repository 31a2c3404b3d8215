//! What a model is sent, through `toolhost run` against the scripted mock model: a system
//! prompt that names the workspace as the current folder (no absolute path to take apart)
//! and says which tool answers which question, and tool definitions that hold no file name a
//! model could copy into the wrong tool (a small model sent `SKILL.md` to Glob).

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "support/agent_runs.rs"]
mod agent_runs;
mod support;

use agent_runs::*;
use toolhost_test_support::Reply;

/// Extensions of the files a model could take an example name for.
const FILE_EXTENSIONS: [&str; 10] = [
    "md", "txt", "rs", "py", "json", "toml", "yml", "yaml", "js", "ts",
];

/// The words of `text` that look like a concrete file name (`SKILL.md`), not a pattern
/// (`*.EXT`, `**/*.py`).
fn file_names(text: &str) -> Vec<String> {
    text.split(|c: char| c.is_whitespace() || "`\"'(),;:[]".contains(c))
        .filter(|word| !word.contains('*'))
        .filter(|word| {
            word.rsplit_once('.').is_some_and(|(stem, extension)| {
                !stem.is_empty() && FILE_EXTENSIONS.contains(&extension)
            })
        })
        .map(str::to_owned)
        .collect()
}

#[test]
fn the_model_is_told_the_current_folder_and_which_tool_answers_what_and_no_file_names() {
    let fixture = Fixture::new();
    let model = fixture.model(vec![Reply::text("Hello.").into()]);
    let output = fixture.run(&model, &["Say hello"]).output().unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let request = &model.requests()[0];
    let system = messages(request)
        .into_iter()
        .find(|(role, _)| role == "system")
        .map(|(_, text)| text)
        .unwrap();
    for workspace in [
        fixture.dirs.workspace.clone(),
        fixture.dirs.workspace.canonicalize().unwrap(),
    ] {
        assert!(!system.contains(&*workspace.to_string_lossy()), "{system}");
    }
    assert!(
        system.contains("You work in the current folder, the workspace"),
        "{system}"
    );
    // No example path in the prompt: the local model edited `src/main.rs`, the example the
    // prompt gave, when asked to edit greeting.txt.
    assert!(!system.contains("src/main.rs"), "{system}");
    assert!(
        system.contains("answered by Read with that path"),
        "{system}"
    );
    assert!(
        system.contains("To find files by name use Glob"),
        "{system}"
    );
    for tool in request.body["tools"].as_array().unwrap() {
        let definition = tool.to_string();
        let names = file_names(&definition);
        assert!(
            names.is_empty(),
            "{} names {names:?}",
            tool["function"]["name"]
        );
    }
}
