//! The product catalogue of the price-drop and inventory campaigns (4.12).

use super::violation::FIELD;
use crate::message;
use crate::model::Product;

use super::violation::{required, Check, Violation};

pub fn products(products: &[Product]) -> Check {
    if products.is_empty() {
        return Err(Violation::new(
            "products",
            message![FIELD, " must not be empty"],
        ));
    }
    for (i, p) in products.iter().enumerate() {
        required(&format!("products[{i}]."), &[("product_id", &p.product_id)])?;
        if !p.price.is_finite() || p.price < 0.0 {
            return Err(Violation::new(
                format!("products[{i}].price"),
                "price must be a number not below 0",
            ));
        }
        if let Some(a) = &p.availability {
            if a != "inStock" && a != "outOfStock" {
                return Err(Violation::new(
                    format!("products[{i}].availability"),
                    "availability must be inStock or outOfStock",
                ));
            }
        }
    }
    Ok(())
}
