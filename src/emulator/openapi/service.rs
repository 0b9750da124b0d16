//! The service's document: the main interface (`/apiv1`, its `Api-Key` header and its error
//! shapes) and the event-tracking interface (`/api/v1/events` on its own base URL, with its
//! numbered errors), every operation of spec section 4.
//!
//! Form bodies list their arrays as `explode: true` form fields (`name=a&name=b`, one of the
//! three spellings the service reads); `x-pushwire-array-spellings` names the other two
//! (`name[0]`, `name[]`), which OpenAPI cannot express.

use serde_json::{json, Map, Value};

use super::shapes::{answer, at, limited, Models};
use crate::model::notification::LISTS;
use crate::model::{Meta, Product, SummaryRow};
use crate::operations::{
    DripsCreate, DripsGet, Operation, Request, Response, SegmentsList, TriggersGet,
    ANALYTICS_SUBSCRIBERS, ANALYTICS_SUMMARY, DRIPS_GET, DRIPS_LIST, EVENTS_TRACK,
    NOTIFICATIONS_CREATE, PRODUCTS_UPDATE, SEGMENTS_ADD_SUBSCRIBERS, SEGMENTS_DELETE,
    SEGMENTS_LIST, SEGMENTS_PROFILES, TRIGGERS_GET, TRIGGERS_LIST,
};
use crate::validate::{
    ACTIONS_MAX, ANALYTICS_MAX_DAYS, BROADCAST_EXPIRY_MAX_MINUTES, BROADCAST_HASHES_MAX,
    BROADCAST_PROFILE_IDS_MAX, CAMPAIGN_ALERT_EXPIRY_DEFAULT_SECONDS, CAMPAIGN_EXPIRY_MAX_SECONDS,
    DATA_KEY_MAX, DATA_PAYLOAD_MAX_BYTES, EVENT_NAME_MAX, LIMIT_DEFAULT, LIMIT_MAX, LIMIT_MIN,
    MESSAGE_MAX, MESSAGE_MAX_SCHEDULED, PAGE_DEFAULT, PAGE_MIN, RESERVED_EVENT_PREFIX,
    SCHEDULE_MAX_DAYS, SCHEDULE_MAX_MINUTES, SEGMENTS_LIMIT_MIN, SEGMENTS_OFFSET_MIN,
    SEGMENT_HASHES_MAX, TITLE_MAX, TITLE_MAX_SCHEDULED, VALID_FROM_FORMAT,
};

/// A list's item type.
trait Listed {
    type Item;
}
impl<T> Listed for Vec<T> {
    type Item = T;
}

const DATE: &str = r"^\d{4}-\d{2}-\d{2}$";
/// `valid_from_utc` as `VALID_FROM_FORMAT` writes it.
const VALID_FROM_PATTERN: &str = r"^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$";

