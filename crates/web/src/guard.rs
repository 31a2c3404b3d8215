//! The private-network guard: what a URL must look like, and where its host may resolve,
//! before WebFetch sends anything.
//!
//! The URL is checked as written: `http` or `https` only, no user name or password in it
//! (`http://example.com@127.0.0.1/` reads as a host it is not), and an IP address only in its
//! canonical spelling, so that `2130706433`, `0177.0.0.1`, `0x7f.1` or `[::FFFF:127.0.0.1]`
//! never pass for something else. Then the host is resolved once and every address it
//! resolves to is checked ([`non_public_range`]); the request is pinned to exactly those
//! addresses ([`reqwest::ClientBuilder::resolve_to_addrs`]), so a second DNS answer (DNS
//! rebinding) cannot swap them. A loopback or private address passes only when a permission
//! rule names the host outright (`WebFetch(domain:localhost)`), which the tool asks through
//! [`toolhost_core::ToolContext::allows_explicitly`].

use std::collections::BTreeMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use url::{Host, Url};

use super::address::non_public_range;

/// Why the guard refuses a URL; each message says what the model can do instead.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum GuardError {
    /// The text is not a URL.
    #[error("'{url}' is not a valid URL ({problem}): give a full http:// or https:// URL")]
    Invalid {
        /// The text as given.
        url: String,
        /// What the parser said.
        problem: String,
    },
    /// Another scheme than http or https.
    #[error("WebFetch only fetches http:// and https:// URLs, not {scheme}:")]
    Scheme {
        /// The scheme given.
        scheme: String,
    },
    /// The URL is not written `scheme://host/…`.
    #[error("'{url}' is not written as scheme://host/path: write the URL in full")]
    Form {
        /// The text as given.
        url: String,
    },
    /// A user name or password in the URL.
    #[error(
        "'{url}' has a user name or password before the host (the part before '@'): WebFetch \
         refuses URLs with credentials; fetch the URL without them"
    )]
    Credentials {
        /// The text as given.
        url: String,
    },
    /// An IP address in another spelling than its canonical one.
    #[error(
        "the host '{written}' is an IP address written in an unusual form: write it as \
         {canonical} (WebFetch refuses other spellings of addresses)"
    )]
    Spelling {
        /// The host as written.
        written: String,
        /// The address in its canonical form.
        canonical: String,
    },
    /// The host does not resolve.
    #[error("cannot resolve the host {host}: {problem}")]
    Resolve {
        /// The host.
        host: String,
        /// What the resolver said.
        problem: String,
    },
    /// The host is, or resolves to, an address that is not public.
    #[error(
        "WebFetch refuses {host}: it {how} {address}, which is {range}. Fetching loopback, \
         private and link-local addresses is refused unless the user allows this host by \
         name with a permission rule such as 'WebFetch(domain:{rule_host})'"
    )]
    Private {
        /// The host as in the URL.
        host: String,
        /// "is" for an address, "resolves to" for a name.
        how: &'static str,
        /// The address refused.
        address: IpAddr,
        /// The range it is in.
        range: &'static str,
        /// The host as a rule would name it.
        rule_host: String,
    },
}

/// A URL that passed the written-form checks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckedUrl {
    /// The parsed URL.
    pub url: Url,
    /// Its host as permission rules see it: lower case, IPv6 in brackets.
    pub host: String,
}

/// Parses `text` and checks its written form: scheme, credentials, address spelling.
pub fn check_url(text: &str) -> Result<CheckedUrl, GuardError> {
    let text = text.trim();
    let url = Url::parse(text).map_err(|error| GuardError::Invalid {
        url: text.to_owned(),
        problem: error.to_string(),
    })?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(GuardError::Scheme {
            scheme: url.scheme().to_owned(),
        });
    }
    let authority = written_authority(text).ok_or_else(|| GuardError::Form {
        url: text.to_owned(),
    })?;
    if authority.contains('@') || !url.username().is_empty() || url.password().is_some() {
        return Err(GuardError::Credentials {
            url: text.to_owned(),
        });
    }
    let host = url
        .host_str()
        .ok_or_else(|| GuardError::Form {
            url: text.to_owned(),
        })?
        .to_owned();
    if matches!(url.host(), Some(Host::Ipv4(_) | Host::Ipv6(_))) {
        let written = written_host(authority);
        if !written.eq_ignore_ascii_case(&host) {
            return Err(GuardError::Spelling {
                written: written.to_owned(),
                canonical: host,
            });
        }
    }
    Ok(CheckedUrl { url, host })
}

