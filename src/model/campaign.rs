//! The notification of a campaign as read (2.2 for triggered campaigns, 2.8 for drips): the
//! two resources carry the same fields, each with its own order and with image URLs that
//! are optional in 2.2 and plain strings in 2.8.
//!
//! [`campaign_notification!`] declares such a type from the names of its fields in their
//! order (the order a dict, a `repr` and the emulator's answers show): each field's type and
//! lenient reader is written once here.

/// Declares a campaign notification read shape from its field names, in order. A field
/// followed by `?` (`image_url?`, `big_image_url?`) is an optional string left out when
/// absent; without it, a string read as empty when absent.
macro_rules! campaign_notification {
    ($(#[$meta:meta])* $name:ident { $($fields:tt)* }) => {
        $crate::model::campaign::campaign_notification!(
            @field [$(#[$meta])* $name] [] $($fields)*
        );
    };
    (@field [$(#[$meta:meta])* $name:ident] [$($done:tt)*] $(,)?) => {
        #[cfg_attr(
            feature = "python",
            pyo3::pyclass(frozen, get_all, eq, from_py_object, module = "pushwire._core")
        )]
        #[derive(serde::Serialize, serde::Deserialize, Clone, Debug, Default, PartialEq)]
        $(#[$meta])*
        pub struct $name {
            $($done)*
        }
    };
    (@field $head:tt [$($done:tt)*] id, $($rest:tt)*) => {
        $crate::model::campaign::campaign_notification!(@field $head [$($done)*
            #[serde(default, deserialize_with = "crate::model::lenient::int")]
            pub id: i64,
        ] $($rest)*);
    };
    (@field $head:tt [$($done:tt)*] order, $($rest:tt)*) => {
        $crate::model::campaign::campaign_notification!(@field $head [$($done)*
            #[serde(default, deserialize_with = "crate::model::lenient::int")]
            pub order: i64,
        ] $($rest)*);
    };
    (@field $head:tt [$($done:tt)*] require_interaction, $($rest:tt)*) => {
        $crate::model::campaign::campaign_notification!(@field $head [$($done)*
            #[serde(default, deserialize_with = "crate::model::lenient::int")]
            pub require_interaction: i64,
        ] $($rest)*);
    };
    (@field $head:tt [$($done:tt)*] expiry, $($rest:tt)*) => {
        $crate::model::campaign::campaign_notification!(@field $head [$($done)*
            #[serde(default, deserialize_with = "crate::model::lenient::int")]
            pub expiry: i64,
        ] $($rest)*);
    };
    (@field $head:tt [$($done:tt)*] schedule_options, $($rest:tt)*) => {
        $crate::model::campaign::campaign_notification!(@field $head [$($done)*
            #[serde(default, deserialize_with = "crate::model::lenient::or_default")]
            pub schedule_options: $crate::model::common::ScheduleOptions,
        ] $($rest)*);
    };
    (@field $head:tt [$($done:tt)*] actions, $($rest:tt)*) => {
        $crate::model::campaign::campaign_notification!(@field $head [$($done)*
            #[serde(default, deserialize_with = "crate::model::lenient::or_default")]
            pub actions: Vec<$crate::model::common::Action>,
        ] $($rest)*);
    };
    (@field $head:tt [$($done:tt)*] analytics, $($rest:tt)*) => {
        $crate::model::campaign::campaign_notification!(@field $head [$($done)*
            #[serde(default, deserialize_with = "crate::model::lenient::or_default")]
            pub analytics: $crate::model::common::Analytics,
        ] $($rest)*);
    };
    (@field $head:tt [$($done:tt)*] extra, $($rest:tt)*) => {
        $crate::model::campaign::campaign_notification!(@field $head [$($done)*
            /// Fields the spec does not list, kept as sent.
            #[serde(flatten)]
            pub extra: $crate::model::common::Extra,
        ] $($rest)*);
    };
    // title, message, url and the image URLs of 2.8.
    (@field $head:tt [$($done:tt)*] $text:ident, $($rest:tt)*) => {
        $crate::model::campaign::campaign_notification!(@field $head [$($done)*
            #[serde(default, deserialize_with = "crate::model::lenient::string")]
            pub $text: String,
        ] $($rest)*);
    };
    // The image URLs of 2.2.
    (@field $head:tt [$($done:tt)*] $text:ident ?, $($rest:tt)*) => {
        $crate::model::campaign::campaign_notification!(@field $head [$($done)*
            /// A String in 2.2: left out when the notification has none, never `null` (as
            /// the other optional strings of the models, `utm_term` or an action's
            /// `image_url`).
            #[serde(
                default,
                deserialize_with = "crate::model::lenient::opt_string",
                skip_serializing_if = "Option::is_none"
            )]
            pub $text: Option<String>,
        ] $($rest)*);
    };
}

pub(crate) use campaign_notification;
