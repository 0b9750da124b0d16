//! [`model!`], the one header every model struct carries.

/// Declares a model struct: serde both ways, `Clone`, `Debug`, `Default` and `PartialEq`,
/// and with the `python` feature a frozen class of `pushwire._core` whose fields are
/// read-only attributes (in the order written) and whose `==` compares them. The struct
/// also reads leniently where it is a field (see below), as [`lenient::or_default`] does.
///
/// A field marked `#[lenient]` is read with its type's reader ([`lenient::Lenient`]: an
/// integer, a float or a string as the service may spell it, a nested model or a list with
/// `null` as empty), is its default when missing, and, when it is an absent optional one,
/// is left out when written. Every other attribute, doc comments included, is kept as
/// written.
///
/// [`lenient::or_default`]: super::lenient::or_default
/// [`lenient::Lenient`]: super::lenient::Lenient
macro_rules! model {
    ($(#[$meta:meta])* pub struct $name:ident { $($fields:tt)* }) => {
        $crate::model::macros::model!(@field [$(#[$meta])* $name] [] [] [] $($fields)*);
    };
    // The fields written so far, the `(name, type)` pairs of those, then the attributes of
    // the next field, gathered in the third list until its name.
    (@field $head:tt [$($done:tt)*] $pairs:tt [$($attrs:tt)*] #[lenient] $($rest:tt)*) => {
        $crate::model::macros::model!(@field $head [$($done)*] $pairs [$($attrs)*
            #[serde(
                default,
                deserialize_with = "crate::model::lenient::Lenient::read",
                skip_serializing_if = "crate::model::lenient::Lenient::absent"
            )]
        ] $($rest)*);
    };
    (@field $head:tt [$($done:tt)*] $pairs:tt [$($attrs:tt)*] #[$attr:meta] $($rest:tt)*) => {
        $crate::model::macros::model!(@field $head [$($done)*] $pairs [$($attrs)* #[$attr]]
            $($rest)*);
    };
    (@field $head:tt [$($done:tt)*] [$($pairs:tt)*] [$($attrs:tt)*]
        pub $field:ident: $ty:ty, $($rest:tt)*) => {
        $crate::model::macros::model!(@field $head [$($done)* $($attrs)* pub $field: $ty,]
            [$($pairs)* ($field, $ty)] [] $($rest)*);
    };
    (@field [$(#[$meta:meta])* $name:ident] [$($done:tt)*] [$(($f:ident, $t:ty))*] []) => {
        #[cfg_attr(
            feature = "python",
            pyo3::pyclass(frozen, get_all, eq, from_py_object, module = "pushwire._core")
        )]
        #[cfg_attr(feature = "emulator", derive(schemars::JsonSchema))]
        #[derive(serde::Serialize, serde::Deserialize, Clone, Debug, Default, PartialEq)]
        $(#[$meta])*
        pub struct $name {
            $($done)*
        }

        impl $crate::model::lenient::Lenient for $name {
            fn read<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                $crate::model::lenient::or_default(d)
            }
        }

        #[cfg(feature = "python")]
        impl $crate::model::annotation::Annotation for $name {
            fn annotation() -> String {
                stringify!($name).to_string()
            }
        }

        #[cfg(feature = "python")]
        impl $crate::model::annotation::Fields for $name {
            fn fields() -> Vec<(&'static str, String)> {
                vec![$((
                    $crate::model::annotation::field_name(stringify!($f)),
                    <$t as $crate::model::annotation::Annotation>::annotation(),
                )),*]
            }
        }
    };
}

pub(crate) use model;
