//! What a failed check returns: the field by the spec's parameter name and the service's
//! message for it, whose mentions of fields are kept as fields, so that each edge names them
//! its own way (the spec's names in the emulator and to a Rust caller, the Python arguments'
//! in the extension) without rewriting the words.

use std::borrow::Cow;

/// A piece of a violation's message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Part {
    /// Words, shown as they are.
    Text(Cow<'static, str>),
    /// The violation's own field, by the name the edge showing it gives it.
    Own,
    /// Another field of the same request (`to` in "from must not be after to").
    Field(&'static str),
}

/// The violation's own field in a [`message!`](crate::message).
pub const FIELD: Part = Part::Own;

/// Another field of the request, by its spec name, in a [`message!`](crate::message).
pub const fn field(name: &'static str) -> Part {
    Part::Field(name)
}

impl From<&'static str> for Part {
    fn from(s: &'static str) -> Self {
        Part::Text(Cow::Borrowed(s))
    }
}

impl From<String> for Part {
    fn from(s: String) -> Self {
        Part::Text(Cow::Owned(s))
    }
}

/// A violation's message: words and the fields they name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message(Vec<Part>);

impl Message {
    pub fn new(parts: Vec<Part>) -> Self {
        Message(parts)
    }
}

impl From<&'static str> for Message {
    fn from(s: &'static str) -> Self {
        Message(vec![Part::from(s)])
    }
}

impl From<String> for Message {
    fn from(s: String) -> Self {
        Message(vec![Part::from(s)])
    }
}

/// A message of words and fields: `message![FIELD, " must not be after ", field("to")]`.
#[macro_export]
macro_rules! message {
    ($($part:expr),+ $(,)?) => {
        $crate::validate::Message::new(vec![$($crate::validate::Part::from($part)),+])
    };
}

/// One failed check: the field by its spec name (a path such as `send_to.include_segments[2]`
/// where it is inside a list or an object) and the service's message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    pub field: String,
    message: Message,
}

impl Violation {
    /// A failure of `field`. A message that names a field, its own or another, names it as a
    /// [`Part`] (`message![FIELD, " must be an integer"]`), never in its words: the client
    /// shows it by the Python argument's name, which may differ (`start` for `from`).
    pub fn new(field: impl Into<String>, message: impl Into<Message>) -> Self {
        let v = Violation {
            field: field.into(),
            message: message.into(),
        };
        debug_assert!(
            !v.words_name_own_field(),
            "{:?} names its field {:?} in words: use message![..., FIELD, ...]",
            v.message,
            v.field
        );
        v
    }

    /// The message with the spec's names, as the service answers it.
    pub fn message(&self) -> String {
        self.write(&|f| f.to_string(), false)
    }

    /// The message with the spec's names, after the field's path when it does not name the
    /// field.
    pub fn message_with_field(&self) -> String {
        self.write(&|f| f.to_string(), true)
    }

    /// The message with each field as `name` names it (given a spec name or path), after the
    /// field's name when it does not name the field.
    pub fn message_named(&self, name: &dyn Fn(&str) -> String) -> String {
        self.write(name, true)
    }

    /// The message with each field as `name` names it, without the field's name before it:
    /// the words of the message alone, for an error that names its field apart.
    pub fn words_named(&self, name: &dyn Fn(&str) -> String) -> String {
        self.write(name, false)
    }

    fn write(&self, name: &dyn Fn(&str) -> String, with_field: bool) -> String {
        let parts = &self.message.0;
        // A message that names no field may still hold the field's path in its words
        // further on ("Malformed JSON body: ..."), which says where it is as well.
        let names_own = parts.iter().any(|p| match p {
            Part::Own => true,
            Part::Field(f) => *f == self.field,
            Part::Text(t) => t.contains(self.field.as_str()),
        });
        let mut out = String::new();
        if with_field && !names_own {
            out.push_str(&name(&self.field));
            out.push_str(": ");
        }
        for part in parts {
            match part {
                Part::Text(t) => out.push_str(t),
                Part::Own => out.push_str(&name(&self.field)),
                Part::Field(f) => out.push_str(&name(f)),
            }
        }
        out
    }

    /// Whether the message opens with the field's path in words (`"to must ..."`,
    /// `"The to field ..."`, `"\"to\" is ..."`): a mention the edges could not rename, what
    /// [`Violation::new`] refuses in debug builds. Words further on may say anything.
    fn words_name_own_field(&self) -> bool {
        let Some(Part::Text(t)) = self.message.0.first() else {
            return false;
        };
        let opening = t.strip_prefix("The ").or(t.strip_prefix('"')).unwrap_or(t);
        !self.field.is_empty()
            && opening
                .strip_prefix(self.field.as_str())
                .is_some_and(|rest| {
                    !rest.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_')
                })
    }
}

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.field, self.message())
    }
}

pub(super) type Check<T = ()> = Result<T, Violation>;

/// Texts the spec requires, by name: the first one blank (empty or only spaces) fails as
/// `{name} is required`, under the field `{prefix}{name}`.
pub(super) fn required(prefix: &str, texts: &[(&str, &str)]) -> Check {
    match texts.iter().find(|(_, text)| text.trim().is_empty()) {
        Some((name, _)) if prefix.is_empty() => Err(Violation::new(
            name.to_string(),
            crate::message![FIELD, " is required"],
        )),
        // The message names the entry's field alone; the path comes before it.
        Some((name, _)) => Err(Violation::new(
            format!("{prefix}{name}"),
            format!("{name} is required"),
        )),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_edge_names_the_fields_its_own_way_and_only_the_fields() {
        let v = Violation::new(
            "from",
            crate::message![
                FIELD,
                " must not be after ",
                field("to"),
                " (\"from\" as quoted)"
            ],
        );
        let python = |f: &str| match f {
            "from" => "start".to_string(),
            "to" => "end".to_string(),
            other => other.to_string(),
        };
        assert_eq!(
            v.message(),
            "from must not be after to (\"from\" as quoted)"
        );
        assert_eq!(
            v.message_named(&python),
            "start must not be after end (\"from\" as quoted)"
        );
        let plain = Violation::new("notification_title", "The Title field is required.");
        let strip = |f: &str| f.trim_start_matches("notification_").to_string();
        assert_eq!(plain.message(), "The Title field is required.");
        assert_eq!(
            plain.message_with_field(),
            "notification_title: The Title field is required."
        );
        assert_eq!(
            plain.message_named(&strip),
            "title: The Title field is required."
        );
    }

    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "names its field")]
    fn a_message_opening_with_its_field_in_words_is_refused() {
        Violation::new("to", "The to field is required.");
    }

    #[test]
    fn words_further_on_and_longer_words_are_no_mention() {
        let v = Violation::new("type", "types must be dimensions of a type");
        let named = v.message_named(&|f| format!("<{f}>"));
        assert_eq!(named, "types must be dimensions of a type");
    }
}
