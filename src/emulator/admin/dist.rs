//! A distribution to draw a generated population's values from (`generate_subscribers`):
//! values with weights, read from the admin API's arguments.

use serde_json::Value;

/// Values drawn with given weights.
pub struct Dist {
    pub values: Vec<Value>,
    /// Running sums of the weights; a draw is the first above a uniform number below the
    /// total.
    cumulative: Vec<f64>,
}

/// The weights of `name`, each a number.
fn numbers<'a>(weights: impl Iterator<Item = &'a Value>, name: &str) -> Result<Vec<f64>, String> {
    weights
        .map(|w| {
            w.as_f64()
                .ok_or(format!("{name}: a weight must be a number"))
        })
        .collect()
}

impl Dist {
    /// `[v, ...]` (each as likely), `{"values": [...], "weights": [...]}`, or `{value:
    /// weight}` (text values).
    pub fn of(v: &Value, name: &str) -> Result<Dist, String> {
        let (values, weights): (Vec<Value>, Vec<f64>) = match v {
            Value::Array(a) => (a.clone(), vec![1.0; a.len()]),
            Value::Object(o) if o.contains_key("values") && o.contains_key("weights") => {
                let (Some(Value::Array(vs)), Some(Value::Array(ws))) =
                    (o.get("values"), o.get("weights"))
                else {
                    return Err(format!("{name}: values and weights must be lists"));
                };
                if vs.len() != ws.len() {
                    return Err(format!(
                        "{name}: {} values but {} weights",
                        vs.len(),
                        ws.len()
                    ));
                }
                (vs.clone(), numbers(ws.iter(), name)?)
            }
            Value::Object(o) => (
                o.keys().map(|k| Value::String(k.clone())).collect(),
                numbers(o.values(), name)?,
            ),
            _ => {
                return Err(format!(
                    "{name} must be a list of values or an object of weights"
                ))
            }
        };
        if values.is_empty() {
            return Err(format!("{name} has no values"));
        }
        if weights.iter().any(|w| !(*w >= 0.0 && w.is_finite())) {
            return Err(format!("{name}: a weight must be a number from 0 up"));
        }
        let mut dist =
            Dist::of_weights(weights).ok_or(format!("{name}: the weights add up to 0"))?;
        dist.values = values;
        Ok(dist)
    }

    /// A draw of positions by `weights` (each a number from 0 up), with no values; `None`
    /// when they add up to 0.
    pub fn of_weights(weights: Vec<f64>) -> Option<Dist> {
        let cumulative: Vec<f64> = weights
            .iter()
            .scan(0.0, |total, w| {
                *total += w;
                Some(*total)
            })
            .collect();
        (cumulative.last().copied().unwrap_or(0.0) > 0.0).then_some(Dist {
            values: Vec::new(),
            cumulative,
        })
    }

    /// The place of one drawn value (in `values`, or in the weights it was made of).
    pub fn pick(&self, rng: &mut fastrand::Rng) -> usize {
        let total = self.cumulative.last().copied().unwrap_or(0.0);
        let x = rng.f64() * total;
        let i = self.cumulative.partition_point(|c| *c <= x);
        i.min(self.cumulative.len() - 1)
    }
}
