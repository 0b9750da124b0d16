//! The spec's limits (section 8), one constant each: the client checks them before anything
//! is sent and the emulator answers by them, so a limit is written here and nowhere else.

/// List campaigns: `page` default and minimum.
pub const PAGE_DEFAULT: u32 = 1;
pub const PAGE_MIN: i64 = 1;
/// List campaigns: `limit` default and range.
pub const LIMIT_DEFAULT: u32 = 10;
pub const LIMIT_MIN: i64 = 1;
pub const LIMIT_MAX: i64 = 500;
/// View segments: `limit` minimum, `offset` minimum.
pub const SEGMENTS_LIMIT_MIN: i64 = 1;
pub const SEGMENTS_OFFSET_MIN: i64 = 0;
/// Add to segment by hash: entries per request.
pub const SEGMENT_HASHES_MAX: usize = 500;
/// Create broadcast: `subscriber_hash` and `profile_id` entries.
pub const BROADCAST_HASHES_MAX: usize = 100;
pub const BROADCAST_PROFILE_IDS_MAX: usize = 100;
/// Notification expiry: 28 days, in minutes for broadcasts, in seconds for campaigns.
pub const BROADCAST_EXPIRY_MAX_MINUTES: i64 = 28 * 24 * 60;
pub const CAMPAIGN_EXPIRY_MAX_SECONDS: i64 = 28 * 24 * 60 * 60;
/// Price-drop and inventory campaigns: `options.campaign.expiry` default, seconds.
pub const CAMPAIGN_ALERT_EXPIRY_DEFAULT_SECONDS: i64 = 2_592_000;
/// Buttons per notification.
pub const ACTIONS_MAX: usize = 2;
/// Broadcast title/message lengths: the broadcast reference (now, draft) and the
/// scheduled-push reference (later). Both references are honoured: each for its own type.
pub const TITLE_MAX: usize = 85;
pub const MESSAGE_MAX: usize = 135;
pub const TITLE_MAX_SCHEDULED: usize = 45;
pub const MESSAGE_MAX_SCHEDULED: usize = 73;
/// Track event.
pub const EVENT_NAME_MAX: usize = 64;
pub const RESERVED_EVENT_PREFIX: &str = "Service.";
pub const DATA_KEY_MAX: usize = 255;
pub const DATA_PAYLOAD_MAX_BYTES: usize = 4096;
/// The longest wait between two campaign notifications (the spec sets none; a year keeps
/// every schedule on the calendar).
pub const SCHEDULE_MAX_MINUTES: i64 = 366 * 24 * 60;
pub const SCHEDULE_MAX_DAYS: i64 = 366;
/// Analytics ranges: years 1 to 9999, at most ten years long.
pub const ANALYTICS_MAX_DAYS: i64 = 3660;
/// `valid_from_utc` format.
pub const VALID_FROM_FORMAT: &str = "%Y-%m-%d %H:%M:%S";