/// The authority part as written (`user@host:port`), when the text reads `scheme://…`.
fn written_authority(text: &str) -> Option<&str> {
    let (_, rest) = text.split_once("://")?;
    let end = rest.find(['/', '?', '#', '\\']).unwrap_or(rest.len());
    Some(&rest[..end])
}

/// The host of an authority without `@` as written: `[v6]` or the part before `:port`.
fn written_host(authority: &str) -> &str {
    if authority.starts_with('[') {
        return authority
            .find(']')
            .map_or(authority, |end| &authority[..=end]);
    }
    authority.split(':').next().unwrap_or(authority)
}

/// Resolves host names: fixed entries first (`[web] resolve`, like lines of `/etc/hosts`,
/// whose addresses are checked like any DNS answer), then the system resolver.
#[derive(Clone, Debug, Default)]
pub struct HostResolver {
    fixed: Arc<BTreeMap<String, Vec<IpAddr>>>,
}

impl HostResolver {
    /// The system resolver, with these fixed entries (host names in lower case).
    pub fn with_fixed(fixed: BTreeMap<String, Vec<IpAddr>>) -> Self {
        let fixed = fixed
            .into_iter()
            .map(|(host, addresses)| (host.trim_end_matches('.').to_ascii_lowercase(), addresses))
            .collect();
        Self {
            fixed: Arc::new(fixed),
        }
    }

    /// Every address of `host`, once. `localhost` and its subdomains are loopback without
    /// asking DNS (RFC 6761), so `localhost.` is loopback even where DNS does not know it.
    async fn resolve(&self, host: &str, port: u16) -> Result<Vec<IpAddr>, GuardError> {
        let name = host.trim_end_matches('.');
        if let Some(addresses) = self.fixed.get(name) {
            return Ok(addresses.clone());
        }
        if name == "localhost" || name.ends_with(".localhost") {
            return Ok(vec![
                IpAddr::V4(std::net::Ipv4Addr::LOCALHOST),
                IpAddr::V6(std::net::Ipv6Addr::LOCALHOST),
            ]);
        }
        let found = tokio::net::lookup_host((host, port))
            .await
            .map_err(|error| GuardError::Resolve {
                host: host.to_owned(),
                problem: error.to_string(),
            })?;
        let mut addresses: Vec<IpAddr> = Vec::new();
        for address in found {
            if !addresses.contains(&address.ip()) {
                addresses.push(address.ip());
            }
        }
        if addresses.is_empty() {
            return Err(GuardError::Resolve {
                host: host.to_owned(),
                problem: "no addresses".to_owned(),
            });
        }
        Ok(addresses)
    }
}

/// Where a checked URL's host may be reached.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Destination {
    /// The addresses to connect to (port 0: the URL's port applies); empty for an IP
    /// literal, which needs no resolution.
    pub pinned: Vec<SocketAddr>,
    /// Whether some address is not public (reached because a rule names the host).
    pub private: bool,
}

