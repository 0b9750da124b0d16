//! Product update (4.12): latest price and availability, for price-drop and back-in-stock
//! alerts.

use serde_json::{json, Value};

use super::extract::{JsonBody, SiteContext};

use crate::emulator::api_error::{ok, ApiError, ApiResult};
use crate::emulator::engine::{self, PriceChange};
use crate::emulator::state::ProductRec;
use crate::model::Product;
use crate::validate;

pub async fn update(ctx: SiteContext, JsonBody(obj): JsonBody) -> ApiResult {
    let obj = obj.map_err(ApiError::bad)?;
    let items = match obj.get("products") {
        Some(Value::Array(items)) => items,
        Some(_) => return Err(ApiError::bad("products must be an array")),
        None => return Err(ApiError::bad("The products field is required.")),
    };
    let mut products = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let p: Product = serde_json::from_value(item.clone())
            .map_err(|e| ApiError::bad(format!("products[{i}]: {e}")))?;
        products.push(p);
    }
    validate::products(&products).map_err(|v| ApiError::bad(v.message_with_field()))?;
    ctx.in_site(|s, ids, now| {
        let mut changes = Vec::with_capacity(products.len());
        for p in products {
            let key = (p.product_id.clone(), p.variant_id.clone());
            let before = s.products.get(&key).map(|r| &r.product);
            let in_stock = |p: &Product| p.availability.as_deref() != Some("outOfStock");
            changes.push(PriceChange {
                product_id: p.product_id.clone(),
                variant_id: p.variant_id.clone(),
                old_price: before.map(|b| b.price),
                new_price: p.price,
                was_in_stock: before.map(in_stock),
                in_stock: in_stock(&p),
            });
            s.products.insert(
                key,
                ProductRec {
                    product: p,
                    updated_at: now,
                },
            );
        }
        engine::on_products(s, ids, now, &changes);
    })?;
    ok(json!({"success": true}))
}
