//! WebFetch and WebSearch through the real `toolhost` binary, against a site on 127.0.0.1
//! that counts its requests: extraction, the response cap, the timeout, redirects, the
//! private-network guard (rules, a resolver entry, odd spellings of loopback), the cache,
//! PDFs, deny rules, proxies, SearXNG, and the summary model. The providers' own searches are
//! in `web_search_native.rs`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::process::Output;
use std::time::Duration;

use assert_cmd::Command;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use support::web_server::{WebSite, long_text};
use toolhost_test_support::{HomeAndWorkspace, MockModel, Reply, WireFormat, write_file};

/// Variables that would send the requests elsewhere.
const PROXY_VARIABLES: [&str; 10] = [
    "no_proxy",
    "NO_PROXY",
    "http_proxy",
    "https_proxy",
    "all_proxy",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "ALL_PROXY",
    "OPENAI_BASE_URL",
    "ANTHROPIC_BASE_URL",
];

const ALLOW_LOOPBACK: &str = "WebFetch(domain:127.0.0.1)";

/// `toolhost --workspace WS ARGS… call TOOL ARGS --json` in `dirs`.
fn call(dirs: &HomeAndWorkspace, flags: &[&str], tool: &str, args: &Value) -> Value {
    let output = command(dirs)
        .args(flags)
        .args(["call", tool, &args.to_string(), "--json"])
        .output()
        .unwrap();
    parse(&output)
}

fn command(dirs: &HomeAndWorkspace) -> Command {
    let mut command = support::toolhost_with_home(&dirs.workspace, &dirs.home);
    for variable in PROXY_VARIABLES {
        command.env_remove(variable);
    }
    command.timeout(Duration::from_secs(60));
    command
}

