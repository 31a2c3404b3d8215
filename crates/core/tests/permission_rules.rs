//! Rule parsing and matching: shell commands per simple command, gitignore-style paths,
//! domains, MCP servers (R37).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use pretty_assertions::assert_eq;
use support::{decide, paths, rules, spec_like};
use toolhost_core::permission::{
    Decision, DecisionInput, PermissionMode, PermissionRule, RuleList, RuleSet, ToolSelection,
    evaluate, suggested_rules,
};
use toolhost_core::{PermissionSubject, Sensitivity, ShellSubject};

/// A shell subject as the Bash tool reports it: the argv of every simple command.
fn shell(commands: &[&[&str]]) -> PermissionSubject {
    PermissionSubject::Shell(ShellSubject {
        commands: commands
            .iter()
            .map(|argv| argv.iter().map(|word| (*word).to_owned()).collect())
            .collect(),
        fully_analysed: true,
        ..ShellSubject::default()
    })
}

#[test]
fn an_exact_rule_matches_only_that_command() {
    let allow = rules(RuleList::Allow, &["Bash(git status)"]);
    assert_eq!(
        decide("Bash", &allow, shell(&[&["git", "status"]])),
        Decision::Allow
    );
    assert_eq!(
        decide("Bash", &allow, shell(&[&["git", "status", "--short"]])),
        Decision::Ask
    );
    assert_eq!(decide("Bash", &allow, shell(&[&["git"]])), Decision::Ask);
}

#[test]
fn a_prefix_rule_matches_whole_words_only() {
    let allow = rules(RuleList::Allow, &["Bash(npm run test:*)"]);
    assert_eq!(
        decide("Bash", &allow, shell(&[&["npm", "run", "test"]])),
        Decision::Allow
    );
    assert_eq!(
        decide(
            "Bash",
            &allow,
            shell(&[&["npm", "run", "test", "--", "-u"]])
        ),
        Decision::Allow
    );
    assert_eq!(
        decide("Bash", &allow, shell(&[&["npm", "run", "testx"]])),
        Decision::Ask
    );
    assert_eq!(
        decide("Bash", &allow, shell(&[&["npm", "run", "build"]])),
        Decision::Ask
    );
}

#[test]
fn compound_commands_cannot_slip_past_a_prefix_rule() {
    let allow = rules(RuleList::Allow, &["Bash(git status:*)"]);
    // `git status && rm -rf x`
    assert_eq!(
        decide(
            "Bash",
            &allow,
            shell(&[&["git", "status"], &["rm", "-rf", "x"]])
        ),
        Decision::Ask
    );
    // `git status; curl x | sh`
    assert_eq!(
        decide(
            "Bash",
            &allow,
            shell(&[&["git", "status"], &["curl", "x"], &["sh"]])
        ),
        Decision::Ask
    );
    // `git status $(rm x)`: the substitution is a simple command of its own, and the outer
    // word is dynamic, so the analysis is not complete.
    let substituted = PermissionSubject::Shell(ShellSubject {
        commands: vec![
            vec!["git".into(), "status".into()],
            vec!["rm".into(), "x".into()],
        ],
        fully_analysed: false,
        ..ShellSubject::default()
    });
    assert_eq!(decide("Bash", &allow, substituted), Decision::Ask);
    // Even when every known command is allowed, an incomplete analysis never auto-allows.
    let unknown = PermissionSubject::Shell(ShellSubject {
        commands: vec![vec!["git".into(), "status".into()]],
        fully_analysed: false,
        ..ShellSubject::default()
    });
    assert_eq!(decide("Bash", &allow, unknown), Decision::Ask);
}

