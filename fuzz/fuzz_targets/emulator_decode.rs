//! The emulator's request decoding: form bodies with indexed keys, JSON bodies and query
//! strings, through the same functions the routes call, and the spec's checks after them.
//! Nothing here may panic, whatever the bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pushwire::emulator::routes::campaigns::parse_new_drip;
use pushwire::form::Form;
use pushwire::model::{NewNotification, Product};
use pushwire::validate;

fuzz_target!(|data: &[u8]| {
    // Form bodies and query strings share one decoder.
    let form = Form::parse(data);
    if let Ok(n) = NewNotification::from_form(&form) {
        let _ = validate::broadcast(&n);
        // What the client would send for it decodes to the same request.
        let again = NewNotification::from_form(&Form::parse(n.to_form().as_bytes()));
        assert_eq!(again.as_ref().map(|a| &a.notification_title), Ok(&n.notification_title));
    }
    let _ = validate::segment_hashes(&form.list("subscriber_hash"));
    let _ = validate::summary_query(form.get("from"), form.get("to"), form.get("group_by"));
    let _ = validate::subscriber_dimensions(form.get("type"));
    if let Some(id) = form.get("segment_id") {
        let _ = validate::segment_id(id);
    }
    // JSON bodies: events, drips, products.
    if let Ok(serde_json::Value::Object(obj)) = serde_json::from_slice::<serde_json::Value>(data) {
        let _ = validate::event(&obj);
        if let Ok(drip) = parse_new_drip(obj.clone()) {
            let _ = validate::drip(&drip);
        }
        if let Some(serde_json::Value::Array(items)) = obj.get("products") {
            let products: Vec<Product> = items
                .iter()
                .filter_map(|i| serde_json::from_value(i.clone()).ok())
                .collect();
            let _ = validate::products(&products);
        }
    }
});
