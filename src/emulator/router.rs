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
    let api = behind_gate(api_routes(Interface::Main), emu.clone(), Interface::Main);
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

/// Each operation with its handler.
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
        events: EVENTS_TRACK track;
    };
    handlers.into()
}

/// The routes of `iface`'s operations: [`handlers`] of that interface, those on one path (a
/// drip's list and its create) merged as axum wants them. `tests` below checks that every
/// operation of `operations::ALL` has its handler.
fn api_routes(iface: Interface) -> Router<Arc<Emu>> {
    let mut by_path: Vec<(&'static str, MethodRouter<Arc<Emu>>)> = Vec::new();
    for (op, handler) in handlers()
        .into_iter()
        .filter(|(op, _)| op.interface == iface)
    {
        match by_path.iter_mut().find(|(path, _)| *path == op.path) {
            Some((_, merged)) => *merged = std::mem::take(merged).merge(handler),
            None => by_path.push((op.path, handler)),
        }
    }
    by_path
        .into_iter()
        .fold(Router::new(), |api, (path, handler)| {
            api.route(path, handler)
        })
}

/// The method an operation declares, as a router filters by it.
fn method_of(op: &Operation) -> MethodFilter {
    MethodFilter::try_from(op.http_method()).expect("a method axum routes")
}

/// The event-tracking interface (`/api/v1`).
pub fn events_router(emu: Arc<Emu>) -> Router {
    behind_gate(api_routes(Interface::Events), emu, Interface::Events)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::operations::ALL;

    #[test]
    fn every_operation_has_one_handler_of_its_own_on_its_interface() {
        // Before the merge: an operation sharing its path with another has its own handler.
        let mut handled: Vec<&str> = handlers().iter().map(|(op, _)| op.name).collect();
        handled.sort_unstable();
        let mut declared: Vec<&str> = ALL.iter().map(|op| op.name).collect();
        declared.sort_unstable();
        assert_eq!(handled, declared);
    }

    /// Each declared operation reaches a handler over HTTP on its own interface, with the
    /// method it declares: not the interface's 404 for an unknown path, nor its 405.
    #[tokio::test]
    async fn every_operation_is_routed_on_its_interface_with_its_method() {
        use tower::ServiceExt;
        let emu = Arc::new(Emu::new("router-test-key"));
        for op in ALL {
            let router = match op.interface {
                Interface::Main => main_router(
                    emu.clone(),
                    Documents::new("http://127.0.0.1", "http://127.0.0.1"),
                ),
                Interface::Events => events_router(emu.clone()),
            };
            let path = op.path.replace(['{', '}'], "");
            let request = Request::builder()
                .method(op.http_method().as_str())
                .uri(&path)
                .header("host", "127.0.0.1")
                .header("api-key", "router-test-key")
                .body(axum::body::Body::empty())
                .unwrap();
            let answer = router.oneshot(request).await.unwrap();
            // Admitted by the gate (a request refused there says nothing of the route).
            assert_ne!(answer.status(), StatusCode::UNAUTHORIZED, "{}", op.name);
            assert!(
                ![StatusCode::NOT_FOUND, StatusCode::METHOD_NOT_ALLOWED].contains(&answer.status()),
                "{} {} answered {}",
                op.method,
                path,
                answer.status()
            );
        }
    }
}
