//! Summary analytics (4.10) and the subscriber distribution (4.11).

use serde_json::{Map, Value};

use super::error::Result;
use super::transport::{Body, Call, Transport};
use crate::envelope;
use crate::model::{SummaryQuery, SummaryRead, SummaryRow};
use crate::operations::{AnalyticsSubscribers, AnalyticsSummary, Declared, Request, Response};
use crate::validate;

envelope!(Summary { data: Vec<Map<String, Value>>; });

envelope!(Distribution { data: Dimensions; });

/// 4.11's `data`, `{dimension: {value: count}}`. An empty one may come as `[]`, as PHP
/// encodes an empty map; it reads as no dimension.
#[derive(Debug)]
pub struct Dimensions(Map<String, Value>);

impl<'de> serde::Deserialize<'de> for Dimensions {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        match Value::deserialize(d)? {
            Value::Object(m) => Ok(Dimensions(m)),
            Value::Array(a) if a.is_empty() => Ok(Dimensions(Map::new())),
            other => Err(serde::de::Error::invalid_type(
                serde::de::Unexpected::Other(json_kind(&other)),
                &"an object of dimensions",
            )),
        }
    }
}

fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

/// The summary's rows, each with the columns the service adds beyond the spec's.
pub async fn summary(
    t: &Transport,
    query: &Request<AnalyticsSummary>,
) -> Result<Response<AnalyticsSummary>> {
    let SummaryQuery { from, to, group_by } = query;
    validate::summary_query(Some(from), Some(to), Some(group_by))?;
    let call = Call::to(AnalyticsSummary::OPERATION, Body::Empty)
        .query("from", Some(from))
        .query("to", Some(to))
        .query("group_by", Some(group_by));
    let s: Summary = t.send(&call).await?;
    s.data
        .into_iter()
        .enumerate()
        .map(|(i, fields)| {
            let fields = Value::Object(fields);
            let row = <SummaryRow as serde::Deserialize>::deserialize(&fields).map_err(|e| {
                super::Error::Api(Box::new(super::error::ApiFailure::unreadable(
                    200,
                    format!(
                        "the main interface answered with an unexpected shape (at \
                             `data[{i}]`): {e}"
                    ),
                    fields.clone(),
                )))
            })?;
            let known = serde_json::to_value(&row).unwrap_or_default();
            let extra = match fields {
                Value::Object(fields) => fields
                    .into_iter()
                    .filter(|(k, _)| known.get(k).is_none())
                    .collect(),
                _ => Map::new(),
            };
            Ok(SummaryRead { row, extra })
        })
        .collect()
}

/// Counts of active subscribers by dimension: `{dimension: {value: count}}`.
pub async fn subscribers(
    t: &Transport,
    query: &Request<AnalyticsSubscribers>,
) -> Result<Response<AnalyticsSubscribers>> {
    let joined = query.types.as_ref().map(|ts| ts.join(","));
    validate::subscriber_dimensions(joined.as_deref())?;
    let call = Call::to(AnalyticsSubscribers::OPERATION, Body::Empty).query("type", joined);
    let mut d: Distribution = t.send(&call).await?;
    // A dimension with no value may come as `[]` too.
    for counts in d.data.0.values_mut() {
        if counts.as_array().is_some_and(Vec::is_empty) {
            *counts = Value::Object(Map::new());
        }
    }
    // Counts as integers, as the other reads are lenient with numbers sent as text.
    for counts in d.data.0.values_mut().filter_map(Value::as_object_mut) {
        for count in counts.values_mut() {
            let number = match &*count {
                Value::String(s) => s.trim().parse::<f64>().ok(),
                Value::Number(n) if n.is_f64() => n.as_f64(),
                _ => None,
            };
            let whole = number
                .filter(|f| f.fract() == 0.0 && f.abs() < 9.0e15)
                .map(|f| f as i64);
            if let Some(whole) = whole {
                *count = Value::from(whole);
            }
        }
    }
    Ok(d.data.0)
}
