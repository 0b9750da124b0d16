//! Each model's fields with their Python types, for the glue to describe a model to Python's
//! own tools: `dataclasses.fields`, `typing.get_type_hints`, pydantic and FastAPI, polars'
//! schema inference (`pushwire._dataclass`). `model!` implements [`Fields`] for every model
//! from the fields as written, so a field's type is stated once, in its struct.

/// A field type as a Python annotation reads, in the names `pushwire._dataclass` resolves
/// (`typing`'s `Optional` and `Any`, `datetime`, builtins, the models by name).
pub trait Annotation {
    fn annotation() -> String;
}

/// [`Annotation`] for each type by the Python name given (the model's own types, `Extra`,
/// `Json` and `Timestamp`, say theirs where they are defined).
macro_rules! annotated {
    ($($ty:ty => $name:literal),* $(,)?) => {$(
        impl $crate::model::annotation::Annotation for $ty {
            fn annotation() -> String {
                $name.to_string()
            }
        }
    )*};
}

pub(crate) use annotated;

annotated!(i64 => "int", f64 => "float", bool => "bool", String => "str");

impl<T: Annotation> Annotation for Option<T> {
    fn annotation() -> String {
        format!("Optional[{}]", T::annotation())
    }
}

impl<T: Annotation> Annotation for Vec<T> {
    fn annotation() -> String {
        format!("list[{}]", T::annotation())
    }
}

/// A model's fields in their order: each one's Python name and annotation.
pub trait Fields {
    fn fields() -> Vec<(&'static str, String)>;
}

/// A field's Python name: its Rust name without a raw identifier's `r#` (`r#type`).
pub fn field_name(rust: &'static str) -> &'static str {
    rust.strip_prefix("r#").unwrap_or(rust)
}