/// The service's OpenAPI document; `base_url` and `events_url` are its two servers.
pub fn document(base_url: &str, events_url: &str) -> Value {
    let mut models = Models::new();
    // The resources as the operations declare them.
    let trigger = models.reference::<Response<TriggersGet>>();
    let drip = models.reference::<Response<DripsGet>>();
    let new_drip = models.reference::<Request<DripsCreate>>();
    let segment = models.reference::<<Response<SegmentsList> as Listed>::Item>();
    let product = models.reference::<Product>();
    let row = models.reference::<SummaryRow>();
    let meta = models.reference::<Meta>();
    let mut schemas = models.finish();
    campaign_limits(&mut schemas);
    schemas.insert("MainError".into(), main_error());
    schemas.insert("CampaignError".into(), campaign_error());
    schemas.insert("EventError".into(), event_error());

    let range = [
        date_query("analytics_start_at"),
        date_query("analytics_end_at"),
    ];
    let paging = [
        json!({"name": "page", "in": "query", "schema": limited(
            limited(json!({"type": "integer"}), "minimum", PAGE_MIN, "PAGE_MIN"),
            "default", PAGE_DEFAULT, "PAGE_DEFAULT")}),
        json!({"name": "limit", "in": "query", "schema": limited(limited(limited(
            json!({"type": "integer"}), "minimum", LIMIT_MIN, "LIMIT_MIN"),
            "maximum", LIMIT_MAX, "LIMIT_MAX"), "default", LIMIT_DEFAULT, "LIMIT_DEFAULT")}),
    ];
    let id_path = |name: &str| {
        json!({"name": name, "in": "path", "required": true,
               "schema": {"type": "integer", "minimum": 1}})
    };
    let list_of = |item: &Value| {
        success(
            json!({"data": {"type": "array", "items": item}, "meta": meta}),
            &["data"],
        )
    };

    let mut paths = Map::new();
    // Triggered campaigns and drips are read alike: a page of them, or one by its id.
    #[rustfmt::skip]
    let campaigns = [
        (&TRIGGERS_LIST, &TRIGGERS_GET, "trigger_id", "Trigger", "triggered campaign", &trigger),
        (&DRIPS_LIST, &DRIPS_GET, "drip_id", "Drip", "drip autoresponder", &drip),
    ];
    for (list, one, id, name, what, item) in campaigns {
        let mut get = |op: &Operation, op_id: String, summary: String, parameters, answer| {
            let summary = format!("{} {summary}", op.section);
            let get = main_op(&op_id, &summary, parameters, answer, true);
            paths.insert(op.path.into(), json!({ "get": get }));
        };
        get(
            list,
            format!("list{name}s"),
            format!("View all {what}s, newest first"),
            [&paging[..], &range[..]].concat(),
            list_of(item),
        );
        get(
            one,
            format!("get{name}"),
            format!("View a {what} with its notifications"),
            [&[id_path(id)][..], &range[..]].concat(),
            success(json!({"data": item}), &["data"]),
        );
    }
    let create_drip = with_body(
        main_op(
            "createDrip",
            "4.3 Create a drip autoresponder",
            vec![],
            success(
                json!({"drip_id": {"type": "integer"}, "message": {"type": "string"}}),
                &[],
            ),
            true,
        ),
        "application/json",
        new_drip,
        None,
    );
    if let Some(Value::Object(drips)) = paths.get_mut(DRIPS_LIST.path) {
        drips.insert("post".into(), create_drip);
    }
    paths.insert(SEGMENTS_LIST.path.into(), json!({"get": main_op(
        "listSegments", "4.9 View segments",
        vec![
            json!({"name": "segment_id", "in": "query", "schema": {"type": "string"}}),
            json!({"name": "limit", "in": "query", "schema": limited(
                json!({"type": "integer"}), "minimum", SEGMENTS_LIMIT_MIN, "SEGMENTS_LIMIT_MIN")}),
            json!({"name": "offset", "in": "query", "schema": limited(
                json!({"type": "integer"}), "minimum", SEGMENTS_OFFSET_MIN, "SEGMENTS_OFFSET_MIN")}),
            json!({"name": "segment_type", "in": "query", "schema": {"type": "string", "enum": ["all"]}}),
        ],
        success(json!({"segments": {"type": "array", "items": segment},
                       "count": {"type": "integer"}}), &["segments"]), false)}));
    // The membership writes: a form in, the service's message out.
    let mut form_post = |op: &Operation, id: &str, summary: &str, form: Value, arrays| {
        let summary = format!("{} {summary}", op.section);
        let post = main_op(id, &summary, vec![], message_answer(), false);
        paths.insert(
            op.path.into(),
            json!({"post": with_body(post, FORM, form, arrays)}),
        );
    };
    let segment_id = json!({"type": "integer", "minimum": 1});
    form_post(
        &SEGMENTS_ADD_SUBSCRIBERS,
        "addSegmentWithHash",
        "Add subscribers to a segment by subscriber hash",
        json!({"type": "object", "required": ["segment_id", "subscriber_hash"], "properties": {
            "segment_id": segment_id,
            "subscriber_hash": limited(
                json!({"type": "array", "items": {"type": "string"}, "minItems": 1}),
                "maxItems", SEGMENT_HASHES_MAX, "SEGMENT_HASHES_MAX"),
        }}),
        Some(&["subscriber_hash"]),
    );
    form_post(
        &SEGMENTS_DELETE,
        "deleteSegment",
        "Delete a segment",
        json!({"type": "object", "required": ["segment_id"],
               "properties": {"segment_id": segment_id}}),
        None,
    );
    form_post(
        &SEGMENTS_PROFILES,
        "updateProfiles",
        "Add or remove subscribers of a segment by profile id",
        json!({"type": "object", "required": ["segment_name", "profile_id", "operation"],
        "properties": {
            "segment_name": {"type": "string", "minLength": 1},
            "profile_id": {"type": "array", "items": {"type": "string"}, "minItems": 1},
            "operation": {"type": "string", "enum": ["add", "delete"]},
        }}),
        Some(&["profile_id"]),
    );
    paths.insert(
        ANALYTICS_SUMMARY.path.into(),
        json!({"get": main_op(
        "summaryAnalytics", "4.10 Summary analytics, one row per day, week or month",
        vec![
            json!({"name": "from", "in": "query", "required": true,
                   "schema": {"type": "string", "format": "date", "pattern": DATE}}),
            json!({"name": "to", "in": "query", "required": true,
                   "schema": {"type": "string", "format": "date", "pattern": DATE},
                   "description": format!("at most {ANALYTICS_MAX_DAYS} days after from"),
                   "x-pushwire-limit": ["ANALYTICS_MAX_DAYS"],
                   "x-pushwire-max-days": ANALYTICS_MAX_DAYS}),
            json!({"name": "group_by", "in": "query", "required": true,
                   "schema": {"type": "string", "enum": ["day", "week", "month"]}}),
        ],
        success(json!({"data": {"type": "array", "items": row}}), &["data"]), false)}),
    );
    paths.insert(ANALYTICS_SUBSCRIBERS.path.into(), json!({"get": main_op(
        "subscriberAnalytics", "4.11 Subscriber distribution by dimension",
        vec![json!({"name": "type", "in": "query", "schema": {"type": "string",
            "pattern": "^(country|state|city|device|device_type|platform)(,(country|state|city|device|device_type|platform))*$"},
            "description": "comma-separated dimensions; all of them when left out"})],
        success(json!({"data": {"type": "object", "additionalProperties":
            {"type": "object", "additionalProperties": {"type": "integer"}}}}), &["data"]),
        false)}));
    paths.insert(
        PRODUCTS_UPDATE.path.into(),
        json!({"post": with_body(
        main_op("updateProducts", "4.12 Product update (price-drop and back-in-stock alerts)",
            vec![], success(json!({}), &[]), false),
        "application/json",
        json!({"type": "object", "required": ["products"], "properties": {
            "products": {"type": "array", "items": product, "minItems": 1}}}),
        None)}),
    );
    paths.insert(
        NOTIFICATIONS_CREATE.path.into(),
        json!({"post": with_body(
        main_op("createNotification",
            "4.13 Create a push broadcast (immediate, scheduled, draft, targeted)", vec![],
            success(json!({"notification_id": {"type": "integer"},
                           "message": {"type": "string"}}), &[]), false),
        FORM, broadcast_form(), Some(&LISTS))}),
    );
    paths.insert(EVENTS_TRACK.path.into(), json!({
        "servers": [{"url": events_url, "description": "the event-tracking interface"}],
        "post": {
            "operationId": "trackEvent",
            "summary": "4.14 Track an event",
            "tags": ["events"],
            "requestBody": {"required": true, "content": {"application/json": {"schema": event_body()}}},
            "responses": {
                "200": answer("recorded", json!({"type": "object", "required": ["error_code"],
                    "properties": {"error_code": {"const": 0}, "data": {"type": "object"}}})),
                "400": answer("invalid data (code 1003), with details",
                    json!({"$ref": "#/components/schemas/EventError"})),
                "401": answer("key missing (code 401002) or not found (401000)",
                    json!({"$ref": "#/components/schemas/EventError"})),
                "500": answer("something went wrong (code 1001)",
                    json!({"$ref": "#/components/schemas/EventError"})),
            },
        },
    }));

    json!({
        "openapi": "3.1.0",
        "info": {
            "title": "Push notification service API",
            "version": "apiv1",
            "description": "Both interfaces of the service: the main interface under /apiv1 \
                (campaigns, segments, analytics, products, broadcasts) and the event-tracking \
                interface under /api/v1 on its own base URL. Generated by pushwire from the \
                code that enforces it; limits carry x-pushwire-limit, the constant they come from.",
        },
        "servers": [{"url": base_url, "description": "the main interface"}],
        "security": [{"ApiKey": []}],
        "tags": [{"name": "campaigns"}, {"name": "segments"}, {"name": "analytics"},
                 {"name": "products"}, {"name": "notifications"}, {"name": "events"}],
        "paths": paths,
        "components": {
            "schemas": schemas,
            "securitySchemes": {"ApiKey": {"type": "apiKey", "in": "header", "name": "Api-Key"}},
        },
    })
}

