//! The Python face of the spec's resources: the model structs are pyclasses (frozen, with
//! the spec's field names as attributes and `==`); this adds construction from keywords,
//! `to_dict()`, `from_dict()`, `repr()` and pickling to each (the `Page` of list results is
//! `page.rs`'s).

use crate::message;
use crate::validate::{self, Message, FIELD};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};
use pythonize::pythonize;

use super::convert::to_json;
use super::errors::{to_pyerr, SAME};
use super::model_input::{from_json, lossy_field, unknown_field};
use crate::client::Error;
use crate::model::*;

/// `Name(field=value, ..., extra={...})`, as the model would be built: nested models by
/// their own repr, fields the spec does not list under `extra`.
fn repr_of(name: &str, model: &Bound<'_, PyAny>, dict: &Bound<'_, PyAny>) -> PyResult<String> {
    let mut parts = Vec::new();
    let extra = PyDict::new(model.py());
    // The unlisted fields are those in `extra` (for the models that have one); every other
    // key is shown under the name the constructor reads (`perPage` of `Meta` included),
    // nested models by their own repr.
    let unlisted = model.getattr("extra").ok();
    if let Ok(d) = dict.cast::<PyDict>() {
        for (k, v) in d.iter() {
            let key = k.str()?;
            if let Some(u) = &unlisted {
                if u.contains(&k)? {
                    extra.set_item(k, v)?;
                    continue;
                }
            }
            let shown = match model.getattr(&key) {
                Ok(attr) if !attr.is_callable() => attr,
                _ => v,
            };
            parts.push(format!("{key}={}", shown.repr()?));
        }
    }
    if !extra.is_empty() {
        parts.push(format!("extra={}", extra.repr()?));
    }
    Ok(format!("{name}({})", parts.join(", ")))
}

/// An object's HTML for Jupyter, drawn by `pushwire._html.render` (markup is Python's job:
/// one renderer for the models, `Page`, lists of results and `BulkResult`).
pub(super) fn html_of(obj: &Bound<'_, PyAny>) -> PyResult<String> {
    obj.py()
        .import("pushwire._html")?
        .call_method1("render", (obj,))?
        .extract()
}

/// Where a model keeps the fields the spec does not list (`extra`), for those that have it.
trait ExtraFields {
    const HAS_EXTRA: bool = false;
    fn extra_keys(&self) -> Vec<String> {
        Vec::new()
    }
}

macro_rules! without_extra {
    ($($ty:ident),* $(,)?) => {$( impl ExtraFields for $ty {} )*};
}

macro_rules! with_extra {
    ($($ty:ident),* $(,)?) => {$(
        impl ExtraFields for $ty {
            const HAS_EXTRA: bool = true;
            fn extra_keys(&self) -> Vec<String> {
                self.extra.0.keys().cloned().collect()
            }
        }
    )*};
}

