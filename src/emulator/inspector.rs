//! The inspector: a page served at `/_emulator/ui` that shows what the emulator saw, live,
//! and the admin operations it reads that are of no use to a test (the sites, broadcasts
//! with their counts, campaigns with their analytics, the summary rows).
//!
//! The page is `ui/inspector.html`, its style sheet `ui/inspector.css` and its script ES
//! modules (`ui/inspector.js`, the entry, and the modules it imports), all embedded in the
//! binary and served from `/_emulator/ui/{file}`: no CDN and no network, as CI machines often
//! have none, and nothing inline, so that the page's Content-Security-Policy runs only the
//! emulator's own files. It reads and acts through the admin routes and listens to
//! `/_emulator/ui/stream`, a server-sent-events stream of change notices.

use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::{Path, State};
use axum::http::{header, StatusCode};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use chrono::{DateTime, Utc};
use serde_json::{json, Map, Value};

use super::emu::Emu;
use super::engine::analytics::{fill_drip, fill_trigger, Range};
use super::routes::analytics::summary_rows;
use super::state::{iso, Counts, Site, Source};
use crate::model::{Drip, NewNotification};

const HTML: &str = include_str!("ui/inspector.html");

/// Each file of `ui/` by its name, embedded: the name written once.
macro_rules! embedded {
    ($($name:literal),* $(,)?) => {
        &[$(($name, include_str!(concat!("ui/", $name)))),*]
    };
}

/// The files the page loads, by name, each served at `/_emulator/ui/{name}`. A test below
/// holds this list to the files the page and its modules name.
const FILES: &[(&str, &str)] = embedded![
    "inspector.css",
    "inspector.js",
    "analytics.js",
    "broadcasts.js",
    "campaigns.js",
    "dom.js",
    "faults.js",
    "header.js",
    "live.js",
    "logs.js",
    "page.js",
    "preview.js",
    "subscribers.js",
];

/// The page runs the emulator's own scripts and style sheet, and nothing inline: text a test
/// sent (a notification's title, an event's data) that ever became markup could not run.
/// The notifications' own images are the only thing it loads from elsewhere.
const CONTENT_SECURITY_POLICY: &str = "default-src 'self'; img-src * data:; style-src 'self'; \
     script-src 'self'; connect-src 'self'; base-uri 'none'; object-src 'none'";

/// A debug build started with `PUSHWIRE_UI_FILE` set to `ui/inspector.html` reads it, and
/// the files beside it, on each request, so that the page can be worked on without
/// rebuilding. `name` is one of the page's own (the route knows no other).
fn from_disk(name: &str) -> Option<String> {
    if !cfg!(debug_assertions) {
        return None;
    }
    let page = std::path::PathBuf::from(std::env::var_os("PUSHWIRE_UI_FILE")?);
    std::fs::read_to_string(page.with_file_name(name)).ok()
}

fn serve(content_type: &'static str, name: &str, embedded: &'static str) -> Response {
    let body = from_disk(name).map_or(std::borrow::Cow::Borrowed(embedded), Into::into);
    (
        [
            (header::CONTENT_TYPE, content_type),
            // A page never mixes files of two emulator versions.
            (header::CACHE_CONTROL, "no-store"),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
            (header::CONTENT_SECURITY_POLICY, CONTENT_SECURITY_POLICY),
        ],
        // The embedded text as it is, with no copy per request.
        body,
    )
        .into_response()
}

/// `GET /_emulator/ui`.
pub async fn page() -> Response {
    serve("text/html; charset=utf-8", "inspector.html", HTML)
}

/// `GET /_emulator/ui/{file}`: the page's style sheet and script modules.
pub async fn file(Path(name): Path<String>) -> Response {
    let Some(&(name, body)) = FILES.iter().find(|(known, _)| *known == name) else {
        let error = format!("the inspector has no file {name:?}");
        return (StatusCode::NOT_FOUND, axum::Json(json!({ "error": error }))).into_response();
    };
    let content_type = if name.ends_with(".css") {
        "text/css; charset=utf-8"
    } else {
        "text/javascript; charset=utf-8"
    };
    serve(content_type, name, body)
}

/// How often a stream tells of changes at most: a test sending thousands of requests a
/// second makes the page re-read four times a second, not thousands.
const COALESCE: Duration = Duration::from_millis(250);