const FORM: &str = "application/x-www-form-urlencoded";

fn strings() -> Value {
    json!({"type": "array", "items": {"type": "string"}})
}

/// The form of 4.13.
fn broadcast_form() -> Value {
    let mut properties = Map::new();
    // A text of 1 to `max` characters, of 1 to `scheduled` in a broadcast sent later.
    let text = |max: usize, max_name, scheduled: usize, scheduled_name| {
        let now = limited(
            json!({"type": "string", "minLength": 1}),
            "maxLength",
            max,
            max_name,
        );
        limited(
            now,
            "x-pushwire-max-length-scheduled",
            scheduled,
            scheduled_name,
        )
    };
    let title = text(
        TITLE_MAX,
        "TITLE_MAX",
        TITLE_MAX_SCHEDULED,
        "TITLE_MAX_SCHEDULED",
    );
    let message = text(
        MESSAGE_MAX,
        "MESSAGE_MAX",
        MESSAGE_MAX_SCHEDULED,
        "MESSAGE_MAX_SCHEDULED",
    );
    properties.insert("notification_title".into(), title);
    properties.insert("notification_message".into(), message);
    properties.insert(
        "notification_url".into(),
        json!({"type": "string", "format": "uri"}),
    );
    properties.insert(
        "image_url".into(),
        json!({"type": "string", "format": "uri"}),
    );
    properties.insert(
        "big_image_url".into(),
        json!({"type": "string", "format": "uri"}),
    );
    properties.insert(
        "notification_type".into(),
        json!({"type": "string", "enum": ["now", "later", "draft"], "default": "now"}),
    );
    properties.insert(
        "valid_from_utc".into(),
        limited(
            json!({"type": "string", "pattern": VALID_FROM_PATTERN,
                   "description": "required when notification_type is later; the site's local time"}),
            "x-pushwire-format",
            VALID_FROM_FORMAT,
            "VALID_FROM_FORMAT",
        ),
    );
    for name in LISTS {
        properties.insert((*name).into(), strings());
    }
    let profile_ids = properties.get_mut("profile_id").expect("listed");
    *profile_ids = limited(
        profile_ids.take(),
        "maxItems",
        BROADCAST_PROFILE_IDS_MAX,
        "BROADCAST_PROFILE_IDS_MAX",
    );
    let hashes = properties.get_mut("subscriber_hash").expect("listed");
    *hashes = limited(
        hashes.take(),
        "maxItems",
        BROADCAST_HASHES_MAX,
        "BROADCAST_HASHES_MAX",
    );
    for name in ["from_date", "to_date"] {
        properties.insert(
            name.into(),
            json!({"type": "string", "minLength": 1,
            "description": "ISO 8601 date or date-time"}),
        );
    }
    properties.insert(
        "require_interaction".into(),
        json!({"type": "integer", "enum": [0, 1], "default": 1}),
    );
    properties.insert(
        "notification_expiry".into(),
        limited(
            json!({"type": "integer", "minimum": 1, "description": "minutes"}),
            "maximum",
            BROADCAST_EXPIRY_MAX_MINUTES,
            "BROADCAST_EXPIRY_MAX_MINUTES",
        ),
    );
    properties.insert(
        "attributes".into(),
        json!({"type": "string", "contentMediaType": "application/json",
               "description": "a JSON-encoded array of rule groups (spec 2.14)"}),
    );
    for i in 1..=ACTIONS_MAX {
        properties.insert(format!("multi_element_title{i}"), json!({"type": "string"}));
        properties.insert(
            format!("multi_element_url{i}"),
            json!({"type": "string", "format": "uri"}),
        );
        properties.insert(
            format!("multi_element_image{i}"),
            json!({"type": "string", "format": "uri"}),
        );
    }
    json!({
        "type": "object",
        "required": ["notification_title", "notification_message", "notification_url"],
        "properties": properties,
        "x-pushwire-limit": ["ACTIONS_MAX"],
        "x-pushwire-buttons": ACTIONS_MAX,
    })
}

