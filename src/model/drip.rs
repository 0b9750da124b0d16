//! Drip autoresponders (spec 2.7-2.9, 4.3-4.5).

use serde_json::Value;

use super::campaign::campaign_notification;
use super::common::{Action, Analytics, Extra, Json, ScheduleOptions, UtmParams};
use super::macros::model;

model! {
    /// Spec 2.7, the read shape.
    pub struct Drip {
        #[lenient] pub drip_id: i64,
        #[lenient] pub campaign_name: String,
        #[lenient] pub drip_type: String,
        #[lenient] pub status: String,
        #[lenient] pub site_id: i64,
        #[lenient] pub created_at_utc: super::timestamp::Timestamp,
        #[lenient] pub updated_at_utc: super::timestamp::Timestamp,
        #[lenient] pub audience: Audience,
        #[lenient] pub options: DripOptions,
        #[lenient] pub analytics: Analytics,
        /// Present in the single-campaign response, absent in list items.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub notifications: Option<Vec<DripNotification>>,
        #[lenient] pub utm_params: Option<UtmParams>,
        #[serde(flatten)] pub extra: Extra,
    }
}

model! {
    /// `options` of 2.7.
    pub struct DripOptions {
        #[lenient] pub result_name: String,
    }
}

model! {
    /// Audience of 2.7: groups OR-ed, the rules of a group AND-ed.
    pub struct Audience {
        #[lenient] pub filter: AudienceFilter,
    }
}

model! {
    pub struct AudienceFilter {
        #[lenient] pub value: Vec<Vec<AudienceRule>>,
    }
}

model! {
    /// One audience rule: `field` in segments, country, states, city, device, device_type;
    /// `op` in all, in, nin.
    pub struct AudienceRule {
        #[lenient] pub field: String,
        #[lenient] pub op: String,
        #[serde(default)]
        pub value: Json,
    }
}

campaign_notification! {
    /// Spec 2.8, the read shape: the create shape's fields plus `id`, `order`, `analytics`.
    DripNotification {
        id, order, title, message, url, image_url, big_image_url, require_interaction, expiry,
        schedule_options, actions, analytics, extra,
    }
}

impl DripNotification {
    /// The read shape of a created notification.
    pub fn from_new(id: i64, order: i64, n: NewDripNotification) -> Self {
        DripNotification {
            id,
            order,
            title: n.title,
            message: n.message,
            url: n.url,
            image_url: n.image_url,
            big_image_url: n.big_image_url,
            require_interaction: n.require_interaction.unwrap_or_default(),
            expiry: n.expiry.unwrap_or_default(),
            schedule_options: n.schedule_options,
            actions: n.actions,
            analytics: Analytics::default(),
            extra: Extra::default(),
        }
    }
}

/// A notification as read, given back where one is created (copying a drip): its read-only
/// fields (`id`, `order`, `analytics`, and what the service sent beyond the spec, `extra`)
/// are left out; the rest is validated as any input is.
impl From<DripNotification> for NewDripNotification {
    fn from(n: DripNotification) -> Self {
        NewDripNotification {
            title: n.title,
            message: n.message,
            url: n.url,
            image_url: n.image_url,
            big_image_url: n.big_image_url,
            require_interaction: Some(n.require_interaction),
            expiry: Some(n.expiry),
            schedule_options: n.schedule_options,
            actions: n.actions,
        }
    }
}

impl NewDripNotification {
    /// The read shape's own fields (2.8), which a notification to create does not carry: a
    /// read notification's dict (`to_dict()`) given back has them dropped, not refused.
    pub const READ_ONLY: [&'static str; 3] = ["id", "order", "analytics"];

    /// The create shape's fields (2.8).
    pub const FIELDS: [&'static str; 9] = [
        "title",
        "message",
        "url",
        "image_url",
        "big_image_url",
        "require_interaction",
        "expiry",
        "schedule_options",
        "actions",
    ];
}

model! {
    /// Spec 2.8, the create shape.
    pub struct NewDripNotification {
        #[lenient] pub title: String,
        #[lenient] pub message: String,
        #[lenient] pub url: String,
        #[lenient] pub image_url: String,
        #[lenient] pub big_image_url: String,
        /// Required (2.8): 0 or 1, with no default to fall back on (a forgotten one must not
        /// quietly become a notification that closes itself).
        #[lenient] pub require_interaction: Option<i64>,
        /// Required (2.8), in seconds: missing is told apart from an out-of-range value.
        #[lenient] pub expiry: Option<i64>,
        #[serde(default)]
        pub schedule_options: ScheduleOptions,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        pub actions: Vec<Action>,
    }
}

model! {
    /// Spec 2.9.
    // An include list is `None` when not given (no filter on that field); given empty it is
    // refused (`validate::drip`), never sent as "no filter", which would reach everyone. An
    // empty exclude list excludes no one. The API's document says what the wire takes: a
    // list, never `null`, and an include list of one value at least.
    #[serde(default)]
    pub struct SendTo {
        #[serde(skip_serializing_if = "Option::is_none", deserialize_with = "super::lenient::opt_ids")]
        #[cfg_attr(feature = "emulator", schemars(with = "Vec<String>", length(min = 1)))]
        pub include_segments: Option<Vec<String>>,
        #[serde(skip_serializing_if = "Vec::is_empty", deserialize_with = "super::lenient::ids")]
        pub exclude_segments: Vec<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "emulator", schemars(with = "Vec<String>", length(min = 1)))]
        pub include_countries: Option<Vec<String>>,
        #[serde(skip_serializing_if = "Vec::is_empty")] pub exclude_countries: Vec<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "emulator", schemars(with = "Vec<String>", length(min = 1)))]
        pub include_states: Option<Vec<String>>,
        #[serde(skip_serializing_if = "Vec::is_empty")] pub exclude_states: Vec<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "emulator", schemars(with = "Vec<String>", length(min = 1)))]
        pub include_cities: Option<Vec<String>>,
        #[serde(skip_serializing_if = "Vec::is_empty")] pub exclude_cities: Vec<String>,
    }
}

