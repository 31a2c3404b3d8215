//! The book in `docs/`: its generated tool reference matches the registry, it builds with
//! mdBook without a warning or a broken link, and the shell and TOML examples marked runnable
//! (```` ```sh,runnable ````, ```` ```toml,runnable ````) do what they show, through the real
//! binary in a temporary workspace.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Component, Path, PathBuf};
use std::process::Command;

use toolhost_test_support::home_and_workspace::HomeAndWorkspace;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn book_source() -> PathBuf {
    repo().join("docs/src")
}

fn toolhost() -> &'static str {
    env!("CARGO_BIN_EXE_toolhost")
}

#[test]
fn the_tool_reference_is_what_the_registry_says() {
    let dirs = HomeAndWorkspace::new();
    let output = Command::new(toolhost())
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", &dirs.home)
        .arg("--workspace")
        .arg(&dirs.workspace)
        .args(["tools", "--format", "markdown"])
        .output()
        .expect("toolhost runs");
    assert!(output.status.success(), "{output:?}");
    let generated = String::from_utf8(output.stdout).expect("UTF-8");
    let committed = std::fs::read_to_string(book_source().join("tools-reference.md"))
        .expect("docs/src/tools-reference.md exists");
    assert!(
        committed == generated,
        "docs/src/tools-reference.md differs from the registry's specs: run \
         scripts/gen-docs.sh and commit the page (first differing line: {:?})",
        committed
            .lines()
            .zip(generated.lines())
            .find(|(a, b)| a != b)
            .map(|(_, generated)| generated)
    );
}

/// The mdBook the set-up script installed (`scripts/setup-docs.sh` prints the variable).
fn mdbook() -> PathBuf {
    let path = std::env::var_os("TOOLHOST_MDBOOK").map(PathBuf::from);
    match path {
        Some(path) if path.is_file() => path,
        _ => panic!(
            "TOOLHOST_MDBOOK does not name mdBook: run `eval \"$(scripts/setup-docs.sh)\"` \
             first (scripts/test.sh does)"
        ),
    }
}

#[test]
fn the_book_builds_without_warnings_or_broken_links() {
    let out = tempfile::tempdir().expect("a temp folder");
    let output = Command::new(mdbook())
        .arg("build")
        .arg(repo().join("docs"))
        .arg("--dest-dir")
        .arg(out.path())
        .output()
        .expect("mdbook runs");
    let log = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "mdbook build failed:\n{log}");
    let warnings: Vec<&str> = log
        .lines()
        .filter(|line| line.contains("WARN") || line.contains("ERROR"))
        .collect();
    assert!(
        warnings.is_empty(),
        "mdbook warned:\n{}",
        warnings.join("\n")
    );

    let pages = html_pages(out.path());
    assert!(pages.len() > 15, "the book has its chapters: {pages:?}");
    let ids: BTreeMap<PathBuf, BTreeSet<String>> = pages
        .iter()
        .map(|page| (page.clone(), attribute_values(&read(page), "id")))
        .collect();
    let mut broken = Vec::new();
    for page in &pages {
        for link in attribute_values(&read(page), "href") {
            if let Some(problem) = check_link(out.path(), page, &link, &ids) {
                broken.push(format!(
                    "{}: {link}: {problem}",
                    page.strip_prefix(out.path()).unwrap_or(page).display()
                ));
            }
        }
    }
    assert!(
        broken.is_empty(),
        "broken links in the book:\n{}",
        broken.join("\n")
    );
}

/// What is wrong with one link of `page`, if anything. Links leaving the book (another scheme,
/// a host) are not followed; a link into the book must name a page that exists and, with a
/// `#fragment`, an element of that page with that id.
fn check_link(
    root: &Path,
    page: &Path,
    link: &str,
    ids: &BTreeMap<PathBuf, BTreeSet<String>>,
) -> Option<String> {
    // Another site, or the site's root (the 404 page's "home" link, wherever the book is served).
    if link.contains("://")
        || link.starts_with('/')
        || link.starts_with("mailto:")
        || link.starts_with("javascript:")
    {
        return None;
    }
    let (path, fragment) = link.split_once('#').unwrap_or((link, ""));
    let target = if path.is_empty() {
        page.to_path_buf()
    } else {
        normalise(&page.parent().unwrap_or(root).join(path))
    };
    if !target.starts_with(root) {
        return Some(
            "leaves the book (link to the repository's files by their path instead)".into(),
        );
    }
    // Theme files (CSS, fonts, scripts) are there or not by mdBook's doing; pages are ours.
    if target.extension().is_none_or(|ext| ext != "html") {
        return (!target.exists()).then(|| "no such file".into());
    }
    let Some(target_ids) = ids.get(&target) else {
        return Some("no such page".into());
    };
    (!fragment.is_empty() && !target_ids.contains(fragment))
        .then(|| format!("no element with id '{fragment}' in that page"))
}