/// The body of 4.14.
fn event_body() -> Value {
    let key = limited(
        json!({"type": "string", "pattern": "^[A-Za-z0-9][A-Za-z0-9_-]*$"}),
        "maxLength",
        DATA_KEY_MAX,
        "DATA_KEY_MAX",
    );
    let prefix = regex_escaped(RESERVED_EVENT_PREFIX);
    json!({
        "type": "object",
        "required": ["event_name"],
        // profile_id, else device_token_hash (an if/then: generators that cannot express
        // it still make a typed body of the properties).
        "if": {"not": {"required": ["profile_id"]}},
        "then": {"required": ["device_token_hash"]},
        "properties": {
            "event_name": limited(limited(json!({"type": "string", "minLength": 1,
                "not": {"pattern": format!("^{prefix}")}}),
                "x-pushwire-reserved-prefix", RESERVED_EVENT_PREFIX, "RESERVED_EVENT_PREFIX"),
                "maxLength", EVENT_NAME_MAX, "EVENT_NAME_MAX"),
            "profile_id": {"type": "string", "minLength": 1},
            "device_token_hash": {"type": "string", "minLength": 1},
            "data": limited(json!({
                "type": "object",
                "propertyNames": key,
                "additionalProperties": {"type": ["string", "number", "boolean"]},
                "description": format!("at most {DATA_PAYLOAD_MAX_BYTES} bytes as JSON"),
            }), "x-pushwire-max-bytes", DATA_PAYLOAD_MAX_BYTES, "DATA_PAYLOAD_MAX_BYTES"),
        },
    })
}

