//! WebSearch and WebFetch as the registry and the permission system see them: specs, subjects,
//! and which rules let WebFetch reach a loopback address (only one naming the host).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{Read as _, Write as _};
use std::net::TcpListener;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use pretty_assertions::assert_eq;
use serde_json::json;
use toolhost_core::permission::{PermissionMode, PermissionPolicy, PermissionRule, RuleList};
use toolhost_core::{PermissionFamily, PermissionSubject, Sensitivity, ToolRegistry};
use toolhost_web::{WebFetchSettings, WebSearchSettings, web_tools};

#[test]
fn web_tools_come_in_spec_order_safe_read_only_and_in_the_network_family() {
    let summary: Vec<_> = web_tools(WebSearchSettings::default(), WebFetchSettings::default())
        .iter()
        .map(|tool| {
            let spec = tool.spec();
            (
                spec.name,
                spec.sensitivity,
                spec.annotations.read_only,
                spec.annotations.open_world,
                spec.family,
            )
        })
        .collect();
    assert_eq!(
        summary,
        [
            (
                "WebSearch".to_owned(),
                Sensitivity::Safe,
                true,
                true,
                PermissionFamily::Network
            ),
            (
                "WebFetch".to_owned(),
                Sensitivity::Safe,
                true,
                true,
                PermissionFamily::Network
            ),
        ]
    );
    for tool in web_tools(WebSearchSettings::default(), WebFetchSettings::default()) {
        let spec = tool.spec();
        for (name, schema) in spec.parameters["properties"].as_object().unwrap() {
            assert!(
                schema["description"]
                    .as_str()
                    .is_some_and(|text| text.len() > 10),
                "{}.{name} has no description",
                spec.name
            );
        }
    }
}

#[test]
fn web_fetch_reports_the_host_domain_rules_name() {
    let tools = web_tools(WebSearchSettings::default(), WebFetchSettings::default());
    let fetch = &tools[1];
    assert_eq!(
        fetch.permission_subject(&json!({"url": "https://API.Example.com:8443/x?y#z"})),
        PermissionSubject::Domain("api.example.com".into())
    );
    assert_eq!(
        fetch.permission_subject(&json!({"url": "not a url"})),
        PermissionSubject::None
    );
}

/// A site on 127.0.0.1 that answers every connection with one line and counts them.
fn counting_site() -> (u16, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let served = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&served);
    std::thread::spawn(move || {
        for mut stream in listener.incoming().flatten() {
            counter.fetch_add(1, Ordering::SeqCst);
            let mut buffer = [0; 4096];
            let _ = stream.read(&mut buffer);
            let _ = stream.write_all(
                b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 6\r\nConnection: close\r\n\r\nhello\n",
            );
        }
    });
    (port, served)
}

async fn fetch_with(rules: &[&str], mode: PermissionMode, port: u16) -> (bool, String) {
    let mut policy = PermissionPolicy::builder().mode(mode);
    for rule in rules {
        policy = policy.rule(RuleList::Allow, PermissionRule::parse(rule).unwrap());
    }
    let registry = ToolRegistry::builder()
        .authorizer(Arc::new(policy.build()))
        .build();
    assert!(
        registry
            .register_all(web_tools(
                WebSearchSettings::default(),
                WebFetchSettings::default(),
            ))
            .is_empty()
    );
    let result = registry
        .execute(
            "1",
            "WebFetch",
            json!({"url": format!("http://127.0.0.1:{port}/")}),
        )
        .await;
    (result.is_error, result.text())
}

#[tokio::test]
async fn only_a_rule_naming_the_host_lets_web_fetch_reach_loopback() {
    let (port, served) = counting_site();
    for (rules, mode) in [
        (&[][..], PermissionMode::Default),
        (&["WebFetch"][..], PermissionMode::Default),
        (&["WebFetch(domain:localhost)"][..], PermissionMode::Default),
        (&[][..], PermissionMode::BypassPermissions),
    ] {
        let (is_error, text) = fetch_with(rules, mode, port).await;
        assert!(is_error, "{rules:?} in {mode:?}: {text}");
        assert!(text.starts_with("WebFetch refuses 127.0.0.1"), "{text}");
    }
    assert_eq!(served.load(Ordering::SeqCst), 0);
    let (is_error, text) = fetch_with(
        &["WebFetch(domain:127.0.0.1)"],
        PermissionMode::Default,
        port,
    )
    .await;
    assert!(!is_error, "{text}");
    assert!(text.ends_with("\nhello\n"), "{text}");
    assert_eq!(served.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn without_a_permission_system_loopback_is_refused() {
    let (port, served) = counting_site();
    let registry = ToolRegistry::new();
    assert!(
        registry
            .register_all(web_tools(
                WebSearchSettings::default(),
                WebFetchSettings::default(),
            ))
            .is_empty()
    );
    let result = registry
        .execute(
            "1",
            "WebFetch",
            json!({"url": format!("http://127.0.0.1:{port}/")}),
        )
        .await;
    assert!(result.is_error, "{}", result.text());
    assert_eq!(served.load(Ordering::SeqCst), 0);
}