fn parse(output: &Output) -> Value {
    serde_json::from_slice(&output.stdout).unwrap_or_else(|error| {
        panic!(
            "not JSON ({error}): {}\nstderr: {}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )
    })
}

/// The result's text.
fn text(result: &Value) -> String {
    result["content"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|block| block["text"].as_str())
        .collect()
}

fn fetch(dirs: &HomeAndWorkspace, flags: &[&str], url: &str) -> Value {
    call(dirs, flags, "WebFetch", &json!({ "url": url }))
}

#[test]
fn fetch_turns_an_article_into_markdown_without_its_boilerplate() {
    let site = WebSite::start();
    let dirs = HomeAndWorkspace::new();
    let result = fetch(&dirs, &["--allow", ALLOW_LOOPBACK], &site.url("/article"));
    let text = text(&result);
    assert_eq!(result["is_error"], false, "{text}");
    assert!(
        text.starts_with(&format!(
            "URL: {}\nTitle: Ferris Goes Sailing\n",
            site.url("/article")
        )),
        "{text}"
    );
    assert!(text.contains("## The storm"), "{text}");
    assert!(
        text.contains("counting the seconds between lightning and thunder"),
        "{text}"
    );
    for boilerplate in [
        "merch store",
        "Accept all cookies",
        "Subscribe to our newsletter",
    ] {
        assert!(!text.contains(boilerplate), "{boilerplate} left in: {text}");
    }
    assert_eq!(result["details"]["extraction"], "readability");

    let raw = call(
        &dirs,
        &["--allow", ALLOW_LOOPBACK],
        "WebFetch",
        &json!({"url": site.url("/article"), "raw": true}),
    );
    assert!(
        text_of(&raw).contains("<nav class=\"navigation\">"),
        "{raw}"
    );
}

fn text_of(result: &Value) -> String {
    text(result)
}

#[test]
fn text_and_json_pass_through() {
    let site = WebSite::start();
    let dirs = HomeAndWorkspace::new();
    let result = fetch(&dirs, &["--allow", ALLOW_LOOPBACK], &site.url("/json"));
    assert_eq!(
        text(&result),
        format!("URL: {}\n\n{{\"answer\": 42}}\n", site.url("/json"))
    );
}

#[test]
fn a_six_megabyte_body_is_cut_at_five_and_the_result_says_so() {
    let site = WebSite::start();
    let dirs = HomeAndWorkspace::new();
    let result = fetch(&dirs, &["--allow", ALLOW_LOOPBACK], &site.url("/big"));
    let text = text(&result);
    assert_eq!(result["is_error"], false, "{text}");
    assert_eq!(result["details"]["bytes"], 5 * 1024 * 1024);
    assert_eq!(result["details"]["cut_at_cap"], true);
    assert!(
        text.contains(
            "[The response was cut at the 5 MB cap: only its first 5242880 bytes were read.]"
        ),
        "{}",
        &text[..300]
    );
    assert!(
        text.contains("[Content cut at 40000 of 5242880 characters."),
        "{}",
        &text[text.len() - 300..]
    );
}

#[test]
fn a_slow_server_hits_the_configured_timeout() {
    let site = WebSite::start();
    let dirs = HomeAndWorkspace::new();
    write_file(dirs.project_config(), "[web]\ntimeout = 1\n");
    let result = fetch(&dirs, &["--allow", ALLOW_LOOPBACK], &site.url("/slow"));
    assert_eq!(result["is_error"], true);
    assert!(
        text(&result).starts_with(&format!(
            "fetching {} timed out after 1 s",
            site.url("/slow")
        )),
        "{result}"
    );
}

#[test]
fn redirects_within_the_host_are_followed() {
    let site = WebSite::start();
    let dirs = HomeAndWorkspace::new();
    let result = fetch(&dirs, &["--allow", ALLOW_LOOPBACK], &site.url("/hop"));
    let text = text(&result);
    assert!(
        text.starts_with(&format!(
            "URL: {}\nTitle: Ferris Goes Sailing\n(asked for {})\n",
            site.url("/article"),
            site.url("/hop")
        )),
        "{text}"
    );
    assert_eq!(
        (
            site.count("/hop"),
            site.count("/hop2"),
            site.count("/article")
        ),
        (1, 1, 1)
    );
}

#[test]
fn a_redirect_to_another_host_is_returned_for_the_model_to_fetch() {
    let site = WebSite::start();
    let dirs = HomeAndWorkspace::new();
    let result = fetch(
        &dirs,
        &[
            "--allow",
            ALLOW_LOOPBACK,
            "--allow",
            "WebFetch(domain:localhost)",
        ],
        &site.url("/away"),
    );
    assert_eq!(result["is_error"], false);
    let target = format!("http://localhost:{}/article", site.port());
    assert!(
        text(&result).starts_with(&format!(
            "{} redirected (HTTP 302) to another host: {target}\n",
            site.url("/away")
        )),
        "{result}"
    );
    assert_eq!(result["details"]["redirect"], target);
    // Without the rule for localhost, the redirect is refused at once.
    let refused = fetch(&dirs, &["--allow", ALLOW_LOOPBACK], &site.url("/away"));
    assert_eq!(refused["is_error"], true);
    assert!(
        text(&refused).contains(&format!(
            "to {target}, which is refused: WebFetch refuses localhost"
        )),
        "{refused}"
    );
    assert_eq!(site.count("/article"), 0);
}

#[test]
fn a_redirect_to_loopback_from_an_allowed_host_is_refused() {
    let site = WebSite::start();
    let dirs = HomeAndWorkspace::new();
    // site.test is the user's own name for the site, which they allow by name.
    write_file(
        dirs.project_config(),
        "[web]\nresolve = { \"site.test\" = \"127.0.0.1\" }\n",
    );
    let allow = ["--allow", "WebFetch(domain:site.test)"];
    let start = format!("http://site.test:{}/to-loopback", site.port());
    let result = fetch(&dirs, &allow, &start);
    let secret = site.url("/secret");
    assert_eq!(result["is_error"], true);
    assert!(
        text(&result).starts_with(&format!(
            "{start} redirected (HTTP 302) to {secret}, which is refused: WebFetch refuses \
             127.0.0.1: it is 127.0.0.1, which is loopback (127.0.0.0/8)."
        )),
        "{result}"
    );
    // The model tries it anyway: refused, since no rule names 127.0.0.1.
    let followed = fetch(&dirs, &allow, &secret);
    assert_eq!(followed["is_error"], true);
    assert!(
        text(&followed)
            .starts_with("WebFetch refuses 127.0.0.1: it is 127.0.0.1, which is loopback"),
        "{followed}"
    );
    // A redirect within the host to an odd spelling is refused as it is.
    let hex = fetch(
        &dirs,
        &allow,
        &format!("http://site.test:{}/to-hex", site.port()),
    );
    assert!(
        text(&hex)
            .starts_with("the page redirected to a URL WebFetch refuses: the host '0x7f.0.0.1'"),
        "{hex}"
    );
    assert_eq!(site.count("/secret"), 0);
}

#[test]
fn a_name_resolving_to_a_private_address_is_refused() {
    let site = WebSite::start();
    let dirs = HomeAndWorkspace::new();
    write_file(
        dirs.project_config(),
        "[web]\nresolve = { \"intranet.test\" = [\"127.0.0.1\"] }\n",
    );
    // The address is allowed by name; the name that resolves to it is not.
    let result = fetch(
        &dirs,
        &["--allow", ALLOW_LOOPBACK],
        &format!("http://intranet.test:{}/count", site.port()),
    );
    assert_eq!(result["is_error"], true);
    assert!(
        text(&result).starts_with(
            "WebFetch refuses intranet.test: it resolves to 127.0.0.1, which is loopback (127.0.0.0/8). \
             Fetching loopback, private and link-local addresses is refused unless the user \
             allows this host by name with a permission rule such as 'WebFetch(domain:intranet.test)'"
        ),
        "{result}"
    );
    assert_eq!(site.total(), 0);
}

#[test]
fn private_address_tricks_are_refused_with_nothing_sent() {
    let site = WebSite::start();
    let dirs = HomeAndWorkspace::new();
    let port = site.port();
    let tricks = [
        format!("http://2130706433:{port}/count"),
        format!("http://0177.0.0.1:{port}/count"),
        format!("http://0x7f.0.0.1:{port}/count"),
        format!("http://0x7f000001:{port}/count"),
        format!("http://127.1:{port}/count"),
        format!("http://%31%32%37.0.0.1:{port}/count"),
        format!("http://[::ffff:127.0.0.1]:{port}/count"),
        format!("http://[::ffff:7f00:1]:{port}/count"),
        format!("http://[::1]:{port}/count"),
        format!("http://0.0.0.0:{port}/count"),
        format!("http://localhost:{port}/count"),
        format!("http://localhost.:{port}/count"),
        format!("http://sub.localhost:{port}/count"),
        format!("http://a@127.0.0.1:{port}/count"),
        format!("http://@127.0.0.1:{port}/count"),
        format!("http://example.com@127.0.0.1:{port}/count"),
        format!("http:127.0.0.1:{port}/count"),
        format!("gopher://127.0.0.1:{port}/count"),
        "file:///etc/passwd".to_owned(),
        "http://169.254.169.254/latest/meta-data/".to_owned(),
        "http://[fd00:ec2::254]/latest/meta-data/".to_owned(),
    ];
    for url in &tricks {
        let result = fetch(&dirs, &["--allow", ALLOW_LOOPBACK], url);
        assert_eq!(result["is_error"], true, "{url} was not refused: {result}");
    }
    assert_eq!(site.total(), 0, "a trick reached the server");
    // The plain spelling of the allowed address goes through.
    let plain = fetch(&dirs, &["--allow", ALLOW_LOOPBACK], &site.url("/count"));
    assert_eq!(plain["is_error"], false, "{plain}");
    assert_eq!(site.total(), 1);
}

#[test]
fn a_cached_page_is_not_fetched_again_for_a_new_prompt() {
    let site = WebSite::start();
    let dirs = HomeAndWorkspace::new();
    let first = call(
        &dirs,
        &["--allow", ALLOW_LOOPBACK],
        "WebFetch",
        &json!({"url": site.url("/count"), "prompt": "what is it?"}),
    );
    assert_eq!(first["details"]["cached"], false);
    let again = call(
        &dirs,
        &["--allow", ALLOW_LOOPBACK],
        "WebFetch",
        &json!({"url": format!("{}?utm_source=news#top", site.url("/count")), "prompt": "anything else?"}),
    );
    assert_eq!(again["details"]["cached"], true, "{again}");
    assert!(
        text(&again).contains("[From the cache: fetched "),
        "{again}"
    );
    assert!(text(&again).contains("counted page"), "{again}");
    assert!(!text(&again).contains("(asked for"), "{again}");
    assert_eq!(site.count("/count"), 1);
    assert!(
        dirs.home
            .join(".toolhost/cache/web")
            .read_dir()
            .unwrap()
            .next()
            .is_some()
    );
    // A cached page of a private host needs the rule still.
    let without_rule = fetch(&dirs, &[], &site.url("/count"));
    assert_eq!(without_rule["is_error"], true, "{without_rule}");
}

#[test]
fn a_pdf_is_refused_with_a_clear_message() {
    let site = WebSite::start();
    let dirs = HomeAndWorkspace::new();
    let result = fetch(&dirs, &["--allow", ALLOW_LOOPBACK], &site.url("/doc.pdf"));
    assert_eq!(result["is_error"], true);
    assert!(
        text(&result).starts_with(&format!(
            "{} is a PDF document; WebFetch reads HTML, text and JSON only.",
            site.url("/doc.pdf")
        )),
        "{result}"
    );
}

#[test]
fn an_error_status_is_an_error_result_with_the_page() {
    let site = WebSite::start();
    let dirs = HomeAndWorkspace::new();
    let result = fetch(&dirs, &["--allow", ALLOW_LOOPBACK], &site.url("/missing"));
    assert_eq!(result["is_error"], true);
    assert!(text(&result).starts_with(&format!("{} answered HTTP 404.", site.url("/missing"))));
    assert!(text(&result).contains("no such page"), "{result}");
}

#[test]
fn a_deny_rule_for_the_domain_refuses_the_fetch() {
    let site = WebSite::start();
    let dirs = HomeAndWorkspace::new();
    let result = fetch(
        &dirs,
        &["--allow", ALLOW_LOOPBACK, "--deny", ALLOW_LOOPBACK],
        &site.url("/count"),
    );
    assert_eq!(result["is_error"], true);
    assert!(
        text(&result).contains("WebFetch(domain:127.0.0.1)"),
        "{result}"
    );
    // Subdomains too, before anything resolves.
    write_file(
        dirs.project_config(),
        "[web]\nresolve = { \"www.site.test\" = \"127.0.0.1\" }\n",
    );
    let sub = fetch(
        &dirs,
        &[
            "--allow",
            "WebFetch(domain:site.test)",
            "--deny",
            "WebFetch(domain:site.test)",
        ],
        &format!("http://www.site.test:{}/count", site.port()),
    );
    assert_eq!(sub["is_error"], true);
    assert!(text(&sub).contains("WebFetch(domain:site.test)"), "{sub}");
    assert_eq!(site.total(), 0);
}

#[test]
fn web_search_numbers_the_results_of_a_searxng_instance() {
    let site = WebSite::start();
    let dirs = HomeAndWorkspace::new();
    write_file(
        dirs.project_config(),
        format!(
            "[web.search]\nprovider = \"searxng\"\nurl = \"{}\"\n",
            site.url("")
        ),
    );
    let result = call(
        &dirs,
        &[],
        "WebSearch",
        &json!({"query": "rust lang", "count": 2}),
    );
    assert_eq!(
        text(&result),
        "Results for \"rust lang\" (searxng):\n\
         \n1. Rust Programming Language\n   https://www.rust-lang.org/\n   A language empowering everyone to build reliable and efficient software.\n\
         \n2. The Rust Book\n   https://doc.rust-lang.org/book/\n   An introductory book about Rust.\n"
    );
    let searches = site.searches();
    assert_eq!(searches.len(), 1);
    assert_eq!(searches[0].query, "q=rust+lang&format=json");
}

#[test]
fn web_search_asks_tavily_brave_and_jina_with_the_key_from_the_environment() {
    let site = WebSite::start();
    for (provider, key_header) in [
        ("tavily", "authorization: Bearer k-123"),
        ("brave", "x-subscription-token: k-123"),
        ("jina", "authorization: Bearer k-123"),
    ] {
        let dirs = HomeAndWorkspace::new();
        write_file(
            dirs.project_config(),
            format!(
                "[web.search]\nprovider = \"{provider}\"\nurl = \"{}\"\napi_key_env = \"SEARCH_KEY\"\n",
                site.url(&format!("/{provider}"))
            ),
        );
        let output = command(&dirs)
            .env("SEARCH_KEY", "k-123")
            .args([
                "call",
                "WebSearch",
                r#"{"query": "rust", "count": 1}"#,
                "--json",
            ])
            .output()
            .unwrap();
        let result = parse(&output);
        assert_eq!(
            text(&result),
            format!(
                "Results for \"rust\" ({provider}):\n\n1. Rust Programming Language\n   \
                 https://www.rust-lang.org/\n   A language empowering everyone{}\n",
                if provider == "tavily" {
                    " to build reliable and efficient software."
                } else {
                    "."
                }
            )
        );
        let request = site.searches().pop().unwrap();
        assert_eq!(request.path, format!("/{provider}"));
        assert!(
            request.headers.iter().any(|line| line == key_header),
            "{request:?}"
        );
        match provider {
            "tavily" => assert_eq!(
                serde_json::from_str::<Value>(&request.body).unwrap(),
                json!({"query": "rust", "max_results": 1})
            ),
            "brave" => assert_eq!(request.query, "q=rust&count=1"),
            _ => assert_eq!(request.query, "q=rust"),
        }
        // Without the variable, the result names it.
        let missing = call(&dirs, &[], "WebSearch", &json!({"query": "rust"}));
        assert_eq!(missing["is_error"], true);
        assert!(
            text(&missing).contains("set the environment variable SEARCH_KEY"),
            "{missing}"
        );
    }
}

#[test]
fn web_search_without_a_service_says_how_to_configure_one() {
    let dirs = HomeAndWorkspace::new();
    let result = call(&dirs, &[], "WebSearch", &json!({"query": "rust"}));
    assert_eq!(result["is_error"], false);
    assert!(
        text(&result).starts_with("Web search is unavailable"),
        "{result}"
    );
    assert!(
        text(&result).contains("[web.search]\nprovider = \"searxng\""),
        "{result}"
    );
}

#[test]
fn a_bad_web_config_value_names_the_file_and_line() {
    let dirs = HomeAndWorkspace::new();
    let path = write_file(
        dirs.project_config(),
        "[web]\ntimeout = 5\n\n[web.search]\nprovider = \"google\"\n",
    );
    let output = command(&dirs).args(["tools"]).output().unwrap();
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains(&format!(
            "invalid config file {}: line 5: web.search.provider: unknown search provider 'google'",
            path.display()
        )),
        "{stderr}"
    );
    write_file(
        dirs.project_config(),
        "[web]\nresolve = { \"a.test\" = \"not-an-ip\" }\n",
    );
    let output = command(&dirs).args(["tools"]).output().unwrap();
    assert!(
        String::from_utf8_lossy(&output.stderr)
            .contains("line 2: web.resolve.\"a.test\": 'not-an-ip' is not an IP address"),
        "{output:?}"
    );
}

