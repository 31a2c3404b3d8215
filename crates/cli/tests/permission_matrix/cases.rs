//! The cases of the permission matrix: the tree they run on, the rules, the calls and what
//! each must give.

use std::path::Path;

use serde_json::{Value, json};

/// The files every case starts from. The word `hunter2` is in the secrets only; every file has
/// a `hello …` line that the tools show when they run.
pub const FILES: &[(&str, &str)] = &[
    (".env", "hello root env\nTOKEN=hunter2-env\n"),
    ("sub/.env", "hello sub env\nTOKEN=hunter2-env\n"),
    ("sub/other.txt", "hello sub\n"),
    ("deep/readme.txt", "hello deep\n"),
    ("deep/sub/.env", "hello deep env\n"),
    ("secret/key.txt", "hello key\nTOKEN=hunter2-secret\n"),
    ("secret/.env", "hello secret env\nTOKEN=hunter2-secret\n"),
    ("guarded/key.txt", "hello guarded\nTOKEN=hunter2-guarded\n"),
    ("src/a.txt", "hello a\n"),
    ("public/readme.txt", "hello public\n"),
    ("notes.txt", "hello notes\n"),
];

/// Symlinks: (link, target relative to the link's folder).
pub const LINKS: &[(&str, &str)] = &[
    ("link_key", "secret/key.txt"),
    ("link_secret", "secret"),
    ("link_guarded", "guarded/key.txt"),
    ("link_guarded_dir", "guarded"),
    ("src/alias.txt", "a.txt"),
    ("src/here", "."),
];

/// What a call of the matrix targets: a file in a folder, and a symlink to each.
struct Targets {
    file: &'static str,
    file_link: &'static str,
    dir: &'static str,
    dir_link: &'static str,
    /// The file's name in the folder, as listings show it.
    entry: &'static str,
    /// The file's first line, as Read and Grep show it.
    line: &'static str,
}

const DENIED: Targets = Targets {
    file: "secret/key.txt",
    file_link: "link_key",
    dir: "secret",
    dir_link: "link_secret",
    entry: "key.txt",
    line: "hello key",
};
const GUARDED: Targets = Targets {
    file: "guarded/key.txt",
    file_link: "link_guarded",
    dir: "guarded",
    dir_link: "link_guarded_dir",
    entry: "key.txt",
    line: "hello guarded",
};
const ALLOWED: Targets = Targets {
    file: "src/a.txt",
    file_link: "src/alias.txt",
    dir: "src",
    dir_link: "src/here",
    entry: "a.txt",
    line: "hello a",
};
/// The path no rule of the matrix names.
const OTHER: Targets = Targets {
    file: "public/readme.txt",
    file_link: "",
    dir: "public",
    dir_link: "",
    entry: "readme.txt",
    line: "hello public",
};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision {
    Ran,
    Asked,
    Denied,
}
pub use Decision::{Asked, Denied, Ran};

/// The rules of a case: flags before the command and the `[permissions]` table of
/// `.toolhost/config.toml`. Cases with equal rules share one `serve` process.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Rules {
    pub flags: Vec<String>,
    pub config: Option<String>,
}

impl Rules {
    fn flags(flags: &[&str]) -> Self {
        Self {
            flags: flags.iter().map(|flag| (*flag).to_owned()).collect(),
            config: None,
        }
    }

    /// `lines` under `[permissions]` in `.toolhost/config.toml`, plus `flags`.
    pub fn config(lines: &str, flags: &[&str]) -> Self {
        Self {
            config: Some(format!("[permissions]\n{lines}\n")),
            ..Self::flags(flags)
        }
    }
}

pub struct Case {
    pub name: String,
    pub rules: Rules,
    pub tool: &'static str,
    pub args: Value,
    /// The acceptable decisions (one, but for Glob on a pattern that names a denied folder).
    pub expect: Vec<Decision>,
    /// Text the output shows when the call ran.
    pub shows: Option<String>,
    /// Text the output never shows, whatever the decision.
    pub forbids: Vec<String>,
    /// The file (relative, symlinks resolved) and its content after an edit that ran.
    pub writes: Option<(String, String)>,
}

impl Case {
    fn new(name: impl Into<String>, rules: &Rules, tool: &'static str, args: Value) -> Self {
        Self {
            name: name.into(),
            rules: rules.clone(),
            tool,
            args,
            expect: vec![Ran],
            shows: None,
            forbids: vec!["hunter2".to_owned()],
            writes: None,
        }
    }

