//! The two interfaces' routers: each API route behind its interface's gate, and the admin
//! and inspector routes beside the main one.

use std::sync::Arc;

use axum::extract::Request;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect};
use axum::routing::{any, get, on, MethodFilter, MethodRouter};
use axum::Router;

use super::api_error::{ApiError, Interface};
use super::emu::Emu;
use super::gate::{self, Gate};
use super::routes::{analytics, campaigns, events, notifications, products, segments};
use super::{admin, inspector};
use crate::operations::{
    Operation, ANALYTICS_SUBSCRIBERS, ANALYTICS_SUMMARY, DRIPS_CREATE, DRIPS_GET, DRIPS_LIST,
    EVENTS_TRACK, NOTIFICATIONS_CREATE, PRODUCTS_UPDATE, SEGMENTS_ADD_SUBSCRIBERS, SEGMENTS_DELETE,
    SEGMENTS_LIST, SEGMENTS_PROFILES, TRIGGERS_GET, TRIGGERS_LIST,
};

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
    // One path may serve two operations (a drip's list and its create): their handlers
    // are merged by path as axum wants them. `tests` below checks that every operation of
    // `operations::ALL` has its route here.
    let mut api = Router::new();
    for (op, handler) in main_handlers() {
        api = api.route(op.path, handler);
    }
    let api = behind_gate(api, emu.clone(), Interface::Main);
    let admin = Router::new()
        .route("/", to_inspector())
        .route("/_emulator", to_inspector())
        .route("/_emulator/", to_inspector())
        .route("/_emulator/ui/", to_inspector())
        .route("/_emulator/ui", get(inspector::page))
        .route("/_emulator/ui/stream", get(inspector::stream))
        .route("/_emulator/ui/{file}", get(inspector::file))
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

/// The handlers of the main interface, by module: each operation with its function, which
/// answers the method the operation declares.
macro_rules! handlers {
    ($($module:ident: $($op:ident $function:ident),+;)*) => {
        [$($((&$op, on(method_of(&$op), $module::$function)),)+)*]
    };
}

/// Each operation of the main interface with its handler.
fn handlers() -> Vec<(&'static Operation, MethodRouter<Arc<Emu>>)> {
    #[rustfmt::skip]
    let handlers = handlers! {
        campaigns: TRIGGERS_GET get_trigger, TRIGGERS_LIST list_triggers, DRIPS_CREATE create_drip,
            DRIPS_LIST list_drips, DRIPS_GET get_drip;
        segments: SEGMENTS_ADD_SUBSCRIBERS add_with_hash, SEGMENTS_DELETE delete,
            SEGMENTS_PROFILES profile, SEGMENTS_LIST list;
        analytics: ANALYTICS_SUMMARY summary, ANALYTICS_SUBSCRIBERS subscribers;
        products: PRODUCTS_UPDATE update;
        notifications: NOTIFICATIONS_CREATE create;
    };
    handlers.into()
}

/// [`handlers`], those on one path merged.
fn main_handlers() -> Vec<(&'static Operation, MethodRouter<Arc<Emu>>)> {
    let mut out: Vec<(&'static Operation, MethodRouter<Arc<Emu>>)> = Vec::new();
    for (op, handler) in handlers() {
        match out.iter_mut().find(|(o, _)| o.path == op.path) {
            Some((_, merged)) => *merged = std::mem::take(merged).merge(handler),
            None => out.push((op, handler)),
        }
    }
    out
}

/// The method an operation declares, as a router filters by it.
fn method_of(op: &Operation) -> MethodFilter {
    MethodFilter::try_from(op.http_method()).expect("a method axum routes")
}

/// The event-tracking interface (`/api/v1`).
pub fn events_router(emu: Arc<Emu>) -> Router {
    let api = Router::new().route(
        EVENTS_TRACK.path,
        on(method_of(&EVENTS_TRACK), events::track),
    );
    behind_gate(api, emu, Interface::Events)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::operations::ALL;

    #[test]
    fn every_operation_of_the_main_interface_has_its_handler() {
        // Before the merge: an operation sharing its path with another has its own handler.
        let handled: Vec<&str> = handlers().iter().map(|(op, _)| op.name).collect();
        for op in ALL.iter().filter(|op| op.interface == Interface::Main) {
            assert!(handled.contains(&op.name), "{} has no handler", op.name);
        }
    }
}