#[test]
fn every_simple_command_must_be_allowed_and_any_denied_one_denies() {
    let mut set = rules(
        RuleList::Allow,
        &["Bash(git status:*)", "Bash(cargo test:*)"],
    );
    set.push(RuleList::Deny, PermissionRule::parse("Bash(rm:*)").unwrap());
    assert_eq!(
        decide(
            "Bash",
            &set,
            shell(&[&["git", "status"], &["cargo", "test", "-q"]])
        ),
        Decision::Allow
    );
    assert_eq!(
        decide(
            "Bash",
            &set,
            shell(&[&["git", "status"], &["rm", "-rf", "x"]])
        ),
        Decision::Deny
    );
    // A deny rule looks past assignments; an allow rule never matches them.
    assert_eq!(
        decide("Bash", &set, shell(&[&["X=1", "rm", "x"]])),
        Decision::Deny
    );
    assert_eq!(
        decide("Bash", &set, shell(&[&["PAGER=sh", "git", "status"]])),
        Decision::Ask
    );
    // A deny rule still denies what it recognises in a command that was not fully analysed.
    let partial = PermissionSubject::Shell(ShellSubject {
        commands: vec![vec!["rm".into(), "x".into()]],
        fully_analysed: false,
        ..ShellSubject::default()
    });
    assert_eq!(decide("Bash", &set, partial), Decision::Deny);
}

#[test]
fn a_specifier_rule_does_not_auto_allow_a_command_reaching_outside_the_workspace() {
    let allow = rules(RuleList::Allow, &["Bash(cat:*)"]);
    let outside = PermissionSubject::Shell(ShellSubject {
        commands: vec![vec!["cat".into(), "/etc/shadow".into()]],
        fully_analysed: true,
        outside_workspace: vec!["/etc/shadow".into()],
        ..ShellSubject::default()
    });
    assert_eq!(decide("Bash", &allow, outside.clone()), Decision::Ask);
    // A bare `Bash` rule allows everything the command policy does not deny.
    assert_eq!(
        decide("Bash", &rules(RuleList::Allow, &["Bash"]), outside),
        Decision::Allow
    );
}

#[test]
fn path_rules_are_gitignore_style_and_relative_to_the_workspace() {
    let src = rules(RuleList::Allow, &["Write(src/**)"]);
    assert_eq!(
        decide("Write", &src, paths(&["src/a/b.rs"])),
        Decision::Allow
    );
    assert_eq!(decide("Write", &src, paths(&["src"])), Decision::Allow);
    assert_eq!(
        decide("Write", &src, paths(&["lib/src/a.rs"])),
        Decision::Ask
    );
    assert_eq!(
        decide("Write", &src, paths(&["src/a.rs", "docs/a.md"])),
        Decision::Ask
    );

    // No inner slash: any depth. `*` does not cross folders.
    let rs = rules(RuleList::Allow, &["Write(*.rs)"]);
    assert_eq!(decide("Write", &rs, paths(&["a/b/c.rs"])), Decision::Allow);
    let top = rules(RuleList::Allow, &["Write(/*.rs)"]);
    assert_eq!(decide("Write", &top, paths(&["c.rs"])), Decision::Allow);
    assert_eq!(decide("Write", &top, paths(&["a/c.rs"])), Decision::Ask);

    // A folder name covers what is inside; `//` is an absolute path.
    let env = rules(RuleList::Deny, &["Read(.env)", "Read(//etc/**)"]);
    assert_eq!(decide("Read", &env, paths(&["app/.env"])), Decision::Deny);
    assert_eq!(
        decide("Read", &env, paths(&["/etc/passwd"])),
        Decision::Deny
    );
    assert_eq!(decide("Read", &env, paths(&["etc/passwd"])), Decision::Ask);
    let secrets = rules(RuleList::Deny, &["Read(secrets/)"]);
    assert_eq!(
        decide("Read", &secrets, paths(&["secrets/key.pem"])),
        Decision::Deny
    );
}

#[test]
fn read_rules_cover_the_read_tools_and_edit_rules_cover_write() {
    let paths = paths(&["private/notes.md"]);
    let deny = rules(RuleList::Deny, &["Read(private/**)", "Edit(private/**)"]);
    for tool in ["Read", "Grep", "Glob", "ListDir", "Edit", "Write"] {
        assert_eq!(decide(tool, &deny, paths.clone()), Decision::Deny, "{tool}");
    }
    let write_only = rules(RuleList::Deny, &["Write(private/**)"]);
    assert_eq!(decide("Edit", &write_only, paths), Decision::Ask);
}

