//! Shapes shared by several resources: analytics (2.3), UTM params (2.5), actions (2.6),
//! schedule options (2.2, 2.8) and the pagination `meta` of list endpoints.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::lenient;
use super::macros::model;

model! {
    /// Spec 2.3. `ctr` is `clicks / views * 100`, 0 when nothing was viewed.
    pub struct Analytics {
        #[lenient] pub views: i64,
        #[lenient] pub clicks: i64,
        #[lenient] pub sentcount: i64,
        #[lenient] pub unsubscribed: i64,
        #[lenient] pub ctr: f64,
        #[serde(
            default,
            deserialize_with = "lenient::or_default",
            skip_serializing_if = "Vec::is_empty"
        )]
        pub result: Vec<GoalResult>,
    }
}

impl Analytics {
    /// Analytics from raw counts, with the spec's click-through rate.
    pub fn from_counts(sent: i64, views: i64, clicks: i64, unsubscribed: i64) -> Self {
        Analytics {
            views,
            clicks,
            sentcount: sent,
            unsubscribed,
            ctr: ctr(clicks, views),
            result: Vec::new(),
        }
    }
}

/// `click_count / view_count * 100`, rounded to two decimals; 0 when nothing was viewed.
pub fn ctr(clicks: i64, views: i64) -> f64 {
    if views == 0 {
        0.0
    } else {
        ((clicks as f64 / views as f64) * 10000.0).round() / 100.0
    }
}

model! {
    /// A goal entry of `analytics.result`.
    pub struct GoalResult {
        #[lenient] pub name: String,
        #[lenient] pub count: i64,
        #[lenient] pub value: f64,
    }
}

/// A campaign's `utm_params` as a response carries it, in either shape of 2.5 (`utm_*`
/// keys, or the drip sample's `{enabled, source, medium, campaign, term, content}`);
/// `enabled: false`, `null` or anything but an object is none. Lenient as every read: a
/// missing value is empty, never a failed read.
pub fn read_utm<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<UtmParams>, D::Error> {
    let Some(Value::Object(obj)) = Option::<Value>::deserialize(d)? else {
        return Ok(None);
    };
    let off = match obj.get("enabled") {
        Some(Value::Bool(on)) => !on,
        Some(Value::Number(n)) => n.as_f64() == Some(0.0),
        Some(Value::String(s)) => matches!(s.trim(), "false" | "0"),
        _ => false,
    };
    if off {
        return Ok(None);
    }
    let pick = |long: &str, short: &str| -> Option<String> {
        let given = |key: &str| obj.get(key).filter(|v| !v.is_null());
        match given(long).or_else(|| given(short))? {
            Value::String(s) => Some(s.clone()),
            Value::Null => None,
            other => Some(other.to_string()),
        }
    };
    Ok(Some(UtmParams {
        utm_source: pick("utm_source", "source").unwrap_or_default(),
        utm_medium: pick("utm_medium", "medium").unwrap_or_default(),
        utm_campaign: pick("utm_campaign", "campaign").unwrap_or_default(),
        utm_term: pick("utm_term", "term"),
        utm_content: pick("utm_content", "content"),
    }))
}

/// A campaign's `utm_params` marked `#[lenient]` reads with [`read_utm`].
impl lenient::Lenient for Option<UtmParams> {
    fn read<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        read_utm(d)
    }

    fn absent(&self) -> bool {
        self.is_none()
    }
}

model! {
    /// Spec 2.5: UTM parameters, in the shape sent (`utm_*` keys). Campaign reads and
    /// `from_dict` also take the service's other shape, `{enabled, source, medium, campaign,
    /// term, content}` (see `read_utm`).
    pub struct UtmParams {
        #[lenient] pub utm_source: String,
        #[lenient] pub utm_medium: String,
        #[lenient] pub utm_campaign: String,
        #[lenient] pub utm_term: Option<String>,
        #[lenient] pub utm_content: Option<String>,
    }
}

/// Why a value is no `utm_params`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UtmError {
    NotAnObject,
    /// The first required key missing (`utm_source`), as the first shape names it.
    Missing(&'static str),
}

impl UtmParams {
    /// Reads either shape the interface uses (2.5): `utm_source`... or the drip sample's
    /// `{enabled, source, medium, campaign, term, content}`. `enabled: false` means none.
    pub fn from_either(v: &Value) -> Result<Option<UtmParams>, UtmError> {
        let obj = v.as_object().ok_or(UtmError::NotAnObject)?;
        if obj.get("enabled") == Some(&Value::Bool(false)) {
            return Ok(None);
        }
        let pick = |long: &str, short: &str| -> Option<String> {
            obj.get(long)
                .or_else(|| obj.get(short))
                .and_then(|x| match x {
                    Value::String(s) => Some(s.clone()),
                    Value::Null => None,
                    other => Some(other.to_string()),
                })
        };
        let mut missing = Vec::new();
        let mut req = |long: &'static str, short: &str| {
            pick(long, short).unwrap_or_else(|| {
                missing.push(long);
                String::new()
            })
        };
        let utm = UtmParams {
            utm_source: req("utm_source", "source"),
            utm_medium: req("utm_medium", "medium"),
            utm_campaign: req("utm_campaign", "campaign"),
            utm_term: pick("utm_term", "term"),
            utm_content: pick("utm_content", "content"),
        };
        if let Some(first) = missing.first() {
            return Err(UtmError::Missing(first));
        }
        Ok(Some(utm))
    }
}

model! {
    /// Spec 2.6: a notification button.
    pub struct Action {
        #[lenient] pub label: String,
        #[lenient] pub url: String,
        #[lenient] pub image_url: Option<String>,
    }
}

model! {
    /// Spec 2.2 / 2.8 `schedule_options`.
    pub struct ScheduleOptions {
        #[lenient] pub r#type: String,
        #[lenient] pub value: Option<i64>,
        #[lenient] pub unit: Option<String>,
        #[lenient] pub at: Option<String>,
    }
}

model! {
    /// The `meta` of list endpoints (4.2, 4.4).
    pub struct Meta {
        #[lenient] pub total: i64,
        #[lenient] pub page: i64,
        #[lenient]
        #[serde(rename = "perPage", alias = "per_page")]
        pub per_page: i64,
        #[lenient]
        #[serde(rename = "lastPage", alias = "last_page")]
        pub last_page: i64,
    }
}

impl Meta {
    /// Pagination arithmetic: `lastPage` is at least 1, even for an empty list.
    pub fn new(total: usize, page: i64, per_page: u32) -> Meta {
        let last = total.div_ceil(per_page as usize).max(1);
        Meta {
            total: total as i64,
            page,
            per_page: per_page as i64,
            last_page: last as i64,
        }
    }
}

/// Unknown fields the service sends beyond the spec, kept rather than dropped.
#[cfg_attr(feature = "emulator", derive(schemars::JsonSchema))]
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(transparent)]
pub struct Extra(pub Map<String, Value>);

/// Any JSON value (an audience rule's values, an attribute rule's value).
#[cfg_attr(feature = "emulator", derive(schemars::JsonSchema))]
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(transparent)]
pub struct Json(pub Value);

#[cfg(feature = "python")]
super::annotation::annotated!(Extra => "dict[str, Any]", Json => "Any");
