//! What the operations take and give beyond the resources themselves: the queries of the
//! reads, the forms of the segment writes, a page of a list and a row of the summary. Each
//! operation's declaration (`crate::operations`) names its request and response among these
//! and the resources; fields carry the spec's names.

use serde_json::{Map, Value};

use super::{Meta, Product, SummaryRow};

/// `analytics_start_at` / `analytics_end_at` of the campaign reads, `YYYY-MM-DD`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AnalyticsRange {
    pub start: Option<String>,
    pub end: Option<String>,
}

/// A read of one campaign (4.1, 4.5): its id, in the path, and the analytics range.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CampaignQuery {
    pub id: i64,
    pub range: AnalyticsRange,
}

/// What a campaign list (4.2, 4.4) is asked for: a page (from 1), its size (1 to 500; the
/// service's defaults when `None`) and the analytics range.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ListQuery {
    pub page: Option<i64>,
    pub limit: Option<i64>,
    pub range: AnalyticsRange,
}

/// One page of a campaign list (4.2, 4.4).
#[derive(Debug, Clone, PartialEq)]
pub struct Page<T> {
    pub data: Vec<T>,
    pub meta: Meta,
}

/// The query of 4.9; the service's defaults for each field left `None`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SegmentsQuery {
    pub segment_id: Option<String>,
    pub limit: Option<i64>,
    pub offset: Option<i64>,
    /// `all` for the service's own segments too.
    pub segment_type: Option<String>,
}

/// The form of 4.7.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SegmentDeletion {
    pub segment_id: String,
}

/// The form of 4.6: the subscribers to add to a segment, by hash.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SegmentHashes {
    pub segment_id: String,
    pub subscriber_hash: Vec<String>,
}

/// The form of 4.8: subscribers added to or removed from a segment by profile id.
#[derive(Debug, Clone, PartialEq)]
pub struct ProfileMembership {
    pub segment_name: String,
    pub profile_id: Vec<String>,
    pub operation: MembershipChange,
}

/// 4.8's `operation`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MembershipChange {
    Add,
    Delete,
}

impl MembershipChange {
    /// As the form carries it.
    pub const fn as_str(self) -> &'static str {
        match self {
            MembershipChange::Add => "add",
            MembershipChange::Delete => "delete",
        }
    }
}

/// The query of 4.10: `from` and `to` (`YYYY-MM-DD`) and `group_by` (`day`, `week`, `month`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SummaryQuery {
    pub from: String,
    pub to: String,
    pub group_by: String,
}

/// One row of 4.10 as read: the spec's columns, and any the service adds beyond them (kept,
/// so that a notebook's DataFrame shows a new column rather than dropping it).
#[derive(Debug, Clone)]
pub struct SummaryRead {
    pub row: SummaryRow,
    pub extra: Map<String, Value>,
}

/// The query of 4.11: the dimensions asked for (its `type`), every one when `None`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DistributionQuery {
    pub types: Option<Vec<String>>,
}

/// The body of 4.12.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ProductUpdate {
    pub products: Vec<Product>,
}
