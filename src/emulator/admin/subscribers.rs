//! Subscribers and segments: seed one, many (rows or columns) or a generated population,
//! bring a device on- or offline, unsubscribe, list; create segments and list their members.

use serde_json::{json, Value};

use super::args::{flag, str_arg, Args, Page};
use super::{population, seed};
use crate::emulator::emu::{Emu, Pinned};
use crate::emulator::engine;
use crate::emulator::state::{iso, Counters, SegmentRec, SubscriberHash};

pub(super) fn add_subscriber(emu: &Emu, site: Pinned, mut args: Args) -> Result<Value, String> {
    args.remove("api_key");
    let new = seed::subscriber_of(&args)?;
    let hashes = emu
        .with_site(site, |s, ids, now| seed::add_batch(s, ids, now, vec![new]))?
        .map_err(|e| e.strip_prefix("row 0: ").map_or(e.clone(), str::to_string))?;
    Ok(json!({"subscriber_hash": hashes.first()}))
}

/// `add_subscribers`: rows or columns, all added or none.
pub(super) fn add_subscribers(emu: &Emu, site: Pinned, args: Args) -> Result<Value, String> {
    if let Some(k) = args
        .keys()
        .find(|k| !["api_key", "rows", "columns", "hashes"].contains(&k.as_str()))
    {
        return Err(format!(
            "{k} is not an argument of add_subscribers (rows or columns, and hashes)"
        ));
    }
    let answer_hashes = flag(&args, "hashes")?;
    let batch = seed::read_batch(&args)?;
    let hashes = emu.with_site(site, |s, ids, now| seed::add_batch(s, ids, now, batch))??;
    Ok(if answer_hashes {
        json!({"added": hashes.len(), "subscriber_hashes": hashes})
    } else {
        json!({"added": hashes.len()})
    })
}

pub(super) fn generate_subscribers(emu: &Emu, site: Pinned, args: Args) -> Result<Value, String> {
    let population = population::Population::of(&args)?;
    let added = emu.with_site(site, |s, ids, now| population.add_to(s, ids, now))??;
    Ok(json!({"added": added}))
}

pub(super) fn set_online(emu: &Emu, site: Pinned, args: Args) -> Result<Value, String> {
    let hash = str_arg(&args, "subscriber_hash")?.ok_or("subscriber_hash is required")?;
    let online = args
        .get("online")
        .and_then(Value::as_bool)
        .ok_or("online must be true or false")?;
    emu.with_site(site, |s, _, now| engine::set_online(s, &hash, online, now))?
        .then_some(json!({}))
        .ok_or_else(|| format!("subscriber {hash} does not exist"))
}

pub(super) fn unsubscribe(emu: &Emu, site: Pinned, args: Args) -> Result<Value, String> {
    let hash = str_arg(&args, "subscriber_hash")?.ok_or("subscriber_hash is required")?;
    emu.with_site(site, |s, _, now| {
        let sub = s
            .subscriber_mut(&hash)
            .ok_or_else(|| format!("subscriber {hash} does not exist"))?;
        sub.unsubscribed_at.get_or_insert(now);
        Ok(json!({"unsubscribed_at": iso(now)}))
    })?
}

pub(super) fn subscribers(emu: &Emu, site: Pinned, args: Args) -> Result<Value, String> {
    let hash = str_arg(&args, "subscriber_hash")?;
    let paged = args.contains_key("limit") || args.contains_key("offset");
    let page = Page::of_args(&args)?;
    let meta = flag(&args, "meta")?;
    emu.with_site(site, |s, _, _| match hash {
        Some(h) => s
            .subscriber(&h)
            .map(|sub| json!(sub))
            .ok_or_else(|| format!("subscriber {h} does not exist")),
        // The page sliced where it lies: no list of ten million made to page.
        None if paged || meta => Ok(page.of_slice(&s.subscribers, meta)),
        None => Ok(json!(s.subscribers)),
    })?
}

/// The page of the site's subscribers a `subscribers` read asks for (`offset`, `limit`),
/// copied out of the site so that what is made of them is made after the lock is let go.
pub(super) fn subscriber_rows(
    emu: &Emu,
    site: Pinned,
    args: &Args,
) -> Result<Vec<crate::emulator::state::Subscriber>, String> {
    if let Some(k) = args
        .keys()
        .find(|k| !["api_key", "offset", "limit"].contains(&k.as_str()))
    {
        return Err(format!("{k} is not an argument of a page of subscribers"));
    }
    let page = Page::of_args(args)?;
    emu.with_site(site, |s, _, _| page.slice(&s.subscribers).to_vec())
}

pub(super) fn create_segment(emu: &Emu, site: Pinned, args: Args) -> Result<Value, String> {
    let name = str_arg(&args, "name")?.ok_or("name is required")?;
    let kind = str_arg(&args, "segment_type")?.unwrap_or_else(|| "custom".into());
    let id = emu.with_site(site, |s, ids, now| {
        let segment_id = Counters::next(&mut ids.segment);
        s.segments.push(SegmentRec {
            segment_id,
            segment_name: name,
            segment_type: kind,
            created_at: now,
        });
        segment_id
    })?;
    Ok(json!({"segment_id": id}))
}

pub(super) fn segments(emu: &Emu, site: Pinned, args: Args) -> Result<Value, String> {
    // `members: false`: each segment's count without its list (the inspector's names).
    let with_members = match args.get("members") {
        None | Some(Value::Null) => true,
        Some(Value::Bool(b)) => *b,
        Some(_) => return Err("members must be true or false".into()),
    };
    emu.with_site(site, |s, _, _| {
        let members = |id: i64| -> Vec<&SubscriberHash> {
            s.index()
                .members(id)
                .map(|at| &s.subscribers[at].subscriber_hash)
                .collect()
        };
        Value::Array(
            s.segments
                .iter()
                .map(|seg| {
                    let mut v = json!(seg);
                    v["member_count"] = json!(s.index().member_count(seg.segment_id));
                    if with_members {
                        v["members"] = json!(members(seg.segment_id));
                    }
                    v
                })
                .collect(),
        )
    })
}
