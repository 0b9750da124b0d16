//! The roots of both interfaces as users give them, checked, and the URLs built on them.

use crate::message;
use crate::validate::FIELD;
use reqwest::Url;

use crate::client::error::{Error, Result};

/// Whether `url`'s host is this machine (`localhost`, 127.0.0.0/8, `::1`).
pub(super) fn is_loopback(url: &Url) -> bool {
    match url.host() {
        Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    }
}

/// Checks a root URL and strips what users paste along with it (`/apiv1`, a trailing `/`).
pub(super) fn root_url(
    name: &str,
    raw: &str,
    suffix: &str,
    allow_insecure: bool,
) -> Result<String> {
    let trimmed = raw.trim().trim_end_matches('/');
    let trimmed = trimmed.strip_suffix(suffix).unwrap_or(trimmed);
    let url = Url::parse(trimmed).map_err(|e| {
        Error::validation(
            name,
            message![FIELD, format!(" is not a valid URL ({e}): {raw:?}")],
        )
    })?;
    if url.query().is_some() || url.fragment().is_some() {
        return Err(Error::validation(
            name,
            message![
                FIELD,
                format!(" must not carry a query or a fragment: {raw:?}")
            ],
        ));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(Error::validation(
            name,
            message![
                FIELD,
                " must not carry credentials: pass the key as api_key="
            ],
        ));
    }
    if url.host().is_none() {
        return Err(Error::validation(
            name,
            message![FIELD, format!(" has no host: {raw:?}")],
        ));
    }
    let loopback = is_loopback(&url);
    match url.scheme() {
        "https" => {}
        "http" if loopback || allow_insecure => {}
        "http" => {
            return Err(Error::validation(
                name,
                message![
                    FIELD,
                    " uses plain http to a host that is not loopback; use https, or pass \
                 allow_insecure=True (or set PUSHWIRE_ALLOW_INSECURE=1) if you really mean it"
                ],
            ))
        }
        other => {
            return Err(Error::validation(
                name,
                message![FIELD, format!(" must be http(s), not {other}")],
            ))
        }
    }
    Ok(trimmed.to_string())
}

/// `root` with `path` after its own.
pub(super) fn url_of(root: &Url, path: &str) -> Url {
    let mut url = root.clone();
    let mut full = String::with_capacity(root.path().len() + path.len());
    full.push_str(root.path());
    full.push_str(path);
    url.set_path(&full);
    url
}

/// A proxy URL as an error may show it: what stands before its host's `@` blanked (a
/// password must not reach a log or a traceback).
pub(super) fn without_credentials(raw: &str) -> String {
    // A scheme's `://` only before any `@` (one later may be in the query or the password).
    let start = match raw.find("://") {
        Some(i) if !raw[..i].contains('@') => i + 3,
        _ => 0,
    };
    match raw[start..].rfind('@') {
        Some(at) => format!("{}[redacted]{}", &raw[..start], &raw[start + at..]),
        None => raw.to_string(),
    }
}

/// A checked root (`root_url`) with its interface's prefix, as a `Url`.
pub(super) fn parsed_root(root: &str) -> Result<Url> {
    Url::parse(root).map_err(|e| Error::Config(format!("{root:?} is not a valid URL: {e}")))
}
