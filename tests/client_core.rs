//! The Rust client core against the emulator, over real HTTP on loopback, with no Python.
//!
//! `cargo test` runs these on the build machine; `make cross` runs the same binary built
//! for Windows under wine, where they are the only check that the client core (reqwest,
//! rustls, tokio's sockets) and the emulator work on that platform's networking.

use pushwire::client::{self, Config, Error, Transport};
use pushwire::emulator::{self, admin, Server};
use pushwire::model::{
    NewDrip, NewDripNotification, NewNotification, ScheduleOptions, SegmentHashes, SegmentsQuery,
    SendTo,
};
use serde_json::{json, Map, Value};

const KEY: &str = "core-test-key-123";

fn emulator() -> Server {
    let server = Server::start(emulator::Config {
        api_key: KEY.into(),
        ..emulator::Config::default()
    })
    .expect("the emulator binds two loopback ports");
    for (hash, profile) in [("hash-alice", "alice"), ("hash-bob", "bob")] {
        admin::dispatch(
            server.emu(),
            "add_subscriber",
            json!({"subscriber_hash": hash, "profile_id": profile, "country": "US"}),
        )
        .expect("seeded");
    }
    server
}

fn transport(server: &Server, key: &str) -> Transport {
    let mut cfg = Config::new(
        key,
        &format!("{}/apiv1", server.base_url()),
        &format!("{}/api/v1", server.events_url()),
    );
    cfg.max_retries = 0;
    Transport::new(&cfg).expect("transport")
}

