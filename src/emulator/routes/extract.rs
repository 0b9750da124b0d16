//! What a route takes from its request, read the same way by every route: the site it acts
//! on ([`SiteContext`]), and its form, JSON object or query string. A body or query that
//! cannot be read is handed to the route as the reason, for it to refuse in its own error
//! shape.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::request::Parts;
use axum::http::StatusCode;
use chrono::{DateTime, Utc};
use serde_json::{Map, Value};

use crate::emulator::api_error::{ApiError, Interface};
use crate::emulator::emu::{Admitted, Emu};
use crate::emulator::request::{form_body, json_object, query};
use crate::emulator::state::{Counters, Site};
use crate::form::Form;

/// The emulator and the site the gate authenticated the request as.
pub struct SiteContext {
    pub emu: Arc<Emu>,
    pub site: Admitted,
}

impl SiteContext {
    /// Runs the route's work on its site ([`Emu::in_site`]).
    pub fn in_site<R>(
        &self,
        f: impl FnOnce(&mut Site, &mut Counters, DateTime<Utc>) -> R,
    ) -> Result<R, ApiError> {
        self.emu.in_site(self.site, f)
    }
}

impl FromRequestParts<Arc<Emu>> for SiteContext {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut Parts,
        emu: &Arc<Emu>,
    ) -> Result<SiteContext, ApiError> {
        // The gate puts it in every request it lets through to a route.
        let site = parts.extensions.get::<Admitted>().copied().ok_or_else(|| {
            ApiError::plain(
                Interface::Main,
                StatusCode::INTERNAL_SERVER_ERROR,
                "the request did not pass the gate",
            )
        })?;
        Ok(SiteContext {
            emu: emu.clone(),
            site,
        })
    }
}

/// The whole body, as the gate read it within its cap.
async fn body_of<S: Send + Sync>(req: Request, state: &S) -> Result<Bytes, ApiError> {
    Bytes::from_request(req, state)
        .await
        .map_err(|e| ApiError::plain(Interface::Main, e.status(), e.body_text()))
}

/// The body as a form ([`form_body`]), or why it is not one.
pub struct FormBody(pub Result<Form, String>);

impl<S: Send + Sync> FromRequest<S> for FormBody {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<FormBody, ApiError> {
        let headers = req.headers().clone();
        let body = body_of(req, state).await?;
        Ok(FormBody(form_body(&headers, &body).await))
    }
}

/// The body as a JSON object ([`json_object`]), or why it is not one.
pub struct JsonBody(pub Result<Map<String, Value>, String>);

impl<S: Send + Sync> FromRequest<S> for JsonBody {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<JsonBody, ApiError> {
        let headers = req.headers().clone();
        let body = body_of(req, state).await?;
        Ok(JsonBody(json_object(&headers, &body)))
    }
}

/// The query string as a form ([`query`]), or why it cannot be read.
pub struct QueryForm(pub Result<Form, String>);

impl<S: Send + Sync> FromRequestParts<S> for QueryForm {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<QueryForm, Self::Rejection> {
        Ok(QueryForm(query(&parts.uri)))
    }
}