/// A model built from what the caller wrote (keywords, or `from_dict` of an input model),
/// with nothing dropped or changed without a word:
/// - a key the model does not have (a typo like `lable=`) is an error: every key with a
///   value must come back when the model is serialized;
/// - a value the lenient readers would change (a bool read as a number, a fraction cut) is
///   an error (`model_input::lossy_field`);
/// - for models with `extra`, fields the spec does not list go in as `extra={...}`; any
///   other unknown keyword is a typo, although `extra` would have kept it.
fn checked<T>(py: Python<'_>, mut given: serde_json::Value, name: &str) -> PyResult<T>
where
    T: serde::Serialize + serde::de::DeserializeOwned + ExtraFields,
{
    let fail = |field: String, message: Message| {
        to_pyerr(py, crate::client::Error::validation(field, message), SAME)
    };
    let mut explicit = Vec::new();
    if T::HAS_EXTRA {
        if let Some(obj) = given.as_object_mut() {
            match obj.remove("extra") {
                None | Some(serde_json::Value::Null) => {}
                Some(serde_json::Value::Object(extra)) => {
                    for (k, v) in extra {
                        if obj.contains_key(&k) {
                            return Err(fail(
                                format!("extra.{k}"),
                                message![FIELD, " is given twice, in extra and as a keyword"],
                            ));
                        }
                        explicit.push(k.clone());
                        obj.insert(k, v);
                    }
                }
                Some(_) => return Err(fail("extra".into(), message![FIELD, " must be a dict"])),
            }
        }
    }
    // Nested models as `dataclasses.asdict()` and pydantic write them: their unlisted
    // fields under `extra`, read back as theirs.
    if let Some(obj) = given.as_object_mut() {
        obj.values_mut().for_each(unfold_extra);
    }
    if name == "Meta" {
        // Its attributes are `per_page` and `last_page`; the spec's (and `to_dict()`'s)
        // keys `perPage` and `lastPage`. Either builds it.
        if let Some(obj) = given.as_object_mut() {
            for (attr, key) in [("per_page", "perPage"), ("last_page", "lastPage")] {
                if obj.contains_key(attr) && !obj.contains_key(key) {
                    if let Some(v) = obj.remove(attr) {
                        obj.insert(key.to_string(), v);
                    }
                }
            }
        }
    }
    // UTM parameters in the service's other shape of 2.5 (`{enabled, source, ...}`), as
    // `from_dict` and the client's reads take them: compared below in the model's own shape,
    // where they would pass for an unknown field. `enabled: false` is none.
    if let Some(obj) = given.as_object_mut() {
        if obj.get("utm_params").is_some_and(other_utm_shape) {
            let utm = obj.remove("utm_params").unwrap_or_default();
            let own = if INPUT_MODELS.contains(&name) {
                // Sent: as strict as drips.create is with the same dict.
                super::utm::check_keys(&utm).map_err(|e| to_pyerr(py, e, SAME))?;
                UtmParams::from_either(&utm)
                    .map_err(|k| to_pyerr(py, validate::utm_refused(k).into(), SAME))?
            } else {
                // A result's (a test's fake of a read): its values as leniently as from_dict
                // reads them, but a key of neither shape is a typo, refused as any is.
                let typo = utm.as_object().and_then(|o| {
                    o.keys()
                        .find(|k| *k != "enabled" && !super::utm::KEYS.contains(&k.as_str()))
                });
                if let Some(key) = typo {
                    return Err(to_pyerr(py, super::utm::not_a_key(key), SAME));
                }
                crate::model::common::read_utm(utm).unwrap_or(None)
            };
            obj.insert(
                "utm_params".into(),
                own.map_or(serde_json::Value::Null, |u| {
                    serde_json::to_value(u).unwrap_or_default()
                }),
            );
        }
    }
    let audience = match name {
        "SendTo" => Some((&given, "")),
        "NewDrip" => given.get("send_to").map(|a| (a, "send_to.")),
        _ => None,
    };
    // The audience as the model reads it (`None` for a list not given), checked as a call
    // checks it: an include list given empty would send to everyone.
    let audience = audience.and_then(|(a, prefix)| {
        let typed: crate::model::SendTo = serde_json::from_value(a.clone()).ok()?;
        Some((typed.empty_include()?, prefix))
    });
    if let Some((key, prefix)) = audience {
        let field = format!("{prefix}{key}");
        let why = crate::validate::empty_filter();
        return Err(fail(field, why));
    }
    let model: T = from_json(given.clone(), "").map_err(|mut e| {
        // A value of the wrong kind at the top (`Product.from_dict("p")`) is the model's.
        if let crate::client::Error::Validation(v) = &mut e {
            if v.field.is_empty() {
                v.field = name.to_string();
            }
        }
        to_pyerr(py, e, SAME)
    })?;
    let kept = serde_json::to_value(&model).unwrap_or_default();
    if let Some((field, message)) = lossy_field(&given, &kept, "") {
        let field = if field.is_empty() {
            name.to_string()
        } else {
            field
        };
        return Err(fail(field, message));
    }
    let extra = model.extra_keys();
    // A key of extra={...} that is a field of the model would set the field, not extra.
    if let Some(k) = explicit.iter().find(|k| !extra.contains(k)) {
        return Err(fail(
            format!("extra.{k}"),
            format!("{k} is a field of {name}: pass it as {k}=, not in extra").into(),
        ));
    }
    let unknown = unknown_field(&given, &kept, "")
        .or_else(|| extra.into_iter().find(|k| !explicit.contains(k)));
    match unknown {
        None => Ok(model),
        Some(field) if T::HAS_EXTRA => Err(fail(
            field.clone(),
            format!(
                "{name} has no field {field:?} (fields the spec does not list go in \
                 extra={{...}}; from_dict() reads what to_dict() gives)"
            )
            .into(),
        )),
        Some(field) => Err(fail(
            field.clone(),
            format!("{name} has no field {field:?}").into(),
        )),
    }
}

/// Every object within `v` with an `extra` object (a nested model as `dataclasses.asdict()`
/// writes it) given that object's keys in its place, each where the object has no key of
/// that name (a field of the model is never set from `extra`).
fn unfold_extra(v: &mut serde_json::Value) {
    match v {
        serde_json::Value::Object(obj) => {
            if matches!(obj.get("extra"), Some(serde_json::Value::Object(_))) {
                if let Some(serde_json::Value::Object(inner)) = obj.remove("extra") {
                    for (k, val) in inner {
                        obj.entry(k).or_insert(val);
                    }
                }
            }
            obj.values_mut().for_each(unfold_extra);
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(unfold_extra),
        _ => {}
    }
}

/// The models a call takes as input (a drip's notifications, its audience and UTM
/// parameters, a broadcast's buttons and attribute rules, products). Their `from_dict` is as
/// strict as their keywords: `SendTo.from_dict({"include_segment": [1]})` dropping the typo
/// would make an empty audience, which sends to everyone. The result models keep reading
/// leniently, so that a field the service adds later does not break reading a response
/// (those that can carry one keep it in `extra`).
const INPUT_MODELS: &[&str] = &[
    "SendTo",
    "Action",
    "AttributeRule",
    "NewDripNotification",
    "NewDrip",
    "Product",
    "UtmParams",
    "ScheduleOptions",
];

/// UTM parameters in the service's other shape of 2.5 (`{enabled, source, ...}`): an object
/// with a key that is not a `utm_` one.
fn other_utm_shape(v: &serde_json::Value) -> bool {
    v.as_object()
        .is_some_and(|o| o.keys().any(|k| !k.starts_with("utm_")))
}

/// `UtmParams.from_dict` of the service's other shape of 2.5 (`{enabled, source, medium,
/// ...}`, as the drip sample has it): its values under the model's keys, checked as
/// `drips.create` checks the same dict. Every other model's dict is as it came.
fn service_shape(name: &str, v: serde_json::Value) -> Result<serde_json::Value, Error> {
    if !(name == "UtmParams" && other_utm_shape(&v)) {
        return Ok(v);
    }
    // The checks name fields as `drips.create`'s argument does; here they are the model's.
    let own = |e: Error| match e {
        Error::Validation(mut v) => {
            if let Some(field) = v.field.strip_prefix("utm_params.") {
                v.field = field.to_string();
            }
            Error::Validation(v)
        }
        e => e,
    };
    super::utm::check_keys(&v).map_err(own)?;
    match UtmParams::from_either(&v).map_err(|k| own(validate::utm_refused(k).into()))? {
        Some(utm) => Ok(serde_json::to_value(utm).unwrap_or_default()),
        None => Err(Error::validation(
            "enabled",
            message![
                FIELD,
                " is false: these are no UTM parameters (None stands for none)"
            ],
        )),
    }
}

macro_rules! py_models {
    ($($ty:ident),* $(,)?) => {$(
        #[pymethods]
        impl $ty {
            /// Builds the model from keywords named as the spec's fields.
            #[new]
            #[pyo3(signature = (**fields))]
            fn __new__(py: Python<'_>, fields: Option<&Bound<'_, PyDict>>) -> PyResult<Self> {
                let v = match fields {
                    Some(f) => to_json(f.as_any(), "").map_err(|e| to_pyerr(py, e, SAME))?,
                    None => serde_json::Value::Object(Default::default()),
                };
                checked(py, v, stringify!($ty))
            }

            /// The model from a dict shaped as the service sends it. For the models a call
            /// takes as input, a key the model does not have is an error, as for keywords.
            #[classmethod]
            fn from_dict(_cls: &Bound<'_, pyo3::types::PyType>, py: Python<'_>, data: &Bound<'_, PyAny>) -> PyResult<Self> {
                let v = to_json(data, "")
                    .and_then(|v| service_shape(stringify!($ty), v))
                    .map_err(|e| to_pyerr(py, e, SAME))?;
                if INPUT_MODELS.contains(&stringify!($ty)) {
                    return checked(py, v, stringify!($ty));
                }
                from_json(v, "").map_err(|e| to_pyerr(py, e, SAME))
            }

            /// A plain dict of the spec's fields (nested models as dicts).
            fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
                Ok(pythonize(py, self)?)
            }

            /// The model as the service's JSON (what `to_dict()` holds, as text).
            #[pyo3(signature = (*, indent = None))]
            fn to_json(&self, indent: Option<usize>) -> PyResult<String> {
                super::convert::json_text(self, indent)
            }

            fn __repr__(slf: &Bound<'_, Self>) -> PyResult<String> {
                repr_of(stringify!($ty), slf.as_any(), &pythonize(slf.py(), slf.get())?)
            }

            /// The model as an HTML card, for Jupyter (`pushwire._html`).
            fn _repr_html_(slf: &Bound<'_, Self>) -> PyResult<String> {
                html_of(slf.as_any())
            }

            fn __reduce__<'py>(slf: &Bound<'py, Self>, py: Python<'py>) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyTuple>)> {
                let rebuild = slf.get_type().getattr("from_dict")?;
                let dict = pythonize(py, slf.get())?;
                Ok((rebuild, PyTuple::new(py, [dict])?))
            }
        }
    )*};
}

