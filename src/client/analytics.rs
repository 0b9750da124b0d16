//! Summary analytics (4.10) and the subscriber distribution (4.11).

use serde_json::{Map, Value};

use super::transport::{Call, Transport};
use super::Result;
use crate::envelope;
use crate::model::SummaryRow;
use crate::validate;

envelope!(Summary { data: Vec<Map<String, Value>>; });

/// One row of 4.10 as read: the spec's columns, and any the service adds beyond them (kept,
/// so that a notebook's DataFrame shows a new column rather than dropping it).
#[derive(Debug, Clone)]
pub struct Row {
    pub row: SummaryRow,
    pub extra: Map<String, Value>,
}
envelope!(Distribution { data: Map<String, Value>; });

pub async fn summary(t: &Transport, from: &str, to: &str, group_by: &str) -> Result<Vec<Row>> {
    validate::summary_query(Some(from), Some(to), Some(group_by))?;
    let call = Call::get("/analytics/summary")
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
                super::Error::Api(Box::new(super::error::ApiFailure {
                    status: 200,
                    message: format!(
                        "the main interface answered with an unexpected shape (at \
                             `data[{i}]`): {e}"
                    ),
                    body: fields.clone(),
                    code: None,
                    details: Vec::new(),
                    retry_after: None,
                    outcome_unknown: false,
                }))
            })?;
            let known = serde_json::to_value(&row).unwrap_or_default();
            let extra = match fields {
                Value::Object(fields) => fields
                    .into_iter()
                    .filter(|(k, _)| known.get(k).is_none())
                    .collect(),
                _ => Map::new(),
            };
            Ok(Row { row, extra })
        })
        .collect()
}

/// Counts of active subscribers by dimension: `{dimension: {value: count}}`.
pub async fn subscribers(t: &Transport, types: Option<&[String]>) -> Result<Map<String, Value>> {
    let joined = types.map(|ts| ts.join(","));
    validate::subscriber_dimensions(joined.as_deref())?;
    let call = Call::get("/subscribers/analytics/summary").query("type", joined);
    let mut d: Distribution = t.send(&call).await?;
    // Counts as integers, as the other reads are lenient with numbers sent as text.
    for counts in d.data.values_mut().filter_map(Value::as_object_mut) {
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
    Ok(d.data)
}