    fn expect(mut self, decision: Decision) -> Self {
        self.expect = vec![decision];
        self
    }

    fn shows(mut self, text: &str) -> Self {
        self.shows = Some(text.to_owned());
        self
    }

    /// Replaces the default `hunter2` (for walks that may show secrets no rule covers).
    fn forbids(mut self, texts: &[&str]) -> Self {
        self.forbids = texts.iter().map(|text| (*text).to_owned()).collect();
        self
    }

    fn writes(mut self, path: &str, content: &str) -> Self {
        self.writes = Some((path.to_owned(), content.to_owned()));
        self
    }
}

fn original(path: &str) -> &'static str {
    FILES
        .iter()
        .find(|(name, _)| *name == path)
        .map(|(_, content)| *content)
        .unwrap()
}

/// The matrix: each family's tools × {deny, ask, allow} × the five spellings of a path.
fn matrix(workspace: &Path) -> Vec<Case> {
    struct List {
        name: &'static str,
        rules: Rules,
        targets: Targets,
        matching: Decision,
        other: Decision,
    }
    let read_lists = [
        List {
            name: "deny Read(secret/**) in config.toml",
            rules: Rules::config(r#"deny = ["Read(secret/**)"]"#, &[]),
            targets: DENIED,
            matching: Denied,
            other: Ran,
        },
        List {
            name: "ask Read(guarded/**) in config.toml",
            rules: Rules::config(r#"ask = ["Read(guarded/**)"]"#, &[]),
            targets: GUARDED,
            matching: Asked,
            other: Ran,
        },
        List {
            name: "--allow Read(src/**)",
            rules: Rules::flags(&["--allow", "Read(src/**)"]),
            targets: ALLOWED,
            matching: Ran,
            other: Ran,
        },
    ];
    // acceptEdits for deny and ask, so that the other path runs; default for allow, so that
    // it asks.
    let edit_lists = [
        List {
            name: "--deny Edit(secret/**) in acceptEdits",
            rules: Rules::flags(&["--deny", "Edit(secret/**)", "--mode", "acceptEdits"]),
            targets: DENIED,
            matching: Denied,
            other: Ran,
        },
        List {
            name: "ask Edit(guarded/**) in config.toml, acceptEdits",
            rules: Rules::config(r#"ask = ["Edit(guarded/**)"]"#, &["--mode", "acceptEdits"]),
            targets: GUARDED,
            matching: Asked,
            other: Ran,
        },
        List {
            name: "--allow Edit(src/**)",
            rules: Rules::flags(&["--allow", "Edit(src/**)"]),
            targets: ALLOWED,
            matching: Ran,
            other: Asked,
        },
    ];
    let mut cases = Vec::new();
    for (lists, tools) in [
        (&read_lists, &["Read", "ListDir", "Glob", "Grep"][..]),
        (&edit_lists, &["Write", "Edit"][..]),
    ] {
        for list in lists {
            let t = &list.targets;
            for tool in tools {
                let on_file = matches!(*tool, "Read" | "Write" | "Edit");
                let (path, link, other) = if on_file {
                    (t.file, t.file_link, OTHER.file)
                } else {
                    (t.dir, t.dir_link, OTHER.dir)
                };
                let dotdot = format!("public/../{path}");
                let absolute = absolute(workspace, path);
                for (spelling, spelled, target, decision) in [
                    ("matching", path, path, list.matching),
                    ("other", other, other, list.other),
                    ("through a symlink", link, path, list.matching),
                    ("`..` spelling", &dotdot, path, list.matching),
                    ("absolute spelling", &absolute, path, list.matching),
                ] {
                    let name = format!("{tool} {spelled} ({spelling}), {}", list.name);
                    let targets = if target == other { &OTHER } else { t };
                    cases.push(
                        tool_case(name, &list.rules, tool, spelled, target, targets)
                            .expect(decision),
                    );
                }
            }
        }
    }
    cases
}

/// A call of `tool` on `spelled`, which is `target` (symlinks resolved) in `targets`.
fn tool_case(
    name: String,
    rules: &Rules,
    tool: &'static str,
    spelled: &str,
    target: &str,
    targets: &Targets,
) -> Case {
    match tool {
        "Read" => Case::new(name, rules, tool, json!({"path": spelled})).shows(targets.line),
        "ListDir" => Case::new(name, rules, tool, json!({"path": spelled})).shows(targets.entry),
        "Glob" => Case::new(name, rules, tool, json!({"pattern": "*", "path": spelled}))
            .shows(targets.entry),
        "Grep" => Case::new(
            name,
            rules,
            tool,
            json!({"pattern": "hell[o]|hunte[r]", "path": spelled, "output_mode": "content"}),
        )
        .shows(targets.line),
        "Write" => Case::new(
            name,
            rules,
            tool,
            json!({"path": spelled, "content": "pwned\n"}),
        )
        .writes(target, "pwned\n"),
        "Edit" => Case::new(
            name,
            rules,
            tool,
            json!({"path": spelled, "old_string": "hello", "new_string": "pwned"}),
        )
        .writes(target, &original(target).replacen("hello", "pwned", 1)),
        _ => unreachable!("{tool}"),
    }
}

/// Every pattern form, the walks past denied paths, deny against modes and allow rules, and
/// the four commands of issue 12.
fn forms(workspace: &Path) -> Vec<Case> {
    let ws = workspace.display();
    let flags = |flags: &[&str]| Rules::flags(flags);
    let read = |rules: &Rules, path: &str| {
        Case::new(
            format!("Read {path}, {rules:?}"),
            rules,
            "Read",
            json!({"path": path}),
        )
    };
    let write = |rules: &Rules, path: &str, content: &str| {
        Case::new(
            format!("Write {path}, {rules:?}"),
            rules,
            "Write",
            json!({"path": path, "content": content}),
        )
    };
    let edit = |rules: &Rules, path: &str| {
        Case::new(
            format!("Edit {path}, {rules:?}"),
            rules,
            "Edit",
            json!({"path": path, "old_string": "hello", "new_string": "pwned"}),
        )
    };
    let list_dir = |rules: &Rules, path: &str| {
        Case::new(
            format!("ListDir {path}, {rules:?}"),
            rules,
            "ListDir",
            json!({"path": path}),
        )
    };

    let any_env = flags(&["--deny", "Read(**/.env)"]);
    let env = flags(&["--deny", "Read(.env)"]);
    let write_env = flags(&["--deny", "Write(.env)", "--mode", "acceptEdits"]);
    let allow_src = flags(&["--allow", "Edit(src/**)"]);
    let anchored_inner = flags(&["--deny", "Read(sub/.env)"]);
    let rooted = flags(&["--deny", "Read(/src/a.txt)"]);
    let rooted_name = flags(&["--deny", "Read(/a.txt)"]);
    let dot = flags(&["--deny", "Read(./secret/key.txt)"]);
    let folder_slash = flags(&["--deny", "Read(secret/)"]);
    let folder_bare = flags(&["--deny", "Read(secret)"]);
    let home_flag = flags(&["--deny", "Read(~/project/secret/**)"]);
    let home_config = Rules::config(
        r#"deny = ["Edit(~/project/secret/**)"]"#,
        &["--mode", "acceptEdits"],
    );
    let abs_rule = format!("Read(/{ws}/secret/**)");
    let abs_flag = flags(&["--deny", &abs_rule]);
    let abs_config = Rules::config(
        &format!(r#"deny = ["Edit(/{ws}/secret/key.txt)"]"#),
        &["--mode", "acceptEdits"],
    );
    let write_only = flags(&["--deny", "Write(src/**)", "--mode", "acceptEdits"]);
    let bypass = flags(&["--deny", "Edit(secret/**)", "--mode", "bypassPermissions"]);
    let deny_over_allow = Rules::config(
        r#"deny = ["Read(secret/**)"]"#,
        &["--allow", "Read(secret/**)", "--mode", "bypassPermissions"],
    );
    let allow_but_deny_one = flags(&["--allow", "Edit(src/**)", "--deny", "Edit(src/a.txt)"]);
    // The same rules as the matrix's read deny list, so that `serve` reuses its process.
    let secret = Rules::config(r#"deny = ["Read(secret/**)"]"#, &[]);
    let deep_sub = flags(&["--deny", "Read(deep/sub)"]);

    vec![
        // Issue 12, as filed.
        read(&any_env, ".env").expect(Denied),
        read(&env, ".env").expect(Denied),
        write(&write_env, ".env", "pwned").expect(Denied),
        write(&allow_src, "src/a.txt", "x").writes("src/a.txt", "x"),
        write(&allow_src, "src/new.txt", "x").writes("src/new.txt", "x"),
        // A bare name matches at any depth, in every spelling.
        read(&env, "sub/.env").expect(Denied),
        read(&env, "secret/.env").expect(Denied),
        read(&env, "sub/../.env").expect(Denied),
        read(&env, &absolute(workspace, ".env")).expect(Denied),
        read(&any_env, "sub/.env").expect(Denied),
        // An inner `/` anchors at the root.
        read(&anchored_inner, "sub/.env").expect(Denied),
        read(&anchored_inner, "deep/sub/.env").shows("hello deep env"),
        // `/` and `./` anchor at the workspace root.
        read(&rooted, "src/a.txt").expect(Denied),
        read(&rooted_name, "src/a.txt").shows("hello a"),
        read(&dot, "secret/key.txt").expect(Denied),
        read(&dot, "link_key").expect(Denied),
        // A folder covers what is inside, however it is written.
        read(&folder_slash, "secret/key.txt").expect(Denied),
        list_dir(&folder_slash, "secret").expect(Denied),
        read(&folder_bare, "secret/key.txt").expect(Denied),
        list_dir(&folder_bare, "link_secret").expect(Denied),
        // `~/` is under $HOME, `//` is absolute; from a flag and from config.toml.
        read(&home_flag, "secret/key.txt").expect(Denied),
        read(&home_flag, "link_key").expect(Denied),
        write(&home_config, "secret/key.txt", "pwned").expect(Denied),
        read(&abs_flag, "public/../secret/key.txt").expect(Denied),
        edit(&abs_config, "link_key").expect(Denied),
        edit(&abs_config, "public/readme.txt").writes("public/readme.txt", "pwned public\n"),
        // `Write(…)` covers Write only; `Edit(…)` covers both (the matrix).
        write(&write_only, "src/a.txt", "pwned").expect(Denied),
        edit(&write_only, "src/a.txt").writes("src/a.txt", "pwned a\n"),
        // Deny wins over every mode and every allow rule.
        write(&bypass, "secret/key.txt", "pwned").expect(Denied),
        write(&bypass, "link_key", "pwned").expect(Denied),
        write(&bypass, "notes.txt", "pwned").writes("notes.txt", "pwned"),
        read(&deny_over_allow, "secret/key.txt").expect(Denied),
        write(&allow_but_deny_one, "src/a.txt", "pwned").expect(Denied),
        write(&allow_but_deny_one, "src/b.txt", "x").writes("src/b.txt", "x"),
        // Walks above a denied path run and skip it; listings leave it out.
        Case::new(
            "Grep the root past secret/",
            &secret,
            "Grep",
            json!({"pattern": "hell[o]|hunte[r]", "output_mode": "content"}),
        )
        .shows("hello public")
        .forbids(&["hunter2-secret", "secret/key.txt", "secret/.env"]),
        Case::new(
            "Grep the .env files of the root past Read(.env)",
            &env,
            "Grep",
            json!({"pattern": "hunte[r]", "include": ".env", "output_mode": "content"}),
        )
        .forbids(&["hunter2", "sub/.env"]),
        Case::new(
            "Grep a denied file",
            &secret,
            "Grep",
            json!({"pattern": "hunte[r]", "path": "secret/key.txt"}),
        )
        .expect(Denied),
        Case::new(
            "Glob the root past secret/",
            &secret,
            "Glob",
            json!({"pattern": "**/*"}),
        )
        .shows("public/readme.txt")
        .forbids(&["hunter2", "secret/key.txt", "secret/.env"]),
        Case {
            expect: vec![Ran, Denied],
            ..Case::new(
                "Glob a pattern that names secret/",
                &secret,
                "Glob",
                json!({"pattern": "secret/*"}),
            )
            .forbids(&["hunter2", "key.txt"])
        },
        list_dir(&env, "sub")
            .shows("other.txt")
            .forbids(&["hunter2", ".env"]),
        list_dir(&deep_sub, "deep")
            .shows("readme.txt")
            .forbids(&["hunter2", "sub/"]),
    ]
}

pub fn all_cases(workspace: &Path) -> Vec<Case> {
    let mut cases = matrix(workspace);
    cases.extend(forms(workspace));
    cases
}

fn absolute(workspace: &Path, path: &str) -> String {
    workspace.join(path).display().to_string()
}