/// `GET /_emulator/ui/stream`: `event: change` with `{"version": n}` at once, then after
/// every change (at most one per [`COALESCE`]); a comment every 15 s keeps proxies from
/// closing it.
pub async fn stream(State(emu): State<Arc<Emu>>) -> impl IntoResponse {
    let changes = emu.changes.clone();
    let watcher = changes.watch();
    let first = changes.version();
    let events = futures_util::stream::unfold(
        (changes, watcher, None::<u64>),
        move |(changes, watcher, sent)| async move {
            if sent.is_some() {
                loop {
                    let notified = changes.notified();
                    tokio::pin!(notified);
                    notified.as_mut().enable();
                    if Some(changes.version()) != sent {
                        break;
                    }
                    notified.await;
                }
                tokio::time::sleep(COALESCE).await;
            }
            let version = if sent.is_none() {
                first
            } else {
                changes.version()
            };
            let event = Event::default()
                .event("change")
                .data(json!({ "version": version }).to_string());
            Some((
                Ok::<_, Infallible>(event),
                (changes, watcher, Some(version)),
            ))
        },
    );
    Sse::new(events).keep_alive(KeepAlive::new().interval(Duration::from_secs(15)))
}

/// `sites`: each site's id, the end of its key (never the key), its counts of subscribers,
/// broadcasts and campaigns (what the inspector's tabs show beside their names).
pub fn sites(emu: &Emu) -> Value {
    let st = emu.lock();
    let default = st.site_id_for_key(&emu.default_key);
    let list: Vec<Value> = st
        .sites
        .values()
        .map(|s| {
            json!({
                "site_id": s.site_id,
                "key_hint": key_hint(&s.api_key, s.site_id),
                "subscribers": s.subscribers.len(),
                "broadcasts": s.notifications.len(),
                "campaigns": s.triggers.len() + s.drips.len(),
                "timezone": s.timezone.to_string(),
                "default": Some(s.site_id) == default,
            })
        })
        .collect();
    Value::Array(list)
}

/// The last four characters of a long key (as dashboards show card numbers), else the
/// site's number: enough to tell sites apart, never enough to use one.
fn key_hint(key: &str, site_id: i64) -> String {
    let chars: Vec<char> = key.chars().collect();
    if chars.len() >= 16 {
        format!("…{}", chars[chars.len() - 4..].iter().collect::<String>())
    } else {
        format!("site {site_id}")
    }
}

/// `broadcasts`: newest first, each with its content, audience, status and counts.
pub fn broadcasts(site: &Site, now: DateTime<Utc>, offset: usize, limit: usize) -> Value {
    // Each send's counts as its deliveries were made and changed: read, not walked.
    let counts = |id: i64| -> (Counts, Option<DateTime<Utc>>) {
        let sends = site
            .engine
            .broadcast_sends
            .get(&id)
            .map_or(&[][..], Vec::as_slice);
        let mut c = Counts::default();
        sends.iter().for_each(|d| c.add(d.tally.get()));
        (c, sends.first().map(|d| d.queued_at))
    };
    let due: HashMap<i64, DateTime<Utc>> = site
        .engine
        .scheduled
        .iter()
        .filter(|s| s.source == Source::Broadcast)
        .map(|s| (s.source_id, s.due_at))
        .collect();
    let list: Vec<Value> = site
        .notifications
        .iter()
        .rev()
        .skip(offset)
        .take(limit)
        .map(|rec| {
            let n = &rec.request;
            let (c, sent_at) = counts(rec.notification_id);
            let expiry_minutes = n
                .notification_expiry
                .unwrap_or(crate::validate::BROADCAST_EXPIRY_MAX_MINUTES);
            let sent_at = sent_at.or((rec.status == "sent").then_some(rec.created_at));
            let expired = rec.status == "sent"
                && sent_at.is_some_and(|at| now >= at + chrono::Duration::minutes(expiry_minutes));
            json!({
                "notification_id": rec.notification_id,
                "status": if expired { "expired" } else { rec.status.as_str() },
                "created_at": iso(rec.created_at),
                "due_at": due.get(&rec.notification_id).or(sent_at.as_ref()).map(|t| iso(*t)),
                "title": n.notification_title,
                "message": n.notification_message,
                "url": n.notification_url,
                "image_url": n.image_url,
                "big_image_url": n.big_image_url,
                "actions": n.actions,
                "expiry_minutes": expiry_minutes,
                "audience": audience(n),
                "deliveries": c.deliveries,
                "delivered": c.delivered,
                "pending": c.pending,
                "expired": c.expired,
                "views": c.views,
                "clicks": c.clicks,
            })
        })
        .collect();
    Value::Array(list)
}

