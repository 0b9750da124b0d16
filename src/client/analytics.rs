//! Summary analytics (4.10) and the subscriber distribution (4.11).

use serde_json::{Map, Value};

use super::transport::{Call, Transport};
use super::Result;
use crate::envelope;
use crate::model::SummaryRow;
use crate::validate;

envelope!(Summary { data: Vec<SummaryRow>; });
envelope!(Distribution { data: Map<String, Value>; });

pub async fn summary(
    t: &Transport,
    from: &str,
    to: &str,
    group_by: &str,
) -> Result<Vec<SummaryRow>> {
    validate::summary_query(Some(from), Some(to), Some(group_by))?;
    let call = Call::get("/analytics/summary")
        .query("from", Some(from))
        .query("to", Some(to))
        .query("group_by", Some(group_by));
    let s: Summary = t.send(&call).await?;
    Ok(s.data)
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
