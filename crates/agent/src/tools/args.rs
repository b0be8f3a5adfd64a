//! The argument types the tools share, how arguments are read, and how a tool's JSON schema
//! is generated from its argument struct.
//!
//! Reading is strict where a wrong value would be acted on (a missing or empty required
//! string, a wrong type, a key the schema does not offer) and lenient only where the meaning
//! is unambiguous: an integer sent as a string of digits, `null` or an empty string for an
//! optional field (absent).

use std::borrow::Cow;
use std::fmt;

use schemars::generate::SchemaSettings;
use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::de::{self, DeserializeOwned, Deserializer, Unexpected, Visitor};
use serde_json::{Map, Value};

use super::contract::ToolOutcome;

/// A required string that must say something: empty or blank is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Text(pub String);

impl Text {
    pub(crate) fn as_str(&self) -> &str {
        &self.0
    }
}

impl<'de> de::Deserialize<'de> for Text {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Text;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a non-empty string")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Text, E> {
                if v.trim().is_empty() {
                    Err(E::invalid_value(Unexpected::Str(v), &self))
                } else {
                    Ok(Text(v.to_owned()))
                }
            }
        }
        d.deserialize_str(V)
    }
}

impl JsonSchema for Text {
    fn inline_schema() -> bool {
        true
    }
    fn schema_name() -> Cow<'static, str> {
        "Text".into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({"type": "string"})
    }
}

/// An integer; a string of digits (`"2"`) is read as the number it spells.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Int(pub i64);

impl<'de> de::Deserialize<'de> for Int {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Int;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an integer")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Int, E> {
                Ok(Int(v))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Int, E> {
                i64::try_from(v)
                    .map(Int)
                    .map_err(|_| E::invalid_value(Unexpected::Unsigned(v), &self))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Int, E> {
                v.trim()
                    .parse()
                    .map(Int)
                    .map_err(|_| E::invalid_value(Unexpected::Str(v), &self))
            }
        }
        d.deserialize_any(V)
    }
}

impl JsonSchema for Int {
    fn inline_schema() -> bool {
        true
    }
    fn schema_name() -> Cow<'static, str> {
        "Int".into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({"type": "integer"})
    }
}

/// Any JSON object (entity attributes): offered as `{"type": "object"}`.
pub(crate) fn object_schema(_: &mut SchemaGenerator) -> Schema {
    json_schema!({"type": "object"})
}

/// An optional string that says something, or `None` (absent, `null` and blank alike).
pub(crate) fn given(s: &Option<String>) -> Option<&str> {
    s.as_deref().filter(|s| !s.trim().is_empty())
}

/// Reads one tool's arguments. A failure names the tool and the field, in serde's words
/// (`missing field`, `unknown field`, `invalid type`), so the model can correct the call.
pub(crate) fn parse<T: DeserializeOwned>(tool: &str, arguments: Value) -> Result<T, ToolOutcome> {
    if !arguments.is_object() {
        return Err(ToolOutcome::error(format!(
            "Invalid arguments for {tool}: they must be a JSON object matching the tool's schema."
        )));
    }
    serde_path_to_error::deserialize(arguments).map_err(|e| {
        let at = field_of(e.path());
        ToolOutcome::error(format!(
            "Invalid arguments for {tool}: {at}{}. Re-send the call with arguments matching the \
             tool's schema.",
            e.inner()
        ))
    })
}

/// "`steps[0].title`: " for an error inside a field; nothing for one about the whole object
/// (serde's own message then names the field: "missing field `x`").
pub(crate) fn field_of(path: &serde_path_to_error::Path) -> String {
    let p = path.to_string();
    if p == "." {
        String::new()
    } else {
        format!("`{p}`: ")
    }
}

/// The JSON schema the providers get for an argument struct: an object with `properties`,
/// `required` and `additionalProperties`, every subschema inline (no `$ref`/`definitions`,
/// which tool calling rejects), without the generator's `$schema`, `title`, `format`,
/// `default` and the `null` it adds for an optional field (absent is how a model leaves it
/// out).
pub(crate) fn schema_of<T: JsonSchema>() -> Value {
    let mut settings = SchemaSettings::draft07();
    settings.inline_subschemas = true;
    settings.meta_schema = None;
    let mut value = settings
        .into_generator()
        .into_root_schema_for::<T>()
        .to_value();
    tidy(&mut value);
    if let Value::Object(root) = &mut value {
        root.remove("title");
        root.remove("description");
        root.entry("properties")
            .or_insert_with(|| Value::Object(Map::new()));
        root.entry("required")
            .or_insert_with(|| Value::Array(Vec::new()));
    }
    value
}

/// Walks schema positions only (a property named `format` is a field, not a keyword).
fn tidy(schema: &mut Value) {
    let Value::Object(map) = schema else {
        return;
    };
    map.remove("format");
    map.remove("$schema");
    // serde's `default` is how a field is read, not a value to suggest to the model.
    map.remove("default");
    if let Some(Value::Array(types)) = map.get_mut("type") {
        types.retain(|t| t != "null");
        if types.len() == 1 {
            let only = types.remove(0);
            map.insert("type".to_owned(), only);
        }
    }
    if let Some(Value::Object(props)) = map.get_mut("properties") {
        props.values_mut().for_each(tidy);
    }
    for key in ["items", "additionalProperties"] {
        if let Some(sub) = map.get_mut(key) {
            tidy(sub);
        }
    }
    for key in ["anyOf", "oneOf", "allOf"] {
        if let Some(Value::Array(subs)) = map.get_mut(key) {
            subs.iter_mut().for_each(tidy);
        }
    }
}