/// The filters a broadcast was given, under the spec's names (those not given, or given
/// empty, omitted).
fn audience(n: &NewNotification) -> Value {
    let mut out = Map::new();
    // The filters first, then the subscribers named one by one.
    let [profile_id, filters @ .., subscriber_hash] = n.lists();
    for (name, list) in filters.into_iter().chain([profile_id, subscriber_hash]) {
        if let Some(list) = list.filter(|l| !l.is_empty()) {
            out.insert(name.into(), json!(list));
        }
    }
    for (name, v) in [("from_date", &n.from_date), ("to_date", &n.to_date)] {
        if let Some(v) = v {
            out.insert(name.into(), json!(v));
        }
    }
    if let Some(groups) = &n.attributes {
        out.insert("attributes".into(), json!(groups));
    }
    Value::Object(out)
}

/// `triggers`: the campaigns in the service's read shape, analytics of all time filled.
pub fn triggers(site: &Site) -> Value {
    let list: Vec<_> = site
        .triggers
        .iter()
        .map(|t| {
            let mut t = t.clone();
            fill_trigger(site, &mut t, Range::default());
            t
        })
        .collect();
    json!(list)
}

/// `drips`: the drips in the service's read shape, analytics of all time filled.
pub fn drips(site: &Site) -> Value {
    let list: Vec<Drip> = site
        .drips
        .iter()
        .map(|r| {
            let mut d = r.drip.clone();
            fill_drip(site, &mut d, Range::default());
            d
        })
        .collect();
    json!(list)
}

/// `summary`: the rows `analytics.summary` answers, read by the API's own check of 4.10;
/// `from`/`to` default to the 30 days up to the emulator's today, `group_by` to days.
pub fn summary(
    site: &Site,
    now: DateTime<Utc>,
    args: &Map<String, Value>,
) -> Result<Value, String> {
    let arg = |key: &str| match args.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(format!("{key} must be text")),
    };
    let to = arg("to")?.unwrap_or_else(|| now.date_naive().to_string());
    let from = match arg("from")? {
        Some(from) => from,
        None => crate::validate::summary_query(Some(&to), Some(&to), Some("day"))
            .map(|(_, to, _)| (to - chrono::Days::new(29)).to_string())
            .map_err(|v| v.message())?,
    };
    let group_by = arg("group_by")?.unwrap_or_else(|| "day".into());
    let (from, to, group_by) =
        crate::validate::summary_query(Some(&from), Some(&to), Some(&group_by))
            .map_err(|v| v.message())?;
    Ok(json!(summary_rows(site, from, to, group_by)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The names a text gives after `marker` and up to the next quote.
    fn named_after<'a>(text: &'a str, marker: &str) -> Vec<&'a str> {
        text.split(marker)
            .skip(1)
            .filter_map(|rest| rest.split('"').next())
            .collect()
    }

    #[test]
    fn the_files_served_are_those_the_page_and_its_modules_name() {
        let mut named = named_after(HTML, "=\"ui/");
        let mut read = 0;
        while read < named.len() {
            let (_, text) = FILES
                .iter()
                .find(|(name, _)| *name == named[read])
                .unwrap_or_else(|| panic!("{} is named but not served", named[read]));
            for import in named_after(text, "from \"./") {
                if !named.contains(&import) {
                    named.push(import);
                }
            }
            read += 1;
        }
        let mut served: Vec<&str> = FILES.iter().map(|(name, _)| *name).collect();
        served.sort_unstable();
        named.sort_unstable();
        assert_eq!(served, named, "every file served is one the page loads");
        assert!(named.contains(&"inspector.css") && named.contains(&"dom.js"));
    }

    #[test]
    fn nothing_in_the_page_is_inline() {
        // What the policy would refuse: inline script, style elements, style attributes and
        // event-handler attributes.
        let lower = HTML.to_ascii_lowercase();
        assert_eq!(lower.matches("<script").count(), 1);
        assert!(lower.contains("<script type=\"module\" src=\"ui/inspector.js\"></script>"));
        assert!(!lower.contains("<style"));
        assert!(!lower.contains(" style="));
        assert!(!lower.contains(" onclick=") && !lower.contains(" onload="));
        assert!(!CONTENT_SECURITY_POLICY.contains("unsafe"));
    }
}