/// The emulator's log of API requests, oldest first: (method, path).
fn logged(server: &Server) -> Vec<(String, String)> {
    let out = admin::dispatch(server.emu(), "requests", json!({})).expect("requests");
    let rows = match &out {
        Value::Array(rows) => rows.clone(),
        Value::Object(m) => m["data"].as_array().cloned().unwrap_or_default(),
        other => panic!("unexpected requests answer {other}"),
    };
    rows.iter()
        .map(|r| {
            (
                r["method"].as_str().unwrap_or_default().to_string(),
                r["path"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

/// A broadcast to everyone, "Half price today", under `title`.
fn broadcast(title: &str) -> NewNotification {
    NewNotification {
        notification_title: Some(title.into()),
        notification_message: Some("Half price today".into()),
        notification_url: Some("https://shop.example/sale".into()),
        ..NewNotification::default()
    }
}

#[tokio::test]
async fn a_broadcast_reaches_the_emulator_and_is_delivered_to_its_subscribers() {
    let server = emulator();
    let t = transport(&server, KEY);
    let id = client::notifications::create(&t, &broadcast("Sale"))
        .await
        .expect("created");
    assert!(id > 0, "the service's id, got {id}");

    let sent = admin::dispatch(server.emu(), "broadcasts", json!({})).expect("broadcasts");
    let text = sent.to_string();
    assert!(text.contains("Half price today"), "{text}");
    assert_eq!(
        logged(&server),
        vec![("POST".to_string(), "/apiv1/notifications".to_string())]
    );
}

#[tokio::test]
async fn segments_and_events_round_trip_through_both_interfaces() {
    let server = emulator();
    let made =
        admin::dispatch(server.emu(), "create_segment", json!({"name": "vip"})).expect("segment");
    let vip = made["segment_id"].as_i64().expect("segment id");
    let t = transport(&server, KEY);

    let add = SegmentHashes {
        segment_id: vip.to_string(),
        subscriber_hash: vec!["hash-alice".to_string()],
    };
    client::segments::add_subscribers(&t, &add)
        .await
        .expect("added");
    let segments = client::segments::list(&t, &SegmentsQuery::default())
        .await
        .expect("listed");
    assert_eq!(segments.len(), 1);
    assert_eq!(segments[0].segment_name, "vip");

    let mut event = Map::new();
    event.insert("event_name".into(), json!("cart_abandoned"));
    event.insert("profile_id".into(), json!("alice"));
    client::events::track(&t, &event).await.expect("tracked");
    let events = admin::dispatch(server.emu(), "events", json!({})).expect("events");
    assert!(events.to_string().contains("cart_abandoned"), "{events}");
}

#[tokio::test]
async fn a_wrong_key_is_refused_by_the_service_and_never_echoed() {
    let server = emulator();
    let wrong = "not-the-key-987654";
    let t = transport(&server, wrong);
    let err = client::segments::list(&t, &SegmentsQuery::default())
        .await
        .expect_err("refused");
    match &err {
        Error::Api(f) => assert_eq!(f.status, 401, "{f:?}"),
        other => panic!("expected the service's refusal, got {other:?}"),
    }
    assert!(!format!("{err} {err:?}").contains(wrong), "{err:?}");
}

#[tokio::test]
async fn bad_input_is_refused_before_anything_is_sent() {
    let server = emulator();
    let t = transport(&server, KEY);
    let err = client::notifications::create(&t, &broadcast(&"x".repeat(1000)))
        .await
        .expect_err("too long");
    match &err {
        Error::Validation(v) => assert_eq!(v.field, "notification_title", "{v:?}"),
        other => panic!("expected a validation error, got {other:?}"),
    }
    assert_eq!(logged(&server), Vec::new(), "nothing reached the service");
}

#[tokio::test]
async fn an_include_list_given_empty_is_refused_not_sent_to_everyone() {
    let server = emulator();
    let t = transport(&server, KEY);
    let field_of = |err: Error| match err {
        Error::Validation(v) => v.field,
        other => panic!("expected a validation error, got {other:?}"),
    };
    // A broadcast: an empty include list is refused, an empty exclusion excludes no one.
    type Emptied = fn(&mut NewNotification) -> &mut Option<Vec<String>>;
    let lists: [(&str, Emptied); 2] = [
        ("include_segments", |n| &mut n.include_segments),
        ("subscriber_hash", |n| &mut n.subscriber_hash),
    ];
    for (field, list) in lists {
        let mut to_none = broadcast("Sale");
        *list(&mut to_none) = Some(Vec::new());
        let err = client::notifications::create(&t, &to_none)
            .await
            .expect_err(field);
        assert_eq!(field_of(err), field);
    }
    assert_eq!(logged(&server), Vec::new(), "nothing reached the service");
    let mut excluding_no_one = broadcast("Sale");
    excluding_no_one.exclude_segments = Some(Vec::new());
    client::notifications::create(&t, &excluding_no_one)
        .await
        .expect("sent");

    // A drip: the same, in its audience.
    let drip = |send_to: SendTo| NewDrip {
        campaign_name: "Welcome".into(),
        notifications: vec![NewDripNotification {
            title: "Hi".into(),
            message: "Welcome aboard".into(),
            url: "https://shop.example/".into(),
            image_url: "https://shop.example/i.png".into(),
            big_image_url: "https://shop.example/b.png".into(),
            require_interaction: Some(0),
            expiry: Some(86_400),
            schedule_options: ScheduleOptions {
                r#type: "rightaway".into(),
                ..ScheduleOptions::default()
            },
            actions: Vec::new(),
        }],
        send_to: Some(send_to),
        utm_params: None,
    };
    let empty = drip(SendTo {
        include_countries: Some(Vec::new()),
        ..SendTo::default()
    });
    let err = client::drips::create(&t, &empty).await.expect_err("empty");
    assert_eq!(field_of(err), "send_to.include_countries");
    assert_eq!(
        logged(&server).len(),
        1,
        "only the broadcast reached the service"
    );
    let us = drip(SendTo {
        include_countries: Some(vec!["US".into()]),
        ..SendTo::default()
    });
    client::drips::create(&t, &us).await.expect("created");
}

#[tokio::test]
async fn an_unreachable_service_is_a_connection_error_not_a_hang() {
    // A port that was free a moment ago: nothing listens there now.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let mut cfg = Config::new(KEY, &format!("http://127.0.0.1:{port}/apiv1"), "");
    cfg.max_retries = 0;
    let t = Transport::new(&cfg).expect("transport");
    let err = client::segments::list(&t, &SegmentsQuery::default())
        .await
        .expect_err("nothing listens");
    assert!(matches!(err, Error::Connection { .. }), "{err:?}");
    // The transport's own error is kept below it, down to the refused connect.
    let source = std::error::Error::source(&err).expect("a source");
    let http = source
        .downcast_ref::<reqwest::Error>()
        .expect("reqwest's error");
    assert!(http.is_connect(), "{http:?}");
}

#[tokio::test]
async fn an_error_carries_its_answers_headers_whatever_its_status() {
    let server = emulator();
    let t = transport(&server, KEY);
    for (status, body) in [
        (503, Value::Null),
        (
            200,
            json!({"success": false, "message": "Account suspended"}),
        ),
    ] {
        let mut fault = json!({"path": "/apiv1/segments", "status": status,
                               "headers": {"X-Request-Id": format!("gw-{status}")}});
        if !body.is_null() {
            fault["body"] = body;
        }
        admin::dispatch(server.emu(), "inject_fault", fault).expect("armed");
        let err = client::segments::list(&t, &SegmentsQuery::default())
            .await
            .expect_err("refused");
        let Error::Api(failure) = err else {
            panic!("expected the service's refusal, got {err:?}")
        };
        assert_eq!(failure.status, status);
        let ids: Vec<&str> = failure
            .headers
            .iter()
            .filter(|(n, _)| n == "x-request-id")
            .map(|(_, v)| v.as_str())
            .collect();
        assert_eq!(ids, vec![format!("gw-{status}").as_str()], "{failure:?}");
    }
}
