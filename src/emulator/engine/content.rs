//! What a campaign notification shows: `{{tags}}` filled from an event's data, the
//! campaign's UTM parameters added to its URLs.

use serde_json::{Map, Value};

use crate::emulator::state::Content;
use crate::model::UtmParams;

/// Fills `{{name}}` tags from `data`; a tag with no value becomes empty.
pub fn personalize(text: &str, data: &Map<String, Value>) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find("{{") {
        let Some(close) = rest[open + 2..].find("}}") else {
            break;
        };
        out.push_str(&rest[..open]);
        let key = rest[open + 2..open + 2 + close].trim();
        match data.get(key) {
            Some(Value::String(s)) => out.push_str(s),
            Some(Value::Null) | None => {}
            Some(other) => out.push_str(&other.to_string()),
        }
        rest = &rest[open + 2 + close + 2..];
    }
    out.push_str(rest);
    out
}

/// `url` with the campaign's UTM parameters (2.5: "added to the URLs of the campaign
/// notifications"), replacing any of the same name it already has. The rest of the URL is
/// kept byte for byte (its other parameters, their encoding, its fragment): only the query's
/// text gains the pairs, form-encoded.
pub fn with_utm(url: &str, utm: Option<&UtmParams>) -> String {
    let Some(utm) = utm else {
        return url.to_string();
    };
    let pairs = [
        ("utm_source", Some(&utm.utm_source)),
        ("utm_medium", Some(&utm.utm_medium)),
        ("utm_campaign", Some(&utm.utm_campaign)),
        ("utm_term", utm.utm_term.as_ref()),
        ("utm_content", utm.utm_content.as_ref()),
    ];
    let set: Vec<(&str, &String)> = pairs
        .into_iter()
        .filter_map(|(k, v)| v.filter(|v| !v.is_empty()).map(|v| (k, v)))
        .collect();
    let url = url.trim();
    if set.is_empty() || url.is_empty() {
        return url.to_string();
    }
    let (base, fragment) = match url.split_once('#') {
        Some((b, f)) => (b, Some(f)),
        None => (url, None),
    };
    let (path, query) = base.split_once('?').unwrap_or((base, ""));
    let mut parts: Vec<String> = query
        .split('&')
        .filter(|seg| !seg.is_empty())
        .filter(|seg| {
            // The key as a query parser reads it (`utm%5Fsource` is `utm_source`).
            let key = form_urlencoded::parse(seg.as_bytes())
                .next()
                .map(|(k, _)| k.into_owned())
                .unwrap_or_default();
            !set.iter().any(|(k, _)| key == *k)
        })
        .map(str::to_string)
        .collect();
    for (k, v) in set {
        let v: String = form_urlencoded::byte_serialize(v.as_bytes()).collect();
        parts.push(format!("{k}={v}"));
    }
    let mut out = format!("{path}?{}", parts.join("&"));
    if let Some(f) = fragment {
        out.push('#');
        out.push_str(f);
    }
    out
}

/// A campaign notification's content with its UTM parameters in its URLs.
pub(super) fn tagged(mut c: Content, utm: Option<&UtmParams>) -> Content {
    c.url = with_utm(&c.url, utm);
    for a in &mut c.actions {
        a.url = with_utm(&a.url, utm);
    }
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_are_filled_from_data() {
        let mut data = Map::new();
        data.insert("name".into(), Value::from("Ada"));
        data.insert("n".into(), Value::from(3));
        assert_eq!(
            personalize("Hi {{name}}, {{ n }} items {{missing}}!", &data),
            "Hi Ada, 3 items !"
        );
        assert_eq!(personalize("no tags {{", &data), "no tags {{");
    }
}
