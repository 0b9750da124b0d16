//! `products.update`: its products read (an entry of the emulator's `products()` may be
//! given back), then sent by `crate::client::products`.

use pyo3::prelude::*;
use pyo3::types::PyTuple;
use serde_json::Value;

use super::args::{arg, items_of};
use super::output::Output;
use crate::bindings::convert::to_json;
use crate::bindings::model_input::model_of;
use crate::client::{products, Error, Transport};
use crate::model::Product;

/// `products.update(products)`.
pub struct Call(Vec<Product>);

/// Reads the arguments, in the order the Python wrapper passes them.
pub fn parse(args: &Bound<'_, PyTuple>) -> Result<Call, Error> {
    Ok(Call(
        items_of(&arg(args, 0), "products", product_json)?
            .into_iter()
            .enumerate()
            .map(|(i, v)| model_of(v, &format!("products[{i}]")))
            .collect::<Result<_, Error>>()?,
    ))
}

impl Call {
    pub async fn run(self, t: &Transport) -> Result<Output, Error> {
        products::update(t, &self.0).await?;
        Ok(Output::Nothing)
    }
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
