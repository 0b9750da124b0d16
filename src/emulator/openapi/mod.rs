//! The OpenAPI 3.1 documents of the service (both interfaces) and of the emulator's admin
//! API, built from the code that enforces them: the request and answer shapes are the model
//! types' JSON Schemas (derived by schemars from their serde attributes), every limit is a
//! constant of `validate::limits` (each marked `x-pushwire-limit` with the constant's name,
//! so a test finds every limit in the document), and the routes are those `router` serves.

mod admin;
mod service;
mod shapes;

pub use admin::admin_document;
pub use service::document;

#[cfg(test)]
mod tests {
    use crate::operations::ALL;

    /// The document's operations are the declared ones: each declared operation under its
    /// path with its method, and nothing else.
    #[test]
    fn the_document_describes_every_declared_operation_and_no_other() {
        let doc = super::document("http://127.0.0.1:1", "http://127.0.0.1:2");
        let mut described: Vec<(String, String)> = doc["paths"]
            .as_object()
            .unwrap()
            .iter()
            .flat_map(|(path, item)| {
                // A path item's other keys (`servers`, `parameters`) are no operation.
                let methods = item.as_object().unwrap().keys().filter(|k| {
                    [
                        "get", "put", "post", "delete", "options", "head", "patch", "trace",
                    ]
                    .contains(&k.as_str())
                });
                methods.map(move |m| (m.to_uppercase(), path.clone()))
            })
            .collect();
        described.sort();
        let mut declared: Vec<(String, String)> = ALL
            .iter()
            .map(|op| (op.method.to_string(), op.path.to_string()))
            .collect();
        declared.sort();
        declared.dedup();
        assert_eq!(described, declared);
    }
}
