//! Triggered campaigns seeded with their notifications (the API has no call that creates
//! one), the campaigns and drips as the inspector lists them, and product alerts.

use serde::Deserialize;
use serde_json::{json, Value};

use super::args::{read_args, str_arg, Args};
use crate::emulator::emu::{Emu, Pinned};
use crate::emulator::inspector;
use crate::emulator::state::{self, Counters};
use crate::model::{
    Analytics, CampaignOptions, Rules, Timestamp, TriggerOptions, TriggeredCampaign,
    TriggeredNotification, UtmParams,
};
use crate::validate::{self, CAMPAIGN_ALERT_EXPIRY_DEFAULT_SECONDS, CAMPAIGN_EXPIRY_MAX_SECONDS};

/// The fields of 2.1 without ids and dates; notifications of 2.2 without ids.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NewTrigger {
    campaign_name: String,
    #[serde(default = "default_type")]
    campaign_type: String,
    #[serde(default = "default_status")]
    status: String,
    #[serde(default = "default_limit")]
    daily_trigger_limit: i64,
    #[serde(default = "default_limit")]
    weekly_trigger_limit: i64,
    rules: Rules,
    #[serde(default)]
    notifications: Vec<TriggeredNotification>,
    #[serde(default)]
    options: Option<TriggerOptions>,
    #[serde(default)]
    utm_params: Option<Value>,
    #[serde(default)]
    api_key: Option<String>,
}

impl NewTrigger {
    /// The read shape's own fields (2.1): a campaign read from the service (or from another
    /// emulator) and given back as it is seeds a copy, these left out.
    const READ_ONLY: [&'static str; 5] = [
        "trigger_id",
        "site_id",
        "created_at_utc",
        "updated_at_utc",
        "analytics",
    ];
}

fn default_type() -> String {
    "trigger".into()
}
fn default_status() -> String {
    "active".into()
}
fn default_limit() -> i64 {
    10
}

