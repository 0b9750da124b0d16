//! The caller's `utm_params` (spec 2.5) checked before the shared reader takes them: it
//! reads either of the service's two shapes leniently (the emulator takes what the service
//! would), so a caller's typo or a number would otherwise be sent as something else. Used
//! by `drips.create` and by the UTM models' constructors alike.

use crate::message;
use crate::validate::FIELD;
use serde_json::Value;

use crate::client::Error;

/// The keys of both UTM shapes of 2.5 (`enabled` aside).
pub const KEYS: [&str; 10] = [
    "utm_source",
    "utm_medium",
    "utm_campaign",
    "utm_term",
    "utm_content",
    "source",
    "medium",
    "campaign",
    "term",
    "content",
];

/// The refusal of a `utm_params` key of neither shape (a typo).
pub fn not_a_key(key: &str) -> Error {
    let field = format!("utm_params.{key}");
    Error::validation(
        field.clone(),
        message![
            FIELD,
            " is not a UTM parameter (utm_source, utm_medium, utm_campaign, utm_term, \
             utm_content)"
        ],
    )
}

/// The caller's `utm_params` holds only keys of one of the two shapes `from_either` reads,
/// with string values: the reader (shared with the emulator, which takes what the service
/// would) drops an unknown key and stringifies a number, so `utm_trem` or `utm_source=3`
/// would be sent as something the caller did not write.
pub fn check_keys(v: &Value) -> Result<(), Error> {
    let Some(obj) = v.as_object() else {
        return Ok(()); // from_either names the shape
    };
    for (key, value) in obj {
        let field = format!("utm_params.{key}");
        let fine = match key.as_str() {
            "enabled" => value.is_boolean() || value.is_null(),
            k if KEYS.contains(&k) => value.is_string() || value.is_null(),
            _ => return Err(not_a_key(key)),
        };
        if !fine {
            let kind = if key == "enabled" {
                "a boolean"
            } else {
                "a string"
            };
            return Err(Error::validation(
                field.clone(),
                message![FIELD, format!(" must be {kind}")],
            ));
        }
    }
    // One shape or the other: with both, `from_either` would keep one value of a pair.
    let long = obj.keys().any(|k| k.starts_with("utm_"));
    if let Some(short) = obj.keys().find(|k| long && KEYS[5..].contains(&k.as_str())) {
        let field = format!("utm_params.{short}");
        return Err(Error::validation(
            field.clone(),
            message![
                FIELD,
                ": use one shape, utm_source... or source..., not both"
            ],
        ));
    }
    Ok(())
}