fn regex_escaped(text: &str) -> String {
    text.chars()
        .flat_map(|c| {
            let escape = ".^$*+?()[]{}|\\".contains(c);
            escape.then_some('\\').into_iter().chain(std::iter::once(c))
        })
        .collect()
}

/// Campaign limits written onto the model types' schemas.
fn campaign_limits(schemas: &mut Map<String, Value>) {
    if let Some(n) = schemas.get_mut("NewDripNotification") {
        let actions = at(n, &["properties", "actions"]);
        *actions = limited(actions.take(), "maxItems", ACTIONS_MAX, "ACTIONS_MAX");
        let expiry = at(n, &["properties", "expiry"]);
        *expiry = limited(
            json!({"anyOf": [expiry.take()], "minimum": 1, "description": "seconds"}),
            "maximum",
            CAMPAIGN_EXPIRY_MAX_SECONDS,
            "CAMPAIGN_EXPIRY_MAX_SECONDS",
        );
    }
    if let Some(s) = schemas.get_mut("ScheduleOptions") {
        let value = at(s, &["properties", "value"]);
        *value = limited(
            limited(
                json!({"anyOf": [value.take()],
                       "description": "a delay in the unit given: at most a year"}),
                "x-pushwire-max-minutes",
                SCHEDULE_MAX_MINUTES,
                "SCHEDULE_MAX_MINUTES",
            ),
            "x-pushwire-max-days",
            SCHEDULE_MAX_DAYS,
            "SCHEDULE_MAX_DAYS",
        );
    }
    if let Some(c) = schemas.get_mut("CampaignOptions") {
        let expiry = at(c, &["properties", "expiry"]);
        *expiry = limited(
            json!({"anyOf": [expiry.take()],
                   "description": "seconds; price-drop and back-in-stock campaigns default to \
                                   x-pushwire-default-seconds"}),
            "x-pushwire-default-seconds",
            CAMPAIGN_ALERT_EXPIRY_DEFAULT_SECONDS,
            "CAMPAIGN_ALERT_EXPIRY_DEFAULT_SECONDS",
        );
    }
}

