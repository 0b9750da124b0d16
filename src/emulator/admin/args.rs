//! Reading an admin operation's arguments (a JSON object, or a query string made into one):
//! each reader names the argument in its refusal.

use chrono::{DateTime, Utc};
use serde_json::{json, Map, Value};

/// An operation's arguments.
pub type Args = Map<String, Value>;

/// An optional text argument (a number is taken as its text).
pub fn str_arg(args: &Map<String, Value>, key: &str) -> Result<Option<String>, String> {
    match args.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(Value::Number(n)) => Ok(Some(n.to_string())),
        Some(_) => Err(format!("{key} must be a string")),
    }
}

/// An optional instant: RFC 3339, a date (its midnight, UTC) or a date-time without a zone
/// (UTC).
pub fn time_arg(args: &Map<String, Value>, key: &str) -> Result<Option<DateTime<Utc>>, String> {
    let Some(s) = str_arg(args, key)? else {
        return Ok(None);
    };
    let parsed = DateTime::parse_from_rfc3339(&s)
        .map(|t| t.with_timezone(&Utc))
        .ok()
        .or_else(|| {
            chrono::NaiveDate::parse_from_str(&s, "%Y-%m-%d")
                .ok()
                .and_then(|d| d.and_hms_opt(0, 0, 0))
                .map(|t| t.and_utc())
        })
        .or_else(|| {
            chrono::NaiveDateTime::parse_from_str(&s, "%Y-%m-%dT%H:%M:%S%.f")
                .ok()
                .map(|t| t.and_utc())
        });
    let Some(t) = parsed else {
        return Err(format!("{key} must be an ISO 8601 date or date-time"));
    };
    // Kept only as times every reader takes back: Python's datetime (a year from 1 to
    // 9999, no leap second) and the admin API's own text.
    use chrono::{Datelike, Timelike};
    if !(1..=9999).contains(&t.year()) || t.nanosecond() >= 1_000_000_000 {
        return Err(format!(
            "{key} must be a time from year 1 to 9999, without a leap second (:60)"
        ));
    }
    Ok(Some(t))
}

/// An optional whole-number argument.
pub fn int_arg(args: &Map<String, Value>, key: &str) -> Result<Option<i64>, String> {
    match args.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => v
            .as_i64()
            .or_else(|| v.as_str().and_then(|s| s.trim().parse().ok()))
            .map(Some)
            .ok_or_else(|| format!("{key} must be a whole number")),
    }
}

/// An optional boolean argument (false when not given).
pub fn flag(args: &Map<String, Value>, key: &str) -> Result<bool, String> {
    match args.get(key) {
        None | Some(Value::Null) => Ok(false),
        Some(Value::Bool(b)) => Ok(*b),
        Some(_) => Err(format!("{key} must be true or false")),
    }
}

/// `since` (inclusive) and `until` (exclusive), ISO 8601, of a listing.
pub struct Window {
    since: Option<DateTime<Utc>>,
    until: Option<DateTime<Utc>>,
}

impl Window {
    pub fn of(args: &Map<String, Value>) -> Result<Window, String> {
        Ok(Window {
            since: time_arg(args, "since")?,
            until: time_arg(args, "until")?,
        })
    }

    /// Whether it holds every time.
    pub fn is_open(&self) -> bool {
        self.since.is_none() && self.until.is_none()
    }

    pub fn holds(&self, at: DateTime<Utc>) -> bool {
        self.since.is_none_or(|s| at >= s) && self.until.is_none_or(|u| at < u)
    }
}

/// `offset` and `limit` of a listing, applied in Rust: a test over a million deliveries
/// takes the page it reads, never every entry copied into Python.
pub struct Page {
    pub offset: usize,
    pub limit: Option<usize>,
}

impl Page {
    pub fn of_args(args: &Map<String, Value>) -> Result<Page, String> {
        let count = |key: &str| -> Result<Option<usize>, String> {
            match int_arg(args, key)? {
                Some(n) if n < 0 => Err(format!("{key} must not be negative")),
                n => Ok(n.map(|n| n as usize)),
            }
        };
        Ok(Page {
            offset: count("offset")?.unwrap_or(0),
            limit: count("limit")?,
        })
    }

    /// The page of `all`: the entries alone, or with `meta` `{entries, total}`.
    /// The page of `all`, read where it lies.
    pub fn of_slice<T: serde::Serialize>(&self, all: &[T], meta: bool) -> Value {
        Self::answer(self.slice(all).iter().collect(), all.len(), meta)
    }

    /// The page of `all`, as a slice of it.
    pub fn slice<'a, T>(&self, all: &'a [T]) -> &'a [T] {
        let from = self.offset.min(all.len());
        let to = self
            .limit
            .map_or(all.len(), |l| from.saturating_add(l).min(all.len()));
        &all[from..to]
    }

    pub fn of<T: serde::Serialize>(&self, all: Vec<T>, meta: bool) -> Value {
        self.of_shown(all, meta, |t| t)
    }

    /// The page of `all`, each entry of it shown as `show` makes it (only the page's).
    pub fn of_shown<T, U: serde::Serialize>(
        &self,
        all: Vec<T>,
        meta: bool,
        show: impl FnMut(T) -> U,
    ) -> Value {
        let total = all.len();
        let page: Vec<U> = all
            .into_iter()
            .skip(self.offset)
            .take(self.limit.unwrap_or(usize::MAX))
            .map(show)
            .collect();
        Self::answer(page, total, meta)
    }

    /// A page as the listing answers it: with its total (`meta`), or alone.
    fn answer<U: serde::Serialize>(page: Vec<U>, total: usize, meta: bool) -> Value {
        if meta {
            json!({"entries": page, "total": total})
        } else {
            json!(page)
        }
    }
}

/// An admin operation's arguments as `T`; a refusal names the argument in plain words
/// (serde's own reads `invalid type: string "500", expected u16`).
pub fn read_args<T: serde::de::DeserializeOwned>(args: Map<String, Value>) -> Result<T, String> {
    serde_path_to_error::deserialize(Value::Object(args)).map_err(|e| {
        let field = e.path().to_string();
        let inner = e.inner().to_string();
        if let Some(name) = inner
            .strip_prefix("missing field `")
            .and_then(|r| r.split('`').next())
        {
            return match field.as_str() {
                "." => format!("{name} is required"),
                at => format!("{at}.{name} is required"),
            };
        }
        let plain = inner
            .strip_prefix("invalid type: ")
            .and_then(|r| r.split_once(", expected "))
            .map(|(got, want)| {
                let want = match want {
                    "u8" | "u16" | "u32" | "u64" | "usize" | "i32" | "i64" | "an integer" => {
                        "an integer"
                    }
                    "f32" | "f64" => "a number",
                    "a sequence" => "a list",
                    w if w == "a map" || w.starts_with("struct ") => "a dict",
                    w => w,
                };
                format!("must be {want}, not {got}")
            });
        match (field.as_str(), plain) {
            (".", Some(p)) => format!("the arguments {p}"),
            (".", None) => inner,
            (at, Some(p)) => format!("{at} {p}"),
            (at, None) => format!("{at}: {inner}"),
        }
    })
}