/// An include list of `send_to` by name (`None` when not given), and its exclude list.
pub(crate) type IncludeExclude<'a> = (&'static str, Option<&'a [String]>, &'a [String]);

/// The audience rule fields (2.7) that `send_to` has lists for (2.9), in its order.
pub(crate) const SEND_TO_FIELDS: [&str; 4] = ["segments", "country", "states", "city"];

impl SendTo {
    /// The include list (by name) and the exclude list of each of [`SEND_TO_FIELDS`].
    pub(crate) fn lists(&self) -> [IncludeExclude<'_>; 4] {
        let s = self;
        [
            ("include_segments", &s.include_segments, &s.exclude_segments),
            (
                "include_countries",
                &s.include_countries,
                &s.exclude_countries,
            ),
            ("include_states", &s.include_states, &s.exclude_states),
            ("include_cities", &s.include_cities, &s.exclude_cities),
        ]
        .map(|(name, include, exclude)| (name, include.as_deref(), exclude.as_slice()))
    }

    pub(crate) fn lists_mut(&mut self) -> [(&mut Option<Vec<String>>, &mut Vec<String>); 4] {
        [
            (&mut self.include_segments, &mut self.exclude_segments),
            (&mut self.include_countries, &mut self.exclude_countries),
            (&mut self.include_states, &mut self.exclude_states),
            (&mut self.include_cities, &mut self.exclude_cities),
        ]
    }

    /// The first include list given empty, by name: no filter, which would send to everyone
    /// where the caller meant to narrow the audience.
    pub fn empty_include(&self) -> Option<&'static str> {
        self.lists().into_iter().find_map(|(name, include, _)| {
            include.is_some_and(<[String]>::is_empty).then_some(name)
        })
    }
}

impl Audience {
    /// The read shape's audience (2.7) for a drip's `send_to` (2.9): one group whose rules
    /// are the include (`in`) and exclude (`nin`) lists given; none means everyone (`all`).
    pub fn from_send_to(send_to: &SendTo) -> Audience {
        let mut rules = Vec::new();
        for (field, (_, include, exclude)) in SEND_TO_FIELDS.iter().zip(send_to.lists()) {
            // An include list given empty (refused before a drip is made) is an `in` rule
            // that selects no one; an empty exclude list excludes no one: no rule.
            let exclude = Some(exclude).filter(|list| !list.is_empty());
            for (op, list) in [("in", include), ("nin", exclude)] {
                let Some(list) = list else { continue };
                let values = list
                    .iter()
                    .map(|s| match (*field, s.parse::<i64>()) {
                        ("segments", Ok(n)) => Value::from(n),
                        _ => Value::from(s.as_str()),
                    })
                    .collect();
                rules.push(AudienceRule {
                    field: field.to_string(),
                    op: op.to_string(),
                    value: Json(Value::Array(values)),
                });
            }
        }
        if rules.is_empty() {
            rules.push(AudienceRule {
                field: "segments".into(),
                op: "all".into(),
                value: Json(Value::Array(Vec::new())),
            });
        }
        Audience {
            filter: AudienceFilter { value: vec![rules] },
        }
    }
}

model! {
    /// The body of 4.3.
    pub struct NewDrip {
        #[serde(default)]
        pub campaign_name: String,
        #[serde(default)]
        pub notifications: Vec<NewDripNotification>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub send_to: Option<SendTo>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub utm_params: Option<UtmParams>,
    }
}