// The models that keep unknown fields in `extra`, then every other one; `register_models`
// adds them all to the module.
macro_rules! models {
    (with extra: $($e:ident),*; without: $($p:ident),* $(,)?) => {
        with_extra!($($e),*);
        without_extra!($($p),*);
        py_models!($($e,)* $($p),*);

        fn register_models(m: &Bound<'_, PyModule>) -> PyResult<()> {
            $( m.add_class::<$e>()?; )*
            $( m.add_class::<$p>()?; )*
            m.add_function(wrap_pyfunction!(model_fields, m)?)
        }

        /// Each model's fields in their order, with their Python annotations (written in
        /// the names `pushwire._dataclass` resolves), by model name: what makes the models
        /// dataclasses to Python's tools.
        #[pyfunction(name = "_model_fields")]
        fn model_fields() -> Vec<(&'static str, Vec<(&'static str, String)>)> {
            use crate::model::annotation::Fields;
            vec![
                $( (stringify!($e), <$e as Fields>::fields()), )*
                $( (stringify!($p), <$p as Fields>::fields()), )*
            ]
        }
    };
}
models!(
    with extra: TriggeredCampaign, TriggeredNotification, Drip, DripNotification, Segment;
    without:
    Analytics,
    GoalResult,
    UtmParams,
    Action,
    ScheduleOptions,
    Meta,
    Rules,
    TriggerOptions,
    CampaignOptions,
    PriceDropThreshold,
    DripOptions,
    Audience,
    AudienceFilter,
    AudienceRule,
    NewDripNotification,
    SendTo,
    NewDrip,
    Product,
    SummaryRow,
    AttributeRule,
);

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    register_models(m)
}
