//! The two interfaces' routers: each API route behind its interface's gate, and the admin
//! and inspector routes beside the main one.

use std::sync::Arc;

use axum::extract::Request;
use axum::http::StatusCode;
use axum::response::IntoResponse;
use axum::routing::{any, get, post};
use axum::Router;

use super::api_error::{ApiError, Interface};
use super::emu::Emu;
use super::gate::{self, Gate};
use super::routes::{analytics, campaigns, events, notifications, products, segments};
use super::{admin, inspector};

fn fallback(
    iface: Interface,
) -> impl Fn(Request) -> std::future::Ready<axum::response::Response> + Clone {
    move |req: Request| {
        std::future::ready(
            ApiError::plain(
                iface,
                StatusCode::NOT_FOUND,
                format!("Cannot {} {}", req.method(), req.uri().path()),
            )
            .into_response(),
        )
    }
}

fn method_not_allowed(
    iface: Interface,
) -> impl Fn(Request) -> std::future::Ready<axum::response::Response> + Clone {
    move |req: Request| {
        std::future::ready(
            ApiError::plain(
                iface,
                StatusCode::METHOD_NOT_ALLOWED,
                format!(
                    "Method {} is not allowed on {}",
                    req.method(),
                    req.uri().path()
                ),
            )
            .into_response(),
        )
    }
}

/// The main interface (`/apiv1`) with the admin routes beside it.
pub fn main_router(emu: Arc<Emu>) -> Router {
    let gate = Gate {
        emu: emu.clone(),
        iface: Interface::Main,
    };
    let api = Router::new()
        .route("/apiv1/triggers", get(campaigns::list_triggers))
        .route("/apiv1/triggers/{trigger_id}", get(campaigns::get_trigger))
        .route(
            "/apiv1/drips",
            get(campaigns::list_drips).post(campaigns::create_drip),
        )
        .route("/apiv1/drips/{drip_id}", get(campaigns::get_drip))
        .route("/apiv1/segments", get(segments::list))
        .route(
            "/apiv1/segments/addSegmentWithHash",
            post(segments::add_with_hash),
        )
        .route("/apiv1/segments/delete", post(segments::delete))
        .route("/apiv1/profile", post(segments::profile))
        .route("/apiv1/analytics/summary", get(analytics::summary))
        .route(
            "/apiv1/subscribers/analytics/summary",
            get(analytics::subscribers),
        )
        .route("/apiv1/products", post(products::update))
        .route("/apiv1/notifications", post(notifications::create))
        .fallback(fallback(Interface::Main))
        .method_not_allowed_fallback(method_not_allowed(Interface::Main))
        .layer(axum::middleware::from_fn_with_state(gate, gate::gate))
        .with_state(emu.clone());
    let admin = Router::new()
        .route("/_emulator/ui", get(inspector::page))
        .route("/_emulator/ui/stream", get(inspector::stream))
        .route("/_emulator/{op}", any(admin::route))
        .with_state(emu);
    admin.merge(api)
}

/// The event-tracking interface (`/api/v1`).
pub fn events_router(emu: Arc<Emu>) -> Router {
    let gate = Gate {
        emu: emu.clone(),
        iface: Interface::Events,
    };
    Router::new()
        .route("/api/v1/events", post(events::track))
        .fallback(fallback(Interface::Events))
        .method_not_allowed_fallback(method_not_allowed(Interface::Events))
        .layer(axum::middleware::from_fn_with_state(gate, gate::gate))
        .with_state(emu)
}