#[test]
fn a_prompt_about_a_long_page_is_answered_by_the_summary_model() {
    let site = WebSite::start();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let model = runtime.block_on(MockModel::start(
        WireFormat::OpenAiChat,
        [Reply::text("The page lists 200 lines about tides.").into()],
    ));
    let dirs = HomeAndWorkspace::new();
    write_file(
        dirs.project_config(),
        format!(
            "[providers.small]\napi = \"openai-chat\"\nbase_url = \"{}\"\nmodel = \"big\"\n\n\
             [web]\nsummary_model = \"tiny-summarizer\"\n",
            model.openai_base_url()
        ),
    );
    let result = call(
        &dirs,
        &["--allow", ALLOW_LOOPBACK],
        "WebFetch",
        &json!({"url": site.url("/long"), "prompt": "How many lines?"}),
    );
    assert_eq!(
        text(&result),
        format!(
            "URL: {}\n[Answer by tiny-summarizer to the prompt, from the page's {} characters:]\n\n\
             The page lists 200 lines about tides.\n",
            site.url("/long"),
            long_text().chars().count()
        )
    );
    let requests = model.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].body["model"], "tiny-summarizer");
    let asked = requests[0].body["messages"].to_string();
    assert!(asked.contains("Question: How many lines?"), "{asked}");
    assert!(asked.contains("Line 200 of the long page"), "{asked}");
}