/// Resolves `checked`'s host once and checks every address. `named_by_rule`: a permission
/// rule names the host outright, so loopback and private addresses are allowed.
pub async fn resolve_destination(
    checked: &CheckedUrl,
    resolver: &HostResolver,
    named_by_rule: bool,
) -> Result<Destination, GuardError> {
    let (addresses, literal) = match checked.url.host() {
        Some(Host::Ipv4(v4)) => (vec![IpAddr::V4(v4)], true),
        Some(Host::Ipv6(v6)) => (vec![IpAddr::V6(v6)], true),
        _ => {
            let port = checked.url.port_or_known_default().unwrap_or(443);
            (resolver.resolve(&checked.host, port).await?, false)
        }
    };
    let mut private = false;
    for address in &addresses {
        if let Some(range) = non_public_range(*address) {
            if !named_by_rule {
                return Err(GuardError::Private {
                    host: checked.host.clone(),
                    how: if literal { "is" } else { "resolves to" },
                    address: *address,
                    range,
                    rule_host: checked.host.trim_end_matches('.').to_owned(),
                });
            }
            private = true;
        }
    }
    let pinned = if literal {
        Vec::new()
    } else {
        addresses
            .into_iter()
            .map(|address| SocketAddr::new(address, 0))
            .collect()
    };
    Ok(Destination { pinned, private })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn tricky_spellings_of_loopback_are_refused_before_anything_resolves() {
        for url in [
            "http://2130706433/",
            "http://0177.0.0.1/",
            "http://0x7f.0.0.1/",
            "http://0x7f000001/",
            "http://127.1/",
            "http://127.0.1/",
            "http://[::FFFF:127.0.0.1]/",
            "http://[::ffff:127.0.0.1]/",
            "http://[0:0:0:0:0:0:0:1]/",
            "http://%31%32%37.0.0.1/",
        ] {
            let error = check_url(url).unwrap_err();
            assert!(
                matches!(error, GuardError::Spelling { .. }),
                "{url}: {error:?}"
            );
        }
    }

    #[test]
    fn credentials_schemes_and_odd_forms_are_refused() {
        for url in [
            "http://a@127.0.0.1/",
            "http://@127.0.0.1/",
            "http://user:pass@example.com/",
            "http://example.com@127.0.0.1/",
        ] {
            assert!(
                matches!(check_url(url), Err(GuardError::Credentials { .. })),
                "{url}"
            );
        }
        for url in [
            "file:///etc/passwd",
            "ftp://example.com/",
            "gopher://127.0.0.1/",
        ] {
            assert!(
                matches!(check_url(url), Err(GuardError::Scheme { .. })),
                "{url}"
            );
        }
        for url in ["http:127.0.0.1/", "http:\\\\127.0.0.1\\"] {
            assert!(
                matches!(check_url(url), Err(GuardError::Form { .. })),
                "{url}"
            );
        }
    }

    #[test]
    fn canonical_urls_pass_with_their_host() {
        let checked = check_url("https://Example.COM:8443/a?b#c").unwrap();
        assert_eq!(checked.host, "example.com");
        assert_eq!(
            check_url("http://127.0.0.1:8080/").unwrap().host,
            "127.0.0.1"
        );
        assert_eq!(check_url("http://[::1]:8080/").unwrap().host, "[::1]");
        assert_eq!(check_url("http://localhost./").unwrap().host, "localhost.");
    }

    #[tokio::test]
    async fn private_addresses_need_a_rule_naming_the_host() {
        let resolver = HostResolver::with_fixed(BTreeMap::from([(
            "inside.test".to_owned(),
            vec!["10.0.0.7".parse().unwrap()],
        )]));
        for url in [
            "http://127.0.0.1/",
            "http://[::1]/",
            "http://0.0.0.0/",
            "http://169.254.169.254/latest/meta-data/",
            "http://[fd00:ec2::254]/",
            "http://inside.test/",
            "http://localhost./",
        ] {
            let checked = check_url(url).unwrap();
            let error = resolve_destination(&checked, &resolver, false)
                .await
                .unwrap_err();
            assert!(
                matches!(error, GuardError::Private { .. }),
                "{url}: {error}"
            );
        }
        let checked = check_url("http://inside.test:8080/").unwrap();
        let allowed = resolve_destination(&checked, &resolver, true)
            .await
            .unwrap();
        assert_eq!(
            allowed,
            Destination {
                pinned: vec!["10.0.0.7:0".parse().unwrap()],
                private: true
            }
        );
    }
}
