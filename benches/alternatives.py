"""One trigger campaign of the list (spec 2.1) as the alternatives of `make bench`'s case 4
declare it: the fields written once, the dataclasses and the msgspec structs made from them,
and the list answer's msgspec struct (benches/run.py)."""

from __future__ import annotations

import dataclasses
from typing import Any, Optional

import msgspec

# One trigger campaign of the list (spec 2.1), as both alternatives declare it: the fields
# written once, the dataclasses and the msgspec structs made from them.
ANALYTICS_FIELDS = [
    ("views", int),
    ("clicks", int),
    ("sentcount", int),
    ("unsubscribed", int),
    ("ctr", float),
]
RULES_FIELDS = [("start_event_name", str), ("stop_event_name", str)]
CAMPAIGN_FIELDS = [
    ("trigger_id", int),
    ("campaign_name", str),
    ("campaign_type", str),
    ("status", str),
    ("site_id", int),
    ("created_at_utc", str),
    ("updated_at_utc", str),
    ("daily_trigger_limit", int),
    ("weekly_trigger_limit", int),
]


def campaign_fields(rules: type, analytics: type) -> list[tuple[Any, ...]]:
    """The campaign's fields, its nested objects of the alternative's own types; the two
    optional objects default to None."""
    optional = Optional[dict[str, Any]]
    return [
        *CAMPAIGN_FIELDS,
        ("rules", rules),
        ("analytics", analytics),
        ("options", optional, None),
        ("utm_params", optional, None),
    ]


DAnalytics = dataclasses.make_dataclass("DAnalytics", ANALYTICS_FIELDS)
DRules = dataclasses.make_dataclass("DRules", RULES_FIELDS)
DCampaign = dataclasses.make_dataclass("DCampaign", campaign_fields(DRules, DAnalytics))


def to_dataclass(d: dict[str, Any]) -> DCampaign:
    return DCampaign(
        trigger_id=d["trigger_id"],
        campaign_name=d["campaign_name"],
        campaign_type=d["campaign_type"],
        status=d["status"],
        site_id=d["site_id"],
        created_at_utc=d["created_at_utc"],
        updated_at_utc=d["updated_at_utc"],
        daily_trigger_limit=d["daily_trigger_limit"],
        weekly_trigger_limit=d["weekly_trigger_limit"],
        rules=DRules(**d["rules"]),
        analytics=DAnalytics(
            **{
                k: d["analytics"][k]
                for k in ("views", "clicks", "sentcount", "unsubscribed", "ctr")
            }
        ),
        options=d.get("options"),
        utm_params=d.get("utm_params"),
    )


MAnalytics = msgspec.defstruct("MAnalytics", ANALYTICS_FIELDS)
MRules = msgspec.defstruct("MRules", RULES_FIELDS)
MCampaign = msgspec.defstruct("MCampaign", campaign_fields(MRules, MAnalytics))


class MMeta(msgspec.Struct):
    total: int
    page: int
    perPage: int  # noqa: N815 - the service's name
    lastPage: int  # noqa: N815


class MList(msgspec.Struct):
    success: bool
    data: list[MCampaign]
    meta: MMeta