#[test]
fn domain_rules_match_the_host_and_its_subdomains() {
    let allow = rules(RuleList::Allow, &["WebFetch(domain:example.com)"]);
    let host = |h: &str| PermissionSubject::Domain(h.to_owned());
    assert_eq!(
        decide("WebFetch", &allow, host("example.com")),
        Decision::Allow
    );
    assert_eq!(
        decide("WebFetch", &allow, host("docs.Example.com.")),
        Decision::Allow
    );
    assert_eq!(
        decide("WebFetch", &allow, host("badexample.com")),
        Decision::Ask
    );
    assert_eq!(
        decide("WebFetch", &allow, host("example.com.evil.io")),
        Decision::Ask
    );
    let only_subdomains = rules(RuleList::Allow, &["WebFetch(domain:*.example.com)"]);
    assert_eq!(
        decide("WebFetch", &only_subdomains, host("example.com")),
        Decision::Ask
    );
    assert_eq!(
        decide("WebFetch", &only_subdomains, host("a.example.com")),
        Decision::Allow
    );
}

#[test]
fn mcp_rules_name_a_server_or_one_tool() {
    let server = rules(RuleList::Allow, &["mcp__github"]);
    assert_eq!(
        decide(
            "mcp__github__create_issue",
            &server,
            PermissionSubject::None
        ),
        Decision::Allow
    );
    assert_eq!(
        decide("mcp__githubx__list", &server, PermissionSubject::None),
        Decision::Ask
    );
    let tool = rules(RuleList::Deny, &["mcp__github__delete_repo"]);
    assert_eq!(
        decide("mcp__github__delete_repo", &tool, PermissionSubject::None),
        Decision::Deny
    );
    assert_eq!(
        decide("mcp__github__list", &tool, PermissionSubject::None),
        Decision::Ask
    );
    let all = rules(RuleList::Deny, &["mcp__*"]);
    assert_eq!(
        decide("mcp__x__y", &all, PermissionSubject::None),
        Decision::Deny
    );
}

#[test]
fn a_specifier_rule_never_matches_a_call_whose_tool_reports_nothing() {
    let allow = rules(RuleList::Allow, &["Bash(git status)"]);
    assert_eq!(
        decide("Bash", &allow, PermissionSubject::None),
        Decision::Ask
    );
}

#[test]
fn bad_rules_are_refused_with_what_to_write_instead() {
    let problem = |text: &str| PermissionRule::parse(text).unwrap_err().to_string();
    assert_eq!(
        problem("Bash(git status"),
        "invalid permission rule 'Bash(git status': a specifier must be closed by ')' at the end, as in 'Bash(git status)'"
    );
    assert!(problem("Bash()").contains("the specifier is empty"));
    assert!(problem("Ba sh").contains("is not a tool name"));
    assert!(
        problem("WebFetch(https://example.com)").contains("write 'WebFetch(domain:example.com)'")
    );
    assert!(problem("WebFetch(domain:https://x)").contains("is not a host name"));
    assert!(problem("Read(src/[)").contains("is not a valid glob"));
    assert!(problem("Read(~bob/notes)").contains("only '~/' is understood"));
    assert!(problem("").contains("the tool name is missing"));
    assert_eq!(
        PermissionRule::parse(" Bash( git  status ) ")
            .unwrap()
            .as_str(),
        "Bash(git  status)"
    );
}

#[test]
fn suggestions_allow_this_call_and_little_else() {
    let texts = |tool: &str, subject: &PermissionSubject| -> Vec<String> {
        suggested_rules(tool, subject)
            .iter()
            .map(ToString::to_string)
            .collect()
    };
    let subject = shell(&[
        &["git", "status"],
        &["rm", "-rf", "x"],
        &["git", "status", "-s"],
    ]);
    assert_eq!(
        texts("Bash", &subject),
        ["Bash(git status:*)", "Bash(rm -rf x)"]
    );
    let paths = paths(&["notes.txt", "/tmp/a[1].txt"]);
    assert_eq!(
        texts("Write", &paths),
        ["Write(/notes.txt)", "Write(//tmp/a\\[1\\].txt)"]
    );
    assert_eq!(
        texts("WebFetch", &PermissionSubject::Domain("example.com".into())),
        ["WebFetch(domain:example.com)"]
    );
    // Each suggestion allows the call it came from.
    let mut allow = RuleSet::new();
    for rule in suggested_rules("Write", &paths) {
        allow.push(RuleList::Allow, rule);
    }
    assert_eq!(decide("Write", &allow, paths), Decision::Allow);
    assert_eq!(
        decide("Write", &allow, support::paths(&["a/notes.txt"])),
        Decision::Ask
    );
}