fn normalise(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

fn html_pages(root: &Path) -> Vec<PathBuf> {
    let mut pages: Vec<PathBuf> = std::fs::read_dir(root)
        .expect("the built book")
        .filter_map(|entry| entry.ok().map(|entry| entry.path()))
        .filter(|path| path.extension().is_some_and(|ext| ext == "html"))
        .collect();
    pages.sort();
    pages
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|error| panic!("{}: {error}", path.display()))
}

/// The values of every `NAME="…"` attribute in `html` (entities left as they are, but `&amp;`).
fn attribute_values(html: &str, name: &str) -> BTreeSet<String> {
    let needle = format!(" {name}=\"");
    html.split(&needle)
        .skip(1)
        .filter_map(|rest| rest.split('"').next())
        .map(|value| value.replace("&amp;", "&"))
        .collect()
}

/// The examples of one chapter marked runnable, in order: (language, code).
fn runnable_examples(chapter: &str) -> Vec<(String, String)> {
    let mut examples = Vec::new();
    let mut current: Option<(String, String)> = None;
    for line in chapter.lines() {
        let fence = line.trim_start();
        match current.as_mut() {
            Some(_) if fence.starts_with("```") => {
                examples.extend(current.take());
            }
            Some((_, code)) => {
                code.push_str(line.trim_start_matches("  "));
                code.push('\n');
            }
            None => {
                if let Some(info) = fence.strip_prefix("```")
                    && let Some(language) = info.strip_suffix(",runnable")
                {
                    current = Some((language.to_owned(), String::new()));
                }
            }
        }
    }
    examples
}

#[test]
fn the_runnable_examples_of_the_book_run() {
    let mut chapters: Vec<PathBuf> = std::fs::read_dir(book_source())
        .expect("docs/src")
        .filter_map(|entry| entry.ok().map(|entry| entry.path()))
        .filter(|path| path.extension().is_some_and(|ext| ext == "md"))
        .collect();
    chapters.sort();
    let bin_dir = Path::new(toolhost()).parent().expect("the binary's folder");
    let path = std::env::join_paths(std::iter::once(bin_dir.to_path_buf()).chain(
        std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()),
    ))
    .expect("a PATH");
    let mut ran = 0;
    let mut failures = Vec::new();
    for chapter in &chapters {
        let name = chapter.file_name().unwrap_or_default().to_string_lossy();
        // One workspace per chapter: its shell examples go on from each other, as a reader's do.
        let dirs = HomeAndWorkspace::new();
        for (index, (language, code)) in runnable_examples(&read(chapter)).into_iter().enumerate() {
            let output = match language.as_str() {
                "sh" => Command::new("bash")
                    .args(["-euo", "pipefail", "-c", &code])
                    .current_dir(&dirs.workspace)
                    .env("PATH", &path)
                    .env("HOME", &dirs.home)
                    // A reader's own provider must not change what the examples show.
                    .env_remove("OPENAI_API_KEY")
                    .env_remove("OPENAI_BASE_URL")
                    .env_remove("ANTHROPIC_API_KEY")
                    .env_remove("ANTHROPIC_BASE_URL")
                    .output(),
                "toml" => {
                    // Each TOML example is a whole project configuration that must load.
                    let workspace = tempfile::tempdir().expect("a temp folder");
                    let file = workspace.path().join(".toolhost/config.toml");
                    std::fs::create_dir_all(file.parent().expect("a folder")).expect("mkdir");
                    std::fs::write(&file, &code).expect("write the example");
                    Command::new(toolhost())
                        .arg("--workspace")
                        .arg(workspace.path())
                        .args(["config", "show"])
                        .env("HOME", &dirs.home)
                        .output()
                }
                other => panic!("{name}: example {index}: no runner for `{other},runnable`"),
            }
            .expect("the example starts");
            ran += 1;
            if !output.status.success() {
                failures.push(format!(
                    "{name}, runnable example {} ({language}), {}:\n{code}stdout: {}\nstderr: {}",
                    index + 1,
                    output.status,
                    String::from_utf8_lossy(&output.stdout),
                    String::from_utf8_lossy(&output.stderr)
                ));
            }
        }
    }
    assert!(ran >= 10, "only {ran} runnable examples were found");
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn runnable_examples_are_read_in_order_with_their_language() {
    let chapter = "text\n```sh,runnable\necho a\n```\n```sh\nskipped\n```\n  ```toml,runnable\n  [x]\n  ```\n";
    assert_eq!(
        runnable_examples(chapter),
        vec![
            ("sh".to_owned(), "echo a\n".to_owned()),
            ("toml".to_owned(), "[x]\n".to_owned())
        ]
    );
}
