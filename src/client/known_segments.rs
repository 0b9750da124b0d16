//! The site's segment ids as a client last read them, for a broadcast or a drip that names
//! segments: an id the site does not have is refused before anything is sent, since the
//! service accepts it and sends to nobody (an unknown `include_segments` id) or to people the
//! sender meant to leave out (an unknown `exclude_segments` id).
//!
//! One `segments.list` (every type, page by page) serves every call of a client for
//! [`FRESH_FOR`]; an id missing from a read that is still fresh reads the list again once, so
//! that a segment made a second ago (in the dashboard, by another worker) is found. A segment
//! deleted within [`FRESH_FOR`] of a read is still taken for one until the next read.

use std::collections::HashSet;
use std::future::Future;
use std::time::{Duration, Instant};

use super::error::{Error, Result};
use super::segments;
use super::transport::{CallOptions, Limits, Transport};
use crate::message;
use crate::operations::Request;
use crate::operations::SegmentsList;
use crate::validate::{Violation, FIELD};

/// How long one read of the site's segments answers for its ids: long enough that a form
/// sending broadcasts one after another lists once, short enough that a deletion is seen
/// within a minute.
pub const FRESH_FOR: Duration = Duration::from_secs(60);

/// The segments asked for per page: the spec sets no upper limit, and a site has tens of
/// segments, seldom thousands (a service that answers fewer is read on from where it ended).
const PAGE: i64 = 1000;

/// Ok when every id of `named` (each with the path of the field that gives it,
/// `include_segments[0]`) is one of the site's segments; the validation error naming the
/// first that is not.
pub async fn check(t: &Transport, named: &[(String, i64)]) -> Result<()> {
    if named.is_empty() {
        return Ok(());
    }
    let mut read = t.memo().segment_ids.lock().await;
    if read
        .as_ref()
        .is_some_and(|read| answers(read, Instant::now(), named))
    {
        return Ok(());
    }
    let ids = CallOptions::own_request(site_segments(t)).await?;
    let missing = named.iter().find(|(_, id)| !ids.contains(id)).cloned();
    *read = Some((Instant::now(), ids));
    match missing {
        None => Ok(()),
        Some((field, id)) => Err(Error::Validation(Violation::new(
            field,
            message![
                "The ",
                FIELD,
                format!(
                    " names segment {id}, which this site does not have (its segments were \
                     listed just now): sent, it would reach nobody, or leave out nobody. Pass \
                     check_segments=False to send it unchecked"
                )
            ],
        ))),
    }
}

/// `send` on `t` once the site is found to have each segment of `named` (see [`check`]): the
/// read and the send within the one call's timeout, the send given what the read left.
pub async fn then_send<T, F, Fut>(t: &Transport, named: &[(String, i64)], send: F) -> Result<T>
where
    F: FnOnce(Transport) -> Fut,
    Fut: Future<Output = Result<T>>,
{
    if named.is_empty() {
        return send(t.with_limits(t.limits())).await;
    }
    let limits = t.limits();
    let started = tokio::time::Instant::now();
    match tokio::time::timeout(limits.timeout, check(t, named)).await {
        Ok(checked) => checked?,
        Err(_) => {
            return Err(Error::Timeout {
                message: format!(
                    "the call ran out of its timeout ({:.1} s) reading the site's segments to \
                     check its own; nothing was sent",
                    limits.timeout.as_secs_f64()
                ),
                outcome_unknown: false,
                source: None,
            })
        }
    }
    let left = limits.timeout.saturating_sub(started.elapsed());
    send(t.with_limits(Limits {
        timeout: left.max(Duration::from_millis(1)),
        ..limits
    }))
    .await
}

/// Whether a read of the site's segments made at `read.0` answers for `named` at `now`: it is
/// fresh, and has each of their ids.
fn answers(read: &(Instant, HashSet<i64>), now: Instant, named: &[(String, i64)]) -> bool {
    now.saturating_duration_since(read.0) < FRESH_FOR
        && named.iter().all(|(_, id)| read.1.contains(id))
}

/// Every segment id of the site, its own segments (geography, device, browser) included.
async fn site_segments(t: &Transport) -> Result<HashSet<i64>> {
    let mut ids = HashSet::new();
    let mut offset = 0;
    loop {
        let query = Request::<SegmentsList> {
            limit: Some(PAGE),
            offset: Some(offset),
            segment_type: Some("all".into()),
            ..Default::default()
        };
        let listed = segments::list(t, &query).await?;
        let (n, before) = (listed.len(), ids.len());
        ids.extend(
            listed
                .iter()
                .filter_map(|s| s.segment_id.trim().parse::<i64>().ok()),
        );
        // Read on from where this page ended, whatever page size the service keeps to (the
        // spec sets none): done at an empty page, or one that added nothing (a service that
        // ignores `offset`).
        if n == 0 || ids.len() == before {
            break;
        }
        offset += n as i64;
    }
    Ok(ids)
}

/// `ids` as the service is sent them: each id in its plain digits (` 7`, `007`, `+7` as `7`),
/// which every reader of the service takes as that segment (a drip's audience compares
/// them as text); an entry that is no id left as it is, for the shape checks to refuse.
pub fn canonical(ids: &mut [String]) {
    for raw in ids {
        if let Ok(id) = crate::validate::segment_id(raw) {
            if raw.as_str() != id.to_string() {
                *raw = id.to_string();
            }
        }
    }
}

/// The segment ids `lists` give (a list's field name and its entries), each with its field's
/// path (`include_segments[2]`), as a check reads them; an entry that is no id is left to
/// the shape checks, which refuse it first.
pub fn named_ids<'a>(
    lists: impl IntoIterator<Item = (&'a str, Option<&'a [String]>)>,
) -> Vec<(String, i64)> {
    lists
        .into_iter()
        .filter_map(|(field, ids)| Some((field, ids?)))
        .flat_map(|(field, ids)| {
            ids.iter().enumerate().filter_map(move |(i, raw)| {
                let id = crate::validate::segment_id(raw).ok()?;
                Some((format!("{field}[{i}]"), id))
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_read_answers_for_its_ids_until_it_is_stale() {
        let at = Instant::now();
        let read = (at, HashSet::from([3, 7]));
        let named = named_ids([("include_segments", Some(&["7".to_string()][..]))]);
        assert_eq!(named, vec![("include_segments[0]".to_string(), 7)]);
        assert!(answers(&read, at, &named));
        assert!(answers(
            &read,
            at + FRESH_FOR - Duration::from_millis(1),
            &named
        ));
        assert!(!answers(&read, at + FRESH_FOR, &named), "stale: read again");
        let unseen = named_ids([("exclude_segments", Some(&["3".into(), "9".into()][..]))]);
        assert!(!answers(&read, at, &unseen), "an id not seen: read again");
    }

    #[test]
    fn an_entry_that_is_no_id_is_left_to_the_shape_checks() {
        let given = ["x".to_string(), "0".into(), "12".into()];
        let named = named_ids([
            ("include_segments", Some(&given[..])),
            ("exclude_segments", None),
        ]);
        assert_eq!(named, vec![("include_segments[2]".to_string(), 12)]);
    }
}