#[test]
fn tool_selections_read_slash_command_lists() {
    let selection =
        ToolSelection::parse_list("Bash(git add:*), Bash(git status:*),Read, mcp__github").unwrap();
    let names: Vec<&str> = selection
        .rules()
        .iter()
        .map(PermissionRule::as_str)
        .collect();
    assert_eq!(
        names,
        [
            "Bash(git add:*)",
            "Bash(git status:*)",
            "Read",
            "mcp__github"
        ]
    );
    assert!(selection.names_tool(&spec_like("Grep")));
    assert!(selection.names_tool(&spec_like("mcp__github__list")));
    assert!(!selection.names_tool(&spec_like("Write")));
    assert!(ToolSelection::parse_list("Bash(git").is_err());
}

#[test]
fn an_edit_tool_in_accept_edits_mode_still_obeys_ask_rules() {
    let spec = spec_like("Edit").with_sensitivity(Sensitivity::Edit);
    let set = rules(RuleList::Ask, &["Edit(Cargo.toml)"]);
    let decide_path = |path: &str| {
        evaluate(DecisionInput {
            mode: PermissionMode::AcceptEdits,
            rules: &set,
            session_allow: &[],
            spec: &spec,
            subject: &paths(&[path]),
            hook: None,
        })
        .decision
    };
    assert_eq!(decide_path("Cargo.toml"), Decision::Ask);
    assert_eq!(decide_path("src/main.rs"), Decision::Allow);
}

#[test]
fn a_server_rule_does_not_reach_a_server_whose_name_it_starts() {
    let git = PermissionRule::parse("mcp__git").unwrap();
    assert!(git.names_tool(&spec_like("mcp__git__status")));
    assert!(!git.names_tool(&spec_like("mcp__git-x__status")));
    assert!(!git.names_tool(&spec_like("mcp__gitx__status")));
    assert!(!git.names_tool(&spec_like("mcp__git_x__status")));
    // A server configured as `git_` has the segment `git` (the client drops a trailing `_`),
    // and the rule is read the same way.
    let git_ = PermissionRule::parse("mcp__git_").unwrap();
    assert!(git_.names_tool(&spec_like("mcp__git__status")));
    assert!(!git_.names_tool(&spec_like("mcp__git_x__status")));
}

#[test]
fn a_tool_starting_with_an_underscore_belongs_to_its_server() {
    // Server segments never end in `_`, so `mcp__git___private` is `git`'s tool `_private`.
    assert!(
        PermissionRule::parse("mcp__git")
            .unwrap()
            .names_tool(&spec_like("mcp__git___private"))
    );
    assert!(
        !PermissionRule::parse("mcp__gi")
            .unwrap()
            .names_tool(&spec_like("mcp__git___private"))
    );
    assert!(
        PermissionRule::parse("mcp__git__*")
            .unwrap()
            .names_tool(&spec_like("mcp__git___private"))
    );
}

