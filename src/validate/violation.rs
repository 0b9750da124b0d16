//! What a failed check returns: the field by the spec's parameter name and the service's
//! message for it.

/// One failed check: the field by its spec name and the service's message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    pub field: String,
    pub message: String,
}

impl Violation {
    pub fn new(field: impl Into<String>, message: impl Into<String>) -> Self {
        Violation {
            field: field.into(),
            message: message.into(),
        }
    }
}

impl Violation {
    /// The message, prefixed by the field's path when the message does not name it.
    pub fn message_with_field(&self) -> String {
        if self.message.contains(&self.field) {
            self.message.clone()
        } else {
            format!("{}: {}", self.field, self.message)
        }
    }
}

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.field, self.message)
    }
}

pub(super) type Check<T = ()> = Result<T, Violation>;

/// Texts the spec requires, by name: the first one blank (empty or only spaces) fails as
/// `{name} is required`, under the field `{prefix}{name}`.
pub(super) fn required(prefix: &str, texts: &[(&str, &str)]) -> Check {
    match texts.iter().find(|(_, text)| text.trim().is_empty()) {
        Some((name, _)) => Err(Violation::new(
            format!("{prefix}{name}"),
            format!("{name} is required"),
        )),
        None => Ok(()),
    }
}