#[test]
fn without_a_summary_model_a_prompt_gets_the_page_with_a_note() {
    let site = WebSite::start();
    let dirs = HomeAndWorkspace::new();
    let result = call(
        &dirs,
        &["--allow", ALLOW_LOOPBACK],
        "WebFetch",
        &json!({"url": site.url("/long"), "prompt": "How many lines?"}),
    );
    let text = text(&result);
    assert!(
        text.contains("[No summary model is configured ([web] summary_model)"),
        "{text}"
    );
    assert!(text.contains("Line 200 of the long page"), "{text}");
}

#[test]
fn a_configured_proxy_is_used_for_hosts_that_pass_the_guard() {
    let proxy = WebSite::start();
    let dirs = HomeAndWorkspace::new();
    // A public address, so the guard lets the name through; the proxy is the local site.
    write_file(
        dirs.project_config(),
        "[web]\ntimeout = 5\nresolve = { \"far.test\" = \"93.184.216.34\" }\n",
    );
    let output = command(&dirs)
        .env("HTTP_PROXY", proxy.url(""))
        .args([
            "call",
            "WebFetch",
            r#"{"url": "http://far.test:8080/count"}"#,
            "--json",
        ])
        .output()
        .unwrap();
    let result = parse(&output);
    // The proxy got the absolute URL; it has no such route and says 404.
    assert_eq!(proxy.count("http://far.test:8080/count"), 1, "{result}");
    assert!(
        text(&result).starts_with("http://far.test:8080/count answered HTTP 404."),
        "{result}"
    );
    // A private address is refused before the proxy is asked.
    let refused = command(&dirs)
        .env("HTTP_PROXY", proxy.url(""))
        .args([
            "call",
            "WebFetch",
            r#"{"url": "http://10.1.2.3:8080/"}"#,
            "--json",
        ])
        .output()
        .unwrap();
    assert_eq!(parse(&refused)["is_error"], true);
    assert_eq!(proxy.total(), 1);
}