fn date_query(name: &str) -> Value {
    json!({"name": name, "in": "query",
           "schema": {"type": "string", "format": "date", "pattern": DATE},
           "description": "YYYY-MM-DD, UTC"})
}

/// A main-interface success answer: `success` with `fields`, `required` among them.
fn success(fields: Value, required: &[&str]) -> Value {
    let mut properties = json!({"success": {"type": "boolean"}});
    if let (Some(p), Value::Object(more)) = (properties.as_object_mut(), fields) {
        p.extend(more);
    }
    let mut needed = vec!["success"];
    needed.extend_from_slice(required);
    json!({"type": "object", "required": needed, "properties": properties})
}

fn message_answer() -> Value {
    success(json!({"message": {"type": "string"}}), &["message"])
}

/// A main-interface operation; `campaign` for the campaign routes, whose 400 has their own
/// shape.
fn main_op(id: &str, summary: &str, parameters: Vec<Value>, ok: Value, campaign: bool) -> Value {
    let tag = match id {
        i if i.contains("rigger") || i.contains("rip") => "campaigns",
        i if i.contains("egment") || i.contains("rofile") => "segments",
        i if i.contains("nalytics") => "analytics",
        i if i.contains("roduct") => "products",
        _ => "notifications",
    };
    let bad = if campaign {
        "CampaignError"
    } else {
        "MainError"
    };
    json!({
        "operationId": id,
        "summary": summary,
        "tags": [tag],
        "parameters": parameters,
        "responses": {
            "200": answer("the answer", ok),
            "400": answer("the request was refused",
                json!({"$ref": format!("#/components/schemas/{bad}")})),
            "401": answer("API KEY Invalid: a missing or unknown key",
                json!({"$ref": "#/components/schemas/MainError"})),
            "500": answer("a server failure", json!({"$ref": "#/components/schemas/MainError"})),
        },
    })
}

/// `op` taking a body of `media` type with `schema`; a form's `arrays` as repeated fields.
fn with_body(mut op: Value, media: &str, schema: Value, arrays: Option<&[&str]>) -> Value {
    let mut content = json!({"schema": schema});
    if let Some(arrays) = arrays {
        let encoding: Map<String, Value> = arrays
            .iter()
            .map(|a| ((*a).to_string(), json!({"style": "form", "explode": true})))
            .collect();
        content["encoding"] = Value::Object(encoding);
        content["x-pushwire-array-spellings"] =
            json!(["name=a&name=b", "name[0]=a&name[1]=b", "name[]=a&name[]=b"]);
    }
    op["requestBody"] = json!({"required": true, "content": {media: content}});
    op
}

fn main_error() -> Value {
    json!({"type": "object", "required": ["success", "message"], "properties": {
        "success": {"const": false}, "message": {"type": "string"}}})
}

fn campaign_error() -> Value {
    json!({"type": "object", "required": ["success", "error"], "properties": {
        "success": {"const": false},
        "error": {"type": "object", "required": ["name", "message"], "properties": {
            "name": {"const": "InvalidRequestException"}, "message": {"type": "string"}}},
    }})
}

fn event_error() -> Value {
    json!({"type": "object", "required": ["error"], "properties": {"error": {
    "type": "object", "required": ["message", "code"], "properties": {
        "message": {"type": "string"},
        "code": {"type": "integer", "enum": [401002, 401000, 1003, 1001]},
        "details": {"type": "array", "items": {"type": "object",
            "required": ["message", "path"], "properties": {
                "message": {"type": "string"},
                "path": {"type": "array", "items": {"type": "string"}}}}},
    }}}})
}
