//! Product update (4.12).

use super::error::Result;
use super::transport::{Ack, Body, Call, Transport};
use crate::operations::{Declared, ProductsUpdate, Request, Response};
use crate::validate;

/// Sends the latest price and availability. Not retried once sent: each update may fire
/// price-drop or back-in-stock alerts.
pub async fn update(
    t: &Transport,
    update: &Request<ProductsUpdate>,
) -> Result<Response<ProductsUpdate>> {
    let products = &update.products;
    validate::products(products)?;
    let body = serde_json::to_vec(&serde_json::json!({ "products": products })).unwrap_or_default();
    let call = Call::to(ProductsUpdate::OPERATION, Body::Json(body.into()));
    let _: Ack = t.send(&call).await?;
    Ok(())
}
