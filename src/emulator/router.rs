//! The two interfaces' routers: each API route behind its interface's gate, and the admin
//! and inspector routes beside the main one.

use std::sync::Arc;

use axum::extract::Request;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect};
use axum::routing::{any, get, post};
use axum::Router;

use super::api_error::{ApiError, Interface};
use super::emu::Emu;
use super::gate::{self, Gate};
use super::routes::{analytics, campaigns, events, notifications, products, segments};
use super::{admin, inspector};

/// An interface's routes, behind its gate, with its answers to an unknown path (404) and to
/// a method a path does not take (405) in its error shape.
fn behind_gate(api: Router<Arc<Emu>>, emu: Arc<Emu>, iface: Interface) -> Router {
    let refuse = move |status: StatusCode, says: fn(&Request) -> String| {
        move |req: Request| {
            std::future::ready(ApiError::plain(iface, status, says(&req)).into_response())
        }
    };
    let gate = Gate {
        emu: emu.clone(),
        iface,
    };
    api.fallback(refuse(StatusCode::NOT_FOUND, |req| {
        format!("Cannot {} {}", req.method(), req.uri().path())
    }))
    .method_not_allowed_fallback(refuse(StatusCode::METHOD_NOT_ALLOWED, |req| {
        format!(
            "Method {} is not allowed on {}",
            req.method(),
            req.uri().path()
        )
    }))
    .layer(axum::middleware::from_fn_with_state(gate, gate::gate))
    .with_state(emu)
}

/// The OpenAPI documents the main interface serves under `/_emulator/`, made once at start.
#[derive(Clone)]
pub struct Documents {
    pub service: Arc<serde_json::Value>,
    pub admin: Arc<serde_json::Value>,
}

impl Documents {
    /// Both documents, naming the interfaces' roots.
    pub fn new(base_url: &str, events_url: &str) -> Documents {
        Documents {
            service: Arc::new(super::openapi::document(base_url, events_url)),
            admin: Arc::new(super::openapi::admin_document(base_url)),
        }
    }
}

/// A browser pointed at the emulator (its base URL, the admin root, the page with a trailing
/// slash) is sent to the inspector: the service has no route at any of them, and a person
/// who opens one wants the page, not `401 API KEY Invalid`.
fn to_inspector() -> axum::routing::MethodRouter<Arc<Emu>> {
    get(|| std::future::ready(Redirect::to("/_emulator/ui")))
}

/// The main interface (`/apiv1`) with the admin routes beside it.
pub fn main_router(emu: Arc<Emu>, documents: Documents) -> Router {
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
        .route("/apiv1/notifications", post(notifications::create));
    let api = behind_gate(api, emu.clone(), Interface::Main);
    let admin = Router::new()
        .route("/", to_inspector())
        .route("/_emulator", to_inspector())
        .route("/_emulator/", to_inspector())
        .route("/_emulator/ui/", to_inspector())
        .route("/_emulator/ui", get(inspector::page))
        .route("/_emulator/ui/stream", get(inspector::stream))
        .route("/_emulator/openapi.json", {
            let doc = documents.service.clone();
            get(move || std::future::ready(axum::Json(doc.as_ref().clone())))
        })
        .route("/_emulator/admin-openapi.json", {
            let doc = documents.admin.clone();
            get(move || std::future::ready(axum::Json(doc.as_ref().clone())))
        })
        .route("/_emulator/{op}", any(admin::route))
        .with_state(emu);
    admin.merge(api)
}

/// The event-tracking interface (`/api/v1`).
pub fn events_router(emu: Arc<Emu>) -> Router {
    let api = Router::new().route("/api/v1/events", post(events::track));
    behind_gate(api, emu, Interface::Events)
}
