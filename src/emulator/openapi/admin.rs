//! The admin API's document: `/_emulator/{op}` for each operation of `admin::ops`, its
//! arguments a JSON object (or the query string), its answer JSON or `{"error": ...}` with 400.

use serde_json::{json, Map, Value};

use crate::emulator::admin::operations;

/// The emulator's admin API as an OpenAPI document, served from `base_url`.
pub fn admin_document(base_url: &str) -> Value {
    let mut paths = Map::new();
    let error = json!({"type": "object", "required": ["error"],
                       "properties": {"error": {"type": "string"}}});
    for (name, reads) in operations() {
        let op = |method: &str| {
            let mut op = json!({
                "operationId": format!("{name}_{method}"),
                "summary": if reads { "reads the emulator's state" } else { "changes the emulator's state" },
                "responses": {
                    "200": {"description": "the operation's answer",
                            "content": {"application/json": {"schema": {}}}},
                    "400": {"description": "bad arguments",
                            "content": {"application/json": {"schema": error}}},
                    "401": {"description": "the emulator asks for its admin token (--admin-token)",
                            "content": {"application/json": {"schema": error}}},
                    "403": {"description": "refused: a Host the emulator does not answer, or a \
                                            browser's cross-site write",
                            "content": {"application/json": {"schema": error}}},
                },
            });
            if method == "post" {
                op["requestBody"] = json!({"required": false, "content": {"application/json":
                    {"schema": {"type": "object", "additionalProperties": true}}}});
            }
            op
        };
        // The route takes any method; GET (arguments in the query) and POST are documented.
        let item = json!({"get": op("get"), "post": op("post")});
        paths.insert(format!("/_emulator/{name}"), item);
    }
    // The routes of documents and of the inspector: a GET each, answering one media type.
    #[rustfmt::skip]
    let pages = [
        ("openapi.json", "openapi", "the service's OpenAPI document", "OpenAPI 3.1", "application/json", "object"),
        ("admin-openapi.json", "admin_openapi", "this document", "OpenAPI 3.1", "application/json", "object"),
        ("ui", "inspector", "the inspector page", "HTML", "text/html", "string"),
        ("ui/stream", "inspector_stream", "the inspector's change stream", "server-sent events", "text/event-stream", "string"),
    ];
    for (path, id, summary, answer, media, kind) in pages {
        let content = json!({media: {"schema": {"type": kind}}});
        let get = json!({"operationId": id, "summary": summary,
                         "responses": {"200": {"description": answer, "content": content}}});
        paths.insert(format!("/_emulator/{path}"), json!({"get": get}));
    }
    json!({
        "openapi": "3.1.0",
        "info": {
            "title": "pushwire emulator admin API",
            "version": env!("CARGO_PKG_VERSION"),
            "description": "The emulator's controls under /_emulator/: each operation takes its \
                arguments as a JSON object body or as query parameters, and answers JSON, or \
                {\"error\": ...} with 400. \
                Generated from the emulator's table of operations.",
        },
        "servers": [{"url": base_url}],
        // Only an emulator started with --admin-token asks for it.
        "security": [{}, {"AdminToken": []}],
        "components": {"securitySchemes": {"AdminToken": {
            "type": "http", "scheme": "bearer",
            "description": "the --admin-token the emulator was started with, if any \
                            (X-Pushwire-Admin-Token works too)"}}},
        "paths": paths,
    })
}
