//! The token endpoint of the test authorization server: the authorization-code grant (the
//! PKCE verifier checked), the client-credentials grant (the static client's only) and the
//! refresh grant (rotating refresh tokens, or not).

use std::collections::BTreeMap;

use axum::http::{HeaderMap, StatusCode, header};
use axum::response::Response;
use base64::Engine as _;
use serde_json::json;
use sha2::{Digest as _, Sha256};

use super::{Grants, Shared, lock};
use crate::tiny_mcp::json_answer;

/// `POST /token` with the form `form`.
pub(super) fn token(
    shared: &Shared,
    headers: &HeaderMap,
    form: &BTreeMap<String, String>,
) -> Response {
    let field = |key: &str| form.get(key).cloned().unwrap_or_default();
    let mut grants = lock(shared);
    let (client, scope) = match field("grant_type").as_str() {
        "authorization_code" => {
            let Some((client, challenge, scope)) = grants.codes.remove(&field("code")) else {
                return oauth_error("invalid_grant");
            };
            let verifier = Sha256::digest(field("code_verifier").as_bytes());
            let computed = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(verifier);
            if computed != challenge {
                return oauth_error("invalid_grant");
            }
            if let Some((id, secret)) = &shared.options.static_client
                && *id == client
                && !secret_given(headers, form, id, secret)
            {
                return oauth_error("invalid_client");
            }
            (client, scope)
        }
        "refresh_token" => {
            let token = field("refresh_token");
            let Some((client, scope)) = grants.refresh.get(&token).cloned() else {
                return oauth_error("invalid_grant");
            };
            // A confidential client authenticates on refresh too (RFC 6749 section 6).
            if let Some((id, secret)) = &shared.options.static_client
                && *id == client
                && !secret_given(headers, form, id, secret)
            {
                return oauth_error("invalid_client");
            }
            grants.refresh_grants += 1;
            if !shared.options.rotate_refresh_tokens {
                grants.issued += 1;
                let access = format!("access-{}", grants.issued);
                grants.access.insert(access.clone(), scope.clone());
                return json_answer(
                    StatusCode::OK,
                    &json!({"access_token": access, "token_type": "Bearer",
                            "expires_in": shared.options.access_lifetime_secs, "scope": scope}),
                );
            }
            grants.refresh.remove(&token);
            (client, scope)
        }
        "client_credentials" => return machine_token(shared, &mut grants, headers, form),
        _ => return oauth_error("unsupported_grant_type"),
    };
    grants.issued += 1;
    let access = format!("access-{}", grants.issued);
    let refresh = format!("refresh-{}", grants.issued);
    grants.access.insert(access.clone(), scope.clone());
    grants
        .refresh
        .insert(refresh.clone(), (client, scope.clone()));
    json_answer(
        StatusCode::OK,
        &json!({"access_token": access, "token_type": "Bearer", "refresh_token": refresh,
                "expires_in": shared.options.access_lifetime_secs, "scope": scope}),
    )
}

/// The client-credentials grant, for the static client only: an access token, no refresh
/// token.
fn machine_token(
    shared: &Shared,
    grants: &mut Grants,
    headers: &HeaderMap,
    form: &BTreeMap<String, String>,
) -> Response {
    let Some((id, secret)) = &shared.options.static_client else {
        return oauth_error("unauthorized_client");
    };
    if !secret_given(headers, form, id, secret) {
        return oauth_error("invalid_client");
    }
    let scope = form.get("scope").cloned().unwrap_or_default();
    grants.machine_grants.push(scope.clone());
    grants.issued += 1;
    let access = format!("access-{}", grants.issued);
    grants.access.insert(access.clone(), scope.clone());
    json_answer(
        StatusCode::OK,
        &json!({"access_token": access, "token_type": "Bearer",
                "expires_in": shared.options.access_lifetime_secs, "scope": scope}),
    )
}

fn secret_given(
    headers: &HeaderMap,
    form: &BTreeMap<String, String>,
    id: &str,
    secret: &str,
) -> bool {
    if form
        .get("client_secret")
        .is_some_and(|given| given == secret)
    {
        return true;
    }
    let basic = base64::engine::general_purpose::STANDARD.encode(format!("{id}:{secret}"));
    headers
        .get(header::AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| value == format!("Basic {basic}"))
}

fn oauth_error(error: &str) -> Response {
    json_answer(StatusCode::BAD_REQUEST, &json!({"error": error}))
}