pub(super) fn create_trigger(emu: &Emu, site: Pinned, mut args: Args) -> Result<Value, String> {
    for key in NewTrigger::READ_ONLY {
        args.remove(key);
    }
    // The notification model reads a response's `null` as empty; a seed must say what it
    // means (a `null` schedule would silently be `rightaway`).
    if let Some(Value::Array(notifications)) = args.get("notifications") {
        for (i, n) in notifications.iter().enumerate() {
            if let Some(key) = ["actions", "schedule_options", "analytics"]
                .into_iter()
                .find(|k| n.get(*k).is_some_and(Value::is_null))
            {
                return Err(format!(
                    "notifications[{i}].{key} must not be null: leave it out for the default"
                ));
            }
        }
    }
    let t: NewTrigger = read_args(args)?;
    let _ = t.api_key;
    const TYPES: [&str; 5] = ["generic", "browse", "trigger", "price_drop", "inventory"];
    const STATUSES: [&str; 4] = ["draft", "active", "pause", "deleted"];
    if t.campaign_name.trim().is_empty() {
        return Err("campaign_name is required".into());
    }
    if !TYPES.contains(&t.campaign_type.as_str()) {
        return Err(format!("campaign_type must be one of {}", TYPES.join(", ")));
    }
    if !STATUSES.contains(&t.status.as_str()) {
        return Err(format!("status must be one of {}", STATUSES.join(", ")));
    }
    if t.daily_trigger_limit < 0 || t.weekly_trigger_limit < 0 {
        return Err("trigger limits must not be negative".into());
    }
    if t.rules.start_event_name.trim().is_empty() {
        return Err("rules.start_event_name is required".into());
    }
    let mut notifications = t.notifications;
    for (i, n) in notifications.iter_mut().enumerate() {
        let prefix = format!("notifications[{i}].");
        // A misspelt key (`schedule_option`) would be kept aside and its meaning lost.
        if let Some(k) = n.extra.0.keys().next() {
            return Err(format!(
                "{prefix}{k} is not a field of a campaign notification"
            ));
        }
        if n.title.is_empty() || n.message.is_empty() || n.url.is_empty() {
            return Err(format!("{prefix}title, message and url are required"));
        }
        if n.expiry == 0 {
            n.expiry = CAMPAIGN_EXPIRY_MAX_SECONDS;
        }
        validate::campaign_expiry(&format!("{prefix}expiry"), n.expiry)
            .map_err(|v| v.message_with_field())?;
        if n.schedule_options.r#type.is_empty() {
            n.schedule_options = if i == 0 {
                crate::model::ScheduleOptions {
                    r#type: "rightaway".into(),
                    ..Default::default()
                }
            } else {
                crate::model::ScheduleOptions {
                    r#type: "after".into(),
                    value: Some(0),
                    unit: Some("minutes".into()),
                    at: None,
                }
            };
        }
        validate::schedule(&prefix, i, &n.schedule_options, false)
            .map_err(|v| v.message_with_field())?;
        validate::actions(&prefix, &n.actions).map_err(|v| v.message_with_field())?;
    }
    let mut options = t.options;
    if matches!(t.campaign_type.as_str(), "price_drop" | "inventory") {
        let o = options.get_or_insert_with(TriggerOptions::default);
        let c = o.campaign.get_or_insert_with(CampaignOptions::default);
        let expiry = c
            .expiry
            .get_or_insert_with(|| CAMPAIGN_ALERT_EXPIRY_DEFAULT_SECONDS.to_string());
        // A number of seconds (2.4), within a century: the engine adds it to dates.
        if !expiry
            .trim()
            .parse::<i64>()
            .is_ok_and(|e| (1..=3_155_760_000).contains(&e))
        {
            return Err(format!(
                "options.campaign.expiry must be a whole number of seconds from 1 to \
                 3155760000 (a century), not {expiry:?}"
            ));
        }
        if t.campaign_type == "price_drop" {
            let th = c
                .price_drop_threshold
                .as_ref()
                .ok_or("options.campaign.price_drop_threshold is required for price_drop")?;
            if th.r#type != "absolute" && th.r#type != "percentage" {
                return Err("price_drop_threshold.type must be absolute or percentage".into());
            }
        }
    }
    let utm = t
        .utm_params
        .map(|v| UtmParams::from_either(&v))
        .transpose()
        .map_err(|k| validate::utm_refused(k).message())?
        .flatten();
    let id = emu.with_site(site, |s, ids, now| {
        let trigger_id = Counters::next(&mut ids.trigger);
        for (i, n) in notifications.iter_mut().enumerate() {
            n.id = Counters::next(&mut ids.campaign_notification);
            n.order = i as i64 + 1;
            n.analytics = Analytics::default();
        }
        s.triggers.push(TriggeredCampaign {
            trigger_id,
            campaign_name: t.campaign_name,
            campaign_type: t.campaign_type,
            status: t.status,
            site_id: s.site_id,
            created_at_utc: Timestamp::new(now),
            updated_at_utc: Timestamp::new(now),
            daily_trigger_limit: t.daily_trigger_limit,
            weekly_trigger_limit: t.weekly_trigger_limit,
            rules: t.rules,
            analytics: Analytics::default(),
            notifications: Some(notifications),
            options,
            utm_params: utm,
            extra: Default::default(),
        });
        trigger_id
    })?;
    Ok(json!({"trigger_id": id}))
}

pub(super) fn triggers(emu: &Emu, site: Pinned, _args: Args) -> Result<Value, String> {
    emu.with_site(site, |s, _, _| inspector::triggers(s))
}

pub(super) fn drips(emu: &Emu, site: Pinned, _args: Args) -> Result<Value, String> {
    emu.with_site(site, |s, _, _| inspector::drips(s))
}

pub(super) fn add_alert(emu: &Emu, site: Pinned, args: Args) -> Result<Value, String> {
    let hash = str_arg(&args, "subscriber_hash")?.ok_or("subscriber_hash is required")?;
    let product_id = str_arg(&args, "product_id")?.ok_or("product_id is required")?;
    let variant_id = str_arg(&args, "variant_id")?;
    emu.with_site(site, |s, _, now| {
        if s.subscriber(&hash).is_none() {
            return Err(format!("subscriber {hash} does not exist"));
        }
        s.engine.alerts.push(state::Alert {
            subscriber_hash: hash,
            product_id,
            variant_id,
            created_at: now,
            fired_by: Vec::new(),
            baselines: Vec::new(),
        });
        Ok(json!({}))
    })?
}

pub(super) fn alerts(emu: &Emu, site: Pinned, _args: Args) -> Result<Value, String> {
    emu.with_site(site, |s, _, _| json!(s.engine.alerts))
}
