//! `products.update`: its products read (an entry of the emulator's `products()` may be
//! given back), then sent by `crate::client::products`.

use pyo3::prelude::*;
use serde_json::Value;

use super::args::items_of;
use super::operation::{keyed_call, request, sends};
use crate::bindings::convert::to_json;
use crate::bindings::model_input::model_of;
use crate::client::{products, Error};
use crate::model::ProductUpdate;
use crate::operations::ProductsUpdate;

sends! {
    ProductsUpdate: products::update;
}

keyed_call! {
    /// `client.products.update`'s call.
    fn products_update(products) -> ProductsUpdate {
        let products = items_of(&products, "products", product_json)?
            .into_iter()
            .enumerate()
            .map(|(i, v)| model_of(v, &format!("products[{i}]")))
            .collect::<Result<_, Error>>()?;
        request::<ProductsUpdate>(ProductUpdate { products })
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(products_update, m)?)
}

/// A product update: a `Product` or its dict, or an entry of the emulator's `products()`
/// (`{product, updated_at}`), which is its product.
fn product_json(item: &Bound<'_, PyAny>, path: &str) -> Result<Value, Error> {
    let v = to_json(item, path)?;
    let recorded = v.as_object().is_some_and(|m| {
        m.get("product").is_some_and(Value::is_object)
            && m.keys()
                .all(|k| matches!(k.as_str(), "product" | "updated_at"))
    });
    Ok(match v {
        Value::Object(mut m) if recorded => m.remove("product").unwrap_or_default(),
        v => v,
    })
}
