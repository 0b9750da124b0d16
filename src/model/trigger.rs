//! Triggered campaigns (spec 2.1, 2.2, 2.4): read through the API, created by the emulator's
//! admin routes.

use super::campaign::campaign_notification;
use super::common::{Analytics, Extra, UtmParams};
use super::lenient;
use super::macros::model;

model! {
    /// Spec 2.1.
    pub struct TriggeredCampaign {
        #[lenient] pub trigger_id: i64,
        #[lenient] pub campaign_name: String,
        #[lenient] pub campaign_type: String,
        #[lenient] pub status: String,
        #[lenient] pub site_id: i64,
        #[lenient] pub created_at_utc: super::timestamp::Timestamp,
        #[lenient] pub updated_at_utc: super::timestamp::Timestamp,
        #[lenient] pub daily_trigger_limit: i64,
        #[lenient] pub weekly_trigger_limit: i64,
        #[lenient] pub rules: Rules,
        #[lenient] pub analytics: Analytics,
        /// Present in the single-campaign response, absent in list items.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub notifications: Option<Vec<TriggeredNotification>>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub options: Option<TriggerOptions>,
        #[lenient] pub utm_params: Option<UtmParams>,
        #[serde(flatten)] pub extra: Extra,
    }
}

model! {
    /// `rules` of 2.1.
    pub struct Rules {
        #[lenient] pub start_event_name: String,
        #[lenient] pub stop_event_name: String,
    }
}

campaign_notification! {
    /// Spec 2.2.
    TriggeredNotification {
        id, order, title, message, url, image_url?, big_image_url?, expiry, require_interaction,
        actions, schedule_options, analytics, extra,
    }
}

model! {
    /// Spec 2.4.
    pub struct TriggerOptions {
        #[lenient] pub result_name: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub campaign: Option<CampaignOptions>,
    }
}

model! {
    /// `options.campaign` of 2.4.
    pub struct CampaignOptions {
        /// Seconds, sent as a string by the service.
        #[lenient] pub expiry: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub price_drop_threshold: Option<PriceDropThreshold>,
    }
}

model! {
    /// `options.campaign.price_drop_threshold` of 2.4.
    pub struct PriceDropThreshold {
        /// `absolute` or `percentage`.
        #[lenient] pub r#type: String,
        /// A number; read also from the object the spec lists it as (see
        /// [`lenient::float_or_wrapped`]).
        #[serde(default, deserialize_with = "lenient::float_or_wrapped")]
        pub value: f64,
    }
}
