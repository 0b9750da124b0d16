//! The spec's error shapes (section 7) for both interfaces, and the success answer.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::{json, Value};

use crate::validate::Violation;

/// The two interfaces, which differ in their error shapes and authentication codes.
pub use crate::operations::Interface;

/// An error answer in the spec's shapes.
#[derive(Debug)]
pub enum ApiError {
    /// Main interface 401: `{success: false, message: "API KEY Invalid"}`.
    Unauthorized,
    /// Campaign endpoints: `{success: false, error: {name: "InvalidRequestException", message}}`.
    Campaign(StatusCode, String),
    /// Segment, notification and other main endpoints: `{success: false, message}`.
    Message(StatusCode, String),
    /// Events interface: `{error: {message, code, details?}}`.
    Events {
        status: StatusCode,
        code: u32,
        message: String,
        details: Vec<Violation>,
    },
}

impl ApiError {
    pub fn bad_campaign(v: impl std::fmt::Display) -> ApiError {
        ApiError::Campaign(StatusCode::BAD_REQUEST, v.to_string())
    }

    pub fn bad(message: impl Into<String>) -> ApiError {
        ApiError::Message(StatusCode::BAD_REQUEST, message.into())
    }

    pub fn invalid_event(details: Vec<Violation>) -> ApiError {
        ApiError::Events {
            status: StatusCode::BAD_REQUEST,
            code: 1003,
            message: "Invalid data".into(),
            details,
        }
    }

    /// A request of an earlier test: the emulator was reset since it arrived (410).
    pub fn stale(iface: Interface) -> ApiError {
        ApiError::plain(
            iface,
            StatusCode::GONE,
            "the emulator was reset while this request waited: it belongs to an earlier test",
        )
    }

    /// The plain error of `iface` for transport-level failures (bad body, 404, 413, faults).
    pub fn plain(iface: Interface, status: StatusCode, message: impl Into<String>) -> ApiError {
        let message = message.into();
        match iface {
            Interface::Main => ApiError::Message(status, message),
            Interface::Events => ApiError::Events {
                status,
                code: if status.is_server_error() { 1001 } else { 1003 },
                details: Vec::new(),
                message,
            },
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        match self {
            ApiError::Unauthorized => (
                StatusCode::UNAUTHORIZED,
                Json(json!({"success": false, "message": "API KEY Invalid"})),
            )
                .into_response(),
            ApiError::Campaign(status, message) => (
                status,
                Json(json!({
                    "success": false,
                    "error": {"name": "InvalidRequestException", "message": message},
                })),
            )
                .into_response(),
            ApiError::Message(status, message) => {
                (status, Json(json!({"success": false, "message": message}))).into_response()
            }
            ApiError::Events {
                status,
                code,
                message,
                details,
            } => {
                let mut error = json!({"message": message, "code": code});
                if !details.is_empty() {
                    error["details"] = details
                        .iter()
                        .map(|v| {
                            json!({
                                "message": v.message(),
                                "path": event_path(&v.field),
                            })
                        })
                        .collect();
                }
                (status, Json(json!({ "error": error }))).into_response()
            }
        }
    }
}

/// The `path` of an events-interface violation: `data.<key>` is `["data", key]` whatever the
/// key holds (a dot included); every other field is a top-level key of the body.
fn event_path(field: &str) -> Vec<&str> {
    match field.split_once('.') {
        Some(("data", key)) => vec!["data", key],
        _ => vec![field],
    }
}

pub type ApiResult = Result<Response, ApiError>;

/// A success body.
pub fn ok(body: Value) -> ApiResult {
    Ok(Json(body).into_response())
}
