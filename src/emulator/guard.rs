//! What keeps a web page the developer has open from driving the emulator.
//!
//! - **The Host check** (every route of both interfaces): a page that rebinds its own domain
//!   to 127.0.0.1 (DNS rebinding) reaches the emulator under that domain's name, so a
//!   request is answered only when its `Host` is an IP address (rebinding needs a name),
//!   a loopback name (`localhost`, `*.localhost`), this machine's own name, or a name the
//!   user allowed (`--allowed-host`: a name, `.example.com` for it and every name under it,
//!   or `*` for any). Anything else gets 403 naming the flag.
//! - **No cross-site writes** ([`cross_site`]): an admin operation that changes the state,
//!   sent by a browser from another origin (`Origin` not the emulator's own, or
//!   `Sec-Fetch-Site: cross-site`), is refused. A browser sends a "simple" cross-site POST
//!   without asking first, so the check is on the emulator's side. Clients that are not
//!   browsers send neither header and are unaffected.
//! - **The admin token** ([`AdminToken`], `--admin-token`): for an emulator other machines
//!   can reach, every `/_emulator/` route asks for it.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::json;

use super::api_error::{ApiError, Interface};

/// The names a request's `Host` may carry besides addresses and loopback names.
#[derive(Debug, Clone, Default)]
pub struct AllowedHosts {
    /// As the user gave them, lowercased: names, `.suffix` entries, or `*`.
    allowed: Vec<String>,
    /// This machine's name, lowercased (empty when the OS gives none).
    own_name: String,
}

impl AllowedHosts {
    pub fn new(allowed: &[String]) -> AllowedHosts {
        let own_name = gethostname::gethostname()
            .to_string_lossy()
            .trim()
            .to_ascii_lowercase();
        AllowedHosts {
            allowed: allowed
                .iter()
                .map(|h| h.trim().trim_end_matches('.').to_ascii_lowercase())
                .filter(|h| !h.is_empty())
                .collect(),
            own_name,
        }
    }

    /// Whether a request whose `Host` header is `host` (a name or address, with or without
    /// a port) is answered.
    pub fn allows(&self, host: &str) -> bool {
        let name = host_name(host);
        if name.is_empty() {
            return false;
        }
        if name.parse::<std::net::IpAddr>().is_ok() {
            return true;
        }
        let name = name.trim_end_matches('.').to_ascii_lowercase();
        if name == "localhost" || name.ends_with(".localhost") {
            return true;
        }
        if !self.own_name.is_empty()
            && (name == self.own_name
                || name
                    .strip_prefix(&self.own_name)
                    .is_some_and(|rest| rest == ".local"))
        {
            return true;
        }
        self.allowed.iter().any(|allowed| {
            allowed == "*"
                || *allowed == name
                || allowed
                    .strip_prefix('.')
                    .is_some_and(|suffix| name == suffix || name.ends_with(&format!(".{suffix}")))
        })
    }
}

/// The name or address of a `Host` value, without its port (an IPv6 address without its
/// brackets).
fn host_name(host: &str) -> &str {
    let host = host.trim();
    if let Some(rest) = host.strip_prefix('[') {
        return rest.split(']').next().unwrap_or("");
    }
    match host.rsplit_once(':') {
        Some((name, port)) if port.bytes().all(|b| b.is_ascii_digit()) => name,
        _ => host,
    }
}

/// Answers a request whose `Host` is not allowed with 403, in the shape of what it asked
/// for (an API interface's error, or the admin API's); passes the others on.
pub async fn check_host(
    State(allowed): State<Arc<AllowedHosts>>,
    req: Request,
    next: Next,
) -> Response {
    let Some(host) = req.headers().get(header::HOST) else {
        // An HTTP/1.0 client may send none; a browser always does.
        return next.run(req).await;
    };
    let host = String::from_utf8_lossy(host.as_bytes()).into_owned();
    if allowed.allows(&host) {
        return next.run(req).await;
    }
    let name = host_name(&host).to_string();
    let message = format!(
        "Host {host:?} is not allowed: the emulator answers requests to an IP address, \
         localhost or this machine's name, so that no web page can reach it by rebinding its \
         own name. To serve it under {name:?}, start it with --allowed-host {name} \
         (Emulator(allowed_hosts=[{name:?}]) in Python)."
    );
    let path = req.uri().path();
    let iface = [Interface::Main, Interface::Events]
        .into_iter()
        .find(|iface| path.starts_with(iface.prefix()));
    if let Some(iface) = iface {
        ApiError::plain(iface, StatusCode::FORBIDDEN, message).into_response()
    } else {
        (StatusCode::FORBIDDEN, Json(json!({ "error": message }))).into_response()
    }
}

