//! The pieces both documents are built of: a limit marked with the constant it comes from,
//! and the model types' schemas, as JSON Schema 2020-12 (the dialect of OpenAPI 3.1) with
//! their definitions under `#/components/schemas/`.

use schemars::generate::SchemaSettings;
use schemars::{JsonSchema, SchemaGenerator};
use serde_json::{json, Map, Value};

/// `schema` with `keyword: value`, marked as the limit `name` of `validate::limits`.
pub fn limited(mut schema: Value, keyword: &str, value: impl Into<Value>, name: &str) -> Value {
    if let Value::Object(map) = &mut schema {
        map.insert(keyword.into(), value.into());
        let names = map
            .entry("x-pushwire-limit")
            .or_insert_with(|| Value::Array(Vec::new()));
        if let Value::Array(names) = names {
            names.push(json!(name));
        }
    }
    schema
}

/// The model types' schemas: `reference::<T>()` gives a `$ref` to `T`'s, and `finish` every
/// definition made meanwhile.
pub struct Models {
    generator: SchemaGenerator,
}

impl Models {
    pub fn new() -> Models {
        let settings = SchemaSettings::draft2020_12().with(|s| {
            s.definitions_path = "/components/schemas".into();
        });
        Models {
            generator: settings.into_generator(),
        }
    }

    pub fn reference<T: JsonSchema>(&mut self) -> Value {
        self.generator.subschema_for::<T>().to_value()
    }

    /// The definitions, each editable before they go into the document.
    pub fn finish(mut self) -> Map<String, Value> {
        self.generator.take_definitions(true).into_iter().collect()
    }
}

/// The object at `path` (property names) below `schema`, made if missing.
pub fn at<'a>(schema: &'a mut Value, path: &[&str]) -> &'a mut Value {
    let mut here = schema;
    for key in path {
        here = here
            .as_object_mut()
            .map(|m| m.entry(key.to_string()).or_insert_with(|| json!({})))
            .expect("an object");
    }
    here
}

/// A JSON answer of `status` with `schema`.
pub fn answer(description: &str, schema: Value) -> Value {
    json!({
        "description": description,
        "content": {"application/json": {"schema": schema}}
    })
}
