//! The notification of a campaign as read (2.2 for triggered campaigns, 2.8 for drips): the
//! two resources carry the same fields, each with its own order and with image URLs that
//! are optional in 2.2 and plain strings in 2.8.
//!
//! [`campaign_notification!`] declares such a type from the names of its fields in their
//! order (the order a dict, a `repr` and the emulator's answers show): each field's type is
//! written once here, and its lenient reader follows from the type (`#[lenient]` of
//! `model!`).

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
        $crate::model::macros::model! {
            $(#[$meta])*
            pub struct $name {
                $($done)*
            }
        }
    };
    (@field $head:tt [$($done:tt)*] extra, $($rest:tt)*) => {
        $crate::model::campaign::campaign_notification!(@field $head [$($done)*
            /// Fields the spec does not list, kept as sent.
            #[serde(flatten)]
            pub extra: $crate::model::common::Extra,
        ] $($rest)*);
    };
    // The image URLs of 2.2.
    (@field $head:tt [$($done:tt)*] $text:ident ?, $($rest:tt)*) => {
        $crate::model::campaign::campaign_notification!(@field $head [$($done)*
            /// A String in 2.2: left out when the notification has none, never `null` (as
            /// the other optional strings of the models, `utm_term` or an action's
            /// `image_url`).
            #[lenient]
            pub $text: Option<String>,
        ] $($rest)*);
    };
    (@field $head:tt [$($done:tt)*] $field:ident, $($rest:tt)*) => {
        $crate::model::campaign::campaign_notification!(@field $head [$($done)*
            #[lenient]
            pub $field: $crate::model::campaign::campaign_notification!(@type $field),
        ] $($rest)*);
    };
    // Each other field's type, by its name.
    (@type id) => { i64 };
    (@type order) => { i64 };
    (@type require_interaction) => { i64 };
    (@type expiry) => { i64 };
    (@type schedule_options) => { $crate::model::common::ScheduleOptions };
    (@type actions) => { Vec<$crate::model::common::Action> };
    (@type analytics) => { $crate::model::common::Analytics };
    // title, message, url and the image URLs of 2.8.
    (@type $text:ident) => { String };
}

pub(crate) use campaign_notification;
