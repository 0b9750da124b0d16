//! Product alerts (2.4, 2.11): price drops past a `price_drop` campaign's threshold (from
//! the price each alert was set at) and returns to stock for `inventory` campaigns notify
//! the alert holders, within the campaign's expiry.

use chrono::{DateTime, Duration, Utc};
use serde_json::{Map, Value};

use super::delivery::tick;
use super::triggers::start_run;
use crate::emulator::state::{Alert, Counters, Site};
use crate::validate::CAMPAIGN_ALERT_EXPIRY_DEFAULT_SECONDS;

/// What a product was before an update, for the alert rules.
#[derive(Debug, Clone)]
pub struct PriceChange {
    pub product_id: String,
    pub variant_id: Option<String>,
    pub old_price: Option<f64>,
    pub new_price: f64,
    pub was_in_stock: Option<bool>,
    pub in_stock: bool,
}

impl Alert {
    fn covers(&self, change: &PriceChange) -> bool {
        self.product_id == change.product_id
            && (self.variant_id.is_none() || self.variant_id == change.variant_id)
    }

    /// The price a drop of this change is measured from, recorded at the change's first
    /// sight of the variant.
    fn baseline(&mut self, change: &PriceChange) -> f64 {
        match self.baselines.iter().find(|(v, _)| *v == change.variant_id) {
            Some((_, price)) => *price,
            None => {
                let price = change.old_price.unwrap_or(change.new_price);
                self.baselines.push((change.variant_id.clone(), price));
                price
            }
        }
    }
}

/// A price as a tag value: whole prices read as integers (`{{price}}` of 89 is "89", not
/// "89.0"), others as they are.
fn price_value(price: f64) -> Value {
    if price.fract() == 0.0 && price.abs() < 9.0e15 {
        Value::from(price as i64)
    } else {
        serde_json::json!(price)
    }
}

/// A price drop of at least the threshold (absolute, or percent of the old price).
fn drop_reaches(kind: &str, threshold: f64, old: f64, new: f64) -> bool {
    let drop = old - new;
    if drop <= 0.0 {
        return false;
    }
    match kind {
        "percentage" => old > 0.0 && drop / old * 100.0 + 1e-9 >= threshold,
        _ => drop + 1e-9 >= threshold,
    }
}

pub fn on_products(
    site: &mut Site,
    ids: &mut Counters,
    now: DateTime<Utc>,
    changes: &[PriceChange],
) {
    let campaigns: Vec<_> = site
        .triggers
        .iter()
        .filter(|t| {
            t.status == "active" && matches!(t.campaign_type.as_str(), "price_drop" | "inventory")
        })
        .cloned()
        .collect();
    for change in changes {
        // Each alert's drop is measured from its own baseline (what the subscriber saw when
        // setting it), recorded before any campaign looks, whether one is active or not.
        let bases: Vec<Option<f64>> = site
            .engine
            .alerts
            .iter_mut()
            .map(|a| a.covers(change).then(|| a.baseline(change)))
            .collect();
        for t in &campaigns {
            let options = t.options.as_ref().and_then(|o| o.campaign.as_ref());
            let expiry = options
                .and_then(|c| c.expiry.as_deref())
                .and_then(|e| e.trim().parse::<i64>().ok())
                .unwrap_or(CAMPAIGN_ALERT_EXPIRY_DEFAULT_SECONDS);
            let threshold = options.and_then(|c| c.price_drop_threshold.as_ref());
            let mut holders = Vec::new();
            for (alert, base) in site.engine.alerts.iter_mut().zip(&bases) {
                let Some(base) = *base else { continue };
                let fires = match t.campaign_type.as_str() {
                    "price_drop" => threshold.is_some_and(|th| {
                        drop_reaches(&th.r#type, th.value, base, change.new_price)
                    }),
                    _ => change.in_stock && change.was_in_stock == Some(false),
                };
                // Checked: a date past chrono's range is "never expires", not a panic.
                let fresh = Duration::try_seconds(expiry)
                    .and_then(|d| alert.created_at.checked_add_signed(d))
                    .is_none_or(|until| now <= until);
                if fires && fresh && !alert.fired_by.contains(&t.trigger_id) {
                    alert.fired_by.push(t.trigger_id);
                    holders.push(alert.subscriber_hash.clone());
                }
            }
            if holders.is_empty() {
                continue;
            }
            let mut data = Map::new();
            data.insert("product_id".into(), Value::from(change.product_id.clone()));
            data.insert("price".into(), price_value(change.new_price));
            if let Some(old) = change.old_price {
                data.insert("old_price".into(), price_value(old));
            }
            if let Some(v) = &change.variant_id {
                data.insert("variant_id".into(), Value::from(v.clone()));
            }
            start_run(site, t.trigger_id, &holders, &data, now);
        }
    }
    tick(site, ids, now);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::emulator::engine::content::personalize;

    #[test]
    fn percentage_threshold_is_inclusive() {
        assert!(drop_reaches("percentage", 10.0, 100.0, 89.0));
        assert!(drop_reaches("percentage", 10.0, 100.0, 90.0));
        assert!(!drop_reaches("percentage", 10.0, 100.0, 91.0));
        assert!(drop_reaches("absolute", 5.0, 20.0, 15.0));
        assert!(!drop_reaches("absolute", 5.0, 20.0, 15.5));
    }

    #[test]
    fn whole_prices_fill_tags_without_a_fraction() {
        let mut data = Map::new();
        data.insert("price".into(), price_value(89.0));
        data.insert("old_price".into(), price_value(99.5));
        assert_eq!(
            personalize("{{price}} was {{old_price}}", &data),
            "89 was 99.5"
        );
    }
}
