//! Site keys: how a request carries one, which keys can be a site's, and every spelling of
//! a key that the request log must redact.

use axum::http::{HeaderMap, HeaderValue};

/// The key header as sent, in the spellings real clients use: `Api-Key`/`api-key` and
/// `api_key`/`Api_key` (header names compare case-insensitively).
pub fn key_header(headers: &HeaderMap) -> Option<&HeaderValue> {
    headers.get("api-key").or_else(|| headers.get("api_key"))
}

/// The key, trimmed, when the header is text; `None` when it is absent or is not text.
pub fn api_key(headers: &HeaderMap) -> Option<&str> {
    key_header(headers)
        .and_then(|v| v.to_str().ok())
        .map(str::trim)
}

pub const REDACTED: &str = "[redacted]";

/// What is wrong with a site key, if anything: a key no request could authenticate with.
/// The gate trims the key a request sends, so a padded one never matches; a header carries
/// only visible ASCII and spaces, so a key with other characters cannot be sent at all.
pub fn key_problem(key: &str) -> Option<&'static str> {
    if key.is_empty() {
        Some("api_key must not be empty")
    } else if key.trim() != key {
        Some("api_key must not start or end with spaces")
    } else if !key.bytes().all(|b| (0x20..0x7f).contains(&b)) {
        Some("api_key must be printable ASCII (a header cannot carry other characters)")
    } else {
        None
    }
}

/// Every spelling of each key (of at least 8 characters: a shorter one, such as a test's
/// `k1` or `sale`, is no secret and would blank out the words of titles and events that
/// contain it; key headers are redacted whatever their length) that a path, query, header
/// or body can carry: as is, JSON-escaped, and
/// percent-encoded (`%20` or `+` for a space, upper- or lowercase hex). Longest first, so a
/// spelling is replaced before any shorter one inside it.
pub fn key_spellings<'a>(keys: impl Iterator<Item = &'a str>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for key in keys.filter(|k| k.chars().count() >= 8) {
        let json = serde_json::to_string(key).unwrap_or_default();
        let json = json.trim_matches('"').to_string();
        let mut upper = String::new();
        let mut lower = String::new();
        for b in key.bytes() {
            if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
                upper.push(b as char);
                lower.push(b as char);
            } else {
                upper.push_str(&format!("%{b:02X}"));
                lower.push_str(&format!("%{b:02x}"));
            }
        }
        let plus = form_urlencoded::byte_serialize(key.as_bytes()).collect::<String>();
        for s in [
            key.to_string(),
            json,
            upper.replace("%20", "+"),
            lower.replace("%20", "+"),
            upper,
            lower,
            plus,
        ] {
            if !out.contains(&s) {
                out.push(s);
            }
        }
    }
    out.sort_by_key(|s| std::cmp::Reverse(s.len()));
    out
}
