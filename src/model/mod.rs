//! The spec's resources as serde types, shared by the client and the emulator. Response
//! types are lenient (see `lenient`) and keep unknown fields in `extra`.

#[cfg(feature = "python")]
pub mod annotation;
pub mod calls;
pub mod campaign;
pub mod common;
pub mod drip;
pub mod lenient;
mod macros;
pub mod misc;
pub mod notification;
pub mod timestamp;
pub mod trigger;

pub use calls::{
    AnalyticsRange, CampaignQuery, DistributionQuery, ListQuery, MembershipChange, Page,
    ProductUpdate, ProfileMembership, SegmentDeletion, SegmentHashes, SegmentsQuery, SummaryQuery,
    SummaryRead,
};
pub use common::{Action, Analytics, GoalResult, Meta, ScheduleOptions, UtmError, UtmParams};
pub use drip::{
    Audience, AudienceFilter, AudienceRule, Drip, DripNotification, DripOptions, NewDrip,
    NewDripNotification, SendTo,
};
pub use misc::{Event, Product, Segment, SummaryRow};
pub use notification::{AttributeRule, NewNotification, NotificationType};
pub use timestamp::Timestamp;
pub use trigger::{
    CampaignOptions, PriceDropThreshold, Rules, TriggerOptions, TriggeredCampaign,
    TriggeredNotification,
};