/// Why a request is refused as a browser's cross-site one, or None: an `Origin` that is not
/// the emulator's own (`http://` and its `Host`), or `Sec-Fetch-Site: cross-site`.
pub fn cross_site(headers: &HeaderMap) -> Option<String> {
    let text = |name: &str| {
        headers
            .get(name)
            .map(|v| String::from_utf8_lossy(v.as_bytes()).trim().to_string())
    };
    if text("sec-fetch-site").is_some_and(|s| s.eq_ignore_ascii_case("cross-site")) {
        return Some("the browser marked it cross-site (Sec-Fetch-Site: cross-site)".into());
    }
    let origin = text("origin")?;
    let own = text("host").map(|h| format!("http://{}", h.to_ascii_lowercase()));
    if own.as_deref() == Some(origin.to_ascii_lowercase().as_str()) {
        return None;
    }
    Some(format!(
        "it came from a page of another origin ({origin}), not the emulator's own"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_loopback_names_and_allowed_names_pass() {
        let hosts = AllowedHosts::new(&["emulator".into(), ".corp.example".into()]);
        for ok in [
            "127.0.0.1:8900",
            "[::1]:8900",
            "10.1.2.3",
            "localhost:8900",
            "app.localhost",
            "LOCALHOST.",
            "emulator:8900",
            "corp.example",
            "ci.corp.example:80",
        ] {
            assert!(hosts.allows(ok), "{ok} should pass");
        }
        for refused in [
            "attacker.example",
            "emulator.attacker.example",
            "corp.example.evil",
            "",
        ] {
            assert!(!hosts.allows(refused), "{refused} should be refused");
        }
        assert!(AllowedHosts::new(&["*".into()]).allows("anything.example"));
    }

    #[test]
    fn a_cross_site_request_is_told_from_the_emulators_own_and_a_non_browsers() {
        let headers = |pairs: &[(&'static str, &str)]| {
            let mut h = HeaderMap::new();
            for (k, v) in pairs {
                h.insert(*k, v.parse().unwrap());
            }
            h
        };
        assert!(cross_site(&headers(&[("host", "127.0.0.1:8900")])).is_none());
        let own = [
            ("host", "127.0.0.1:8900"),
            ("origin", "http://127.0.0.1:8900"),
        ];
        assert!(cross_site(&headers(&own)).is_none());
        let other = [
            ("host", "127.0.0.1:8900"),
            ("origin", "https://attacker.example"),
        ];
        assert!(cross_site(&headers(&other)).is_some());
        let other_port = [
            ("host", "localhost:8900"),
            ("origin", "http://localhost:3000"),
        ];
        assert!(cross_site(&headers(&other_port)).is_some());
        let fetch = [("host", "127.0.0.1:8900"), ("sec-fetch-site", "cross-site")];
        assert!(cross_site(&headers(&fetch)).is_some());
    }
}

/// The admin token (`--admin-token`): when set, every `/_emulator/` route asks for it. A
/// program sends it as `Authorization: Bearer <token>` or `X-Pushwire-Admin-Token`; a
/// browser signs in once (the login form, or `?token=` in the URL) and then carries it in a
/// cookie that scripts cannot read (`HttpOnly`) and other sites cannot send
/// (`SameSite=Strict`).
#[derive(Debug, Clone)]
pub struct AdminToken(pub String);

const COOKIE: &str = "pushwire_admin_token";

/// Why `token` cannot be an admin token, or None: it must be text a header and a cookie
/// carry as it is.
pub fn token_problem(token: &str) -> Option<&'static str> {
    let bad = token.is_empty()
        || token
            .chars()
            .any(|c| c.is_control() || c.is_whitespace() || matches!(c, ';' | ',' | '"'));
    bad.then_some(
        "the admin token must be text without spaces, control characters, ';', ',' or '\"'",
    )
}

impl AdminToken {
    /// Compared in constant time: how much of a guess matched is not told by the time taken.
    fn is(&self, given: &str) -> bool {
        let (a, b) = (self.0.as_bytes(), given.as_bytes());
        a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
    }

    fn given(headers: &HeaderMap, query: Option<&str>) -> Vec<String> {
        let mut out = Vec::new();
        let header = |name| {
            headers
                .get(name)
                .map(|v| String::from_utf8_lossy(v.as_bytes()).trim().to_string())
        };
        if let Some(auth) = header(header::AUTHORIZATION.as_str()) {
            if let Some(token) = auth.strip_prefix("Bearer ") {
                out.push(token.trim().to_string());
            }
        }
        out.extend(header("x-pushwire-admin-token"));
        for cookies in headers.get_all(header::COOKIE) {
            for pair in String::from_utf8_lossy(cookies.as_bytes()).split(';') {
                if let Some((name, value)) = pair.trim().split_once('=') {
                    if name == COOKIE {
                        out.push(value.to_string());
                    }
                }
            }
        }
        if let Some(query) = query {
            out.extend(
                form_urlencoded::parse(query.as_bytes())
                    .filter(|(k, _)| k == "token")
                    .map(|(_, v)| v.into_owned()),
            );
        }
        out
    }
}

fn session_cookie(token: &str) -> String {
    let value: String = form_urlencoded::byte_serialize(token.as_bytes()).collect();
    format!("{COOKIE}={value}; Path=/_emulator; HttpOnly; SameSite=Strict")
}

/// The sign-in page the inspector shows without the token.
fn login_page(status: StatusCode, note: &str) -> Response {
    let html = format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>pushwire \
         emulator: sign in</title></head><body><main><h1>pushwire emulator</h1><p>This \
         emulator was started with <code>--admin-token</code>: enter it to open the \
         inspector.</p><p role=\"alert\">{note}</p><form method=\"post\" \
         action=\"/_emulator/login\"><label>Admin token <input type=\"password\" \
         name=\"token\" autocomplete=\"current-password\" required autofocus></label> \
         <button type=\"submit\">Sign in</button></form></main></body></html>"
    );
    (
        status,
        [(header::CONTENT_TYPE, "text/html; charset=utf-8")],
        html,
    )
        .into_response()
}

/// Asks every `/_emulator/` request for the admin token, when one is set.
pub async fn check_token(
    State(token): State<Option<Arc<AdminToken>>>,
    req: Request,
    next: Next,
) -> Response {
    let Some(token) = token else {
        return next.run(req).await;
    };
    let path = req.uri().path().to_string();
    if !path.starts_with("/_emulator/") {
        return next.run(req).await;
    }
    let given = AdminToken::given(req.headers(), req.uri().query());
    let valid = given.iter().any(|g| token.is(g));
    if path == "/_emulator/login" {
        return login(&token, req).await;
    }
    if !valid {
        if path == "/_emulator/ui" {
            let note = if given.is_empty() {
                ""
            } else {
                "That token is not this emulator's."
            };
            return login_page(StatusCode::UNAUTHORIZED, note);
        }
        let message = "this emulator was started with --admin-token: send it as \
                       `Authorization: Bearer <token>` or `X-Pushwire-Admin-Token: <token>`";
        return (StatusCode::UNAUTHORIZED, Json(json!({ "error": message }))).into_response();
    }
    let from_query = req
        .uri()
        .query()
        .is_some_and(|q| form_urlencoded::parse(q.as_bytes()).any(|(k, _)| k == "token"));
    if from_query && req.method() == axum::http::Method::GET && path == "/_emulator/ui" {
        // The token in the URL once: kept in the cookie, and taken out of the address bar
        // (and the history) at once.
        return (
            StatusCode::SEE_OTHER,
            [
                (header::LOCATION, path.clone()),
                (header::SET_COOKIE, session_cookie(&token.0)),
            ],
        )
            .into_response();
    }
    next.run(req).await
}

/// `POST /_emulator/login` (the sign-in form): the cookie, and back to the inspector.
async fn login(token: &AdminToken, req: Request) -> Response {
    if req.method() != axum::http::Method::POST {
        return login_page(StatusCode::OK, "");
    }
    if cross_site(req.headers()).is_some() {
        return login_page(
            StatusCode::FORBIDDEN,
            "Sign in from the emulator's own page.",
        );
    }
    let body = axum::body::to_bytes(req.into_body(), 4096)
        .await
        .unwrap_or_default();
    let given: Vec<String> = form_urlencoded::parse(&body)
        .filter(|(k, _)| k == "token")
        .map(|(_, v)| v.into_owned())
        .collect();
    if !given.iter().any(|g| token.is(g)) {
        return login_page(
            StatusCode::UNAUTHORIZED,
            "That token is not this emulator's.",
        );
    }
    (
        StatusCode::SEE_OTHER,
        [
            (header::LOCATION, "/_emulator/ui".to_string()),
            (header::SET_COOKIE, session_cookie(&token.0)),
        ],
    )
        .into_response()
}