#[test]
fn path_rules_take_claude_codes_four_forms() {
    let home = std::env::var("HOME").unwrap();
    // Not denied: Read asks here only because these specs declare no sensitivity.
    let inside = |relative: &str| PermissionSubject::Paths(vec![support::path(relative)]);
    let at_home = |rest: &str| {
        PermissionSubject::Paths(vec![toolhost_core::SubjectPath::outside(format!(
            "{home}/{rest}"
        ))])
    };
    // `~/` is the home folder, `//` an absolute path; both look at the absolute form.
    let deny = rules(RuleList::Deny, &["Read(~/.ssh/**)", "Read(//w/private/**)"]);
    assert_eq!(
        decide("Read", &deny, at_home(".ssh/id_ed25519")),
        Decision::Deny
    );
    assert_eq!(decide("Read", &deny, at_home("notes.txt")), Decision::Ask);
    // The workspace is at /w in these subjects: the absolute form of private/x is /w/private/x.
    assert_eq!(decide("Read", &deny, inside("private/key")), Decision::Deny);
    assert_eq!(decide("Read", &deny, inside("public/key")), Decision::Ask);
    // `./` and `/` anchor at the workspace root; a bare name matches at any depth.
    for anchored in ["Read(./.env)", "Read(/.env)"] {
        let deny = rules(RuleList::Deny, &[anchored]);
        assert_eq!(
            decide("Read", &deny, inside(".env")),
            Decision::Deny,
            "{anchored}"
        );
        assert_eq!(
            decide("Read", &deny, inside("app/.env")),
            Decision::Ask,
            "{anchored}"
        );
    }
    let anywhere = rules(RuleList::Deny, &["Read(.env)"]);
    assert_eq!(
        decide("Read", &anywhere, inside("app/.env")),
        Decision::Deny
    );
    // A path outside the workspace has no relative form: relative rules never name it.
    assert_eq!(
        decide(
            "Read",
            &anywhere,
            PermissionSubject::Paths(vec![toolhost_core::SubjectPath::outside("/elsewhere/.env")])
        ),
        Decision::Ask
    );
}

#[test]
fn a_call_is_denied_when_any_form_of_any_path_is_and_allowed_only_when_every_path_is() {
    // A symlink `docs/link` to `secret/key`: the tool reports both paths.
    let both = support::paths(&["docs/link", "secret/key"]);
    let deny = rules(RuleList::Deny, &["Read(secret/**)"]);
    assert_eq!(decide("Read", &deny, both.clone()), Decision::Deny);
    let allow = rules(RuleList::Allow, &["Edit(docs/**)"]);
    assert_eq!(decide("Write", &allow, both), Decision::Ask);
    assert_eq!(
        decide("Write", &allow, support::paths(&["docs/a.md"])),
        Decision::Allow
    );
}

#[test]
fn family_rules_reach_every_tool_that_declares_the_family_and_no_other() {
    use toolhost_core::{PermissionFamily, ToolSpec};
    let deny = rules(RuleList::Deny, &["Read(secret/**)", "Bash(curl:*)"]);
    let decide_spec = |spec: ToolSpec, subject: PermissionSubject| {
        evaluate(DecisionInput {
            mode: PermissionMode::BypassPermissions,
            rules: &deny,
            session_allow: &[],
            spec: &spec,
            subject: &subject,
            hook: None,
        })
        .decision
    };
    let secret = support::paths(&["secret/key"]);
    let reader = ToolSpec::new("Preview", "a custom reader").with_family(PermissionFamily::Read);
    assert_eq!(decide_spec(reader, secret.clone()), Decision::Deny);
    let other = ToolSpec::new("Preview", "reports paths, no family");
    assert_eq!(decide_spec(other, secret), Decision::Allow);
    let runner = ToolSpec::new("Sh", "a second shell").with_family(PermissionFamily::Shell);
    assert_eq!(
        decide_spec(runner, shell(&[&["curl", "x"]])),
        Decision::Deny
    );
}

#[test]
fn server_rules_follow_the_origin_not_the_name() {
    use toolhost_core::{ToolOrigin, ToolSpec};
    let git = PermissionRule::parse("mcp__git").unwrap();
    // A name cut to 64 bytes with a hash suffix still belongs to its server.
    let hashed = ToolSpec::new("mcp__git__a_very_long_tool_name_cut_down_5f3a2b1c", "t")
        .with_origin(ToolOrigin::mcp("git"));
    assert!(git.names_tool(&hashed));
    // A custom tool that calls itself mcp__git__x is no MCP tool.
    let impostor = ToolSpec::new("mcp__git__x", "t").with_origin(ToolOrigin::custom("tools/x.ts"));
    assert!(!git.names_tool(&impostor));
}
