#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeSet;

use serde::de::{self, Deserialize, Deserializer, Visitor};
use serde_json::{Map, Value, json};

use super::{Tool, specs};

// ---- the fields serde reads, independent of schemars ---------------------------------------

/// A deserializer that only records the field list a derived struct asks for.
struct FieldProbe<'a>(&'a mut &'static [&'static str]);

#[derive(Debug)]
struct Probed;

impl std::fmt::Display for Probed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("probed")
    }
}
impl std::error::Error for Probed {}
impl de::Error for Probed {
    fn custom<T: std::fmt::Display>(_: T) -> Self {
        Probed
    }
}

impl<'de> Deserializer<'de> for FieldProbe<'_> {
    type Error = Probed;
    fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Probed> {
        Err(Probed)
    }
    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        fields: &'static [&'static str],
        _: V,
    ) -> Result<V::Value, Probed> {
        *self.0 = fields;
        Err(Probed)
    }
    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        option unit unit_struct newtype_struct seq tuple tuple_struct map enum identifier
        ignored_any
    }
}

/// The field names a derived `Deserialize` struct reads (after serde's renames).
pub(super) fn struct_fields<'de, T: Deserialize<'de>>() -> &'static [&'static str] {
    let mut fields: &'static [&'static str] = &[];
    let _ = T::deserialize(FieldProbe(&mut fields));
    fields
}

// ---- the registry ---------------------------------------------------------------------------

fn schema(tool: Tool) -> Map<String, Value> {
    match tool.parameters() {
        Value::Object(m) => m,
        other => panic!("{}: schema is not an object: {other}", tool.name()),
    }
}

fn properties(tool: Tool) -> Map<String, Value> {
    schema(tool)["properties"].as_object().unwrap().clone()
}

fn required(tool: Tool) -> BTreeSet<String> {
    schema(tool)["required"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn every_tool_has_a_unique_name_a_description_and_is_found_by_its_name() {
    let mut names = BTreeSet::new();
    for &tool in Tool::ALL {
        assert!(names.insert(tool.name()), "{} listed twice", tool.name());
        assert!(
            tool.description().len() > 20,
            "{}: description too thin",
            tool.name()
        );
        assert_eq!(Tool::from_name(tool.name()), Some(tool));
    }
    assert_eq!(Tool::from_name("format_disk"), None);
    let offered: Vec<String> = specs().into_iter().map(|s| s.name).collect();
    let listed: Vec<String> = Tool::ALL.iter().map(|t| t.name().to_owned()).collect();
    assert_eq!(offered, listed);
}

#[test]
fn every_schema_is_what_tool_calling_accepts() {
    fn no_refs(tool: &str, v: &Value) {
        match v {
            Value::Object(m) => {
                for key in ["$ref", "$defs", "definitions", "$schema"] {
                    assert!(!m.contains_key(key), "{tool}: {key} in {v}");
                }
                m.values().for_each(|c| no_refs(tool, c));
            }
            Value::Array(a) => a.iter().for_each(|c| no_refs(tool, c)),
            _ => {}
        }
    }
    for &tool in Tool::ALL {
        let s = schema(tool);
        assert_eq!(s["type"], "object", "{}", tool.name());
        assert!(s["properties"].is_object(), "{}", tool.name());
        assert!(s["required"].is_array(), "{}", tool.name());
        assert_eq!(s["additionalProperties"], false, "{}", tool.name());
        no_refs(tool.name(), &Value::Object(s));
        // Every property is a schema with a JSON type (or an enum of strings).
        for (name, p) in properties(tool) {
            assert!(
                p.get("type").is_some_and(Value::is_string),
                "{}.{name}: {p}",
                tool.name()
            );
        }
    }
}

#[test]
fn every_schema_offers_exactly_the_fields_its_struct_reads() {
    for &tool in Tool::ALL {
        let props: BTreeSet<String> = properties(tool).keys().cloned().collect();
        let fields: BTreeSet<String> = tool.fields().iter().map(|f| (*f).to_owned()).collect();
        assert_eq!(props, fields, "{}", tool.name());
        assert!(required(tool).is_subset(&props), "{}", tool.name());
    }
}

/// The schemas and descriptions the model reads are today's, word for word: a change to them
/// is a change to this file, reviewed as such.
#[test]
fn the_specs_sent_to_providers_match_the_reviewed_copy() {
    let reviewed: Value =
        serde_json::from_str(include_str!("../../tests/data/tool_specs.json")).unwrap();
    let generated: Vec<Value> = specs()
        .into_iter()
        .map(|t| json!({"name": t.name, "description": t.description, "parameters": t.parameters}))
        .collect();
    let reviewed = reviewed.as_array().unwrap();
    assert_eq!(generated.len(), reviewed.len());
    for (g, r) in generated.iter().zip(reviewed) {
        assert_eq!(g, r, "{}", r["name"]);
    }
}

// ---- malformed arguments, for every tool ------------------------------------------------------

/// A value the schema accepts: the first enum value, the minimum, one item, the required keys.
fn example(s: &Value) -> Value {
    if let Some(values) = s.get("enum").and_then(Value::as_array) {
        return values[0].clone();
    }
    match s["type"].as_str().unwrap() {
        "string" => json!("x"),
        "integer" => s.get("minimum").cloned().unwrap_or(json!(1)),
        "array" => json!([example(&s["items"])]),
        "object" => Value::Object(
            s.get("required")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .map(|k| {
                    let k = k.as_str().unwrap();
                    (k.to_owned(), example(&s["properties"][k]))
                })
                .collect(),
        ),
        other => panic!("no example for type {other}"),
    }
}

/// Values of the wrong type for a property, each with what it is.
fn wrong_types(s: &Value) -> Vec<Value> {
    if s.get("enum").is_some() {
        return vec![json!("no_such_value"), json!(3), json!(["x"])];
    }
    match s["type"].as_str().unwrap() {
        "string" => vec![json!(42), json!(true), json!(["x"]), json!({"a": "b"})],
        "integer" => vec![json!(true), json!("two"), json!(1.5), json!([1]), json!({})],
        "array" => vec![json!("x"), json!(1), json!({"a": 1})],
        "object" => vec![json!("x"), json!(1), json!([1])],
        other => panic!("no wrong type for {other}"),
    }
}

fn with(base: &Value, key: &str, value: Value) -> Value {
    let mut v = base.clone();
    v[key] = value;
    v
}

fn without(base: &Value, key: &str) -> Value {
    let mut v = base.clone();
    v.as_object_mut().unwrap().remove(key);
    v
}

fn refused(tool: Tool, args: &Value, must_name: &str) {
    let err = tool
        .check_arguments(args.clone())
        .expect_err(&format!("{} accepted {args}", tool.name()));
    assert!(
        err.contains(tool.name()) && err.contains(must_name),
        "{}: error for {args} does not name `{must_name}`: {err}",
        tool.name()
    );
}

#[test]
fn well_formed_arguments_are_accepted_by_every_tool() {
    for &tool in Tool::ALL {
        let s = Value::Object(schema(tool));
        let minimal = example(&s);
        tool.check_arguments(minimal.clone())
            .unwrap_or_else(|e| panic!("{}: {minimal}: {e}", tool.name()));
        // Every optional field too, and each left out as null (read as absent).
        let mut full = minimal.clone();
        for (name, p) in properties(tool) {
            full[&name] = example(&p);
        }
        tool.check_arguments(full.clone())
            .unwrap_or_else(|e| panic!("{}: {full}: {e}", tool.name()));
        for name in properties(tool).keys() {
            if !required(tool).contains(name) {
                let nulled = with(&minimal, name, Value::Null);
                tool.check_arguments(nulled.clone())
                    .unwrap_or_else(|e| panic!("{}: {nulled}: {e}", tool.name()));
            }
        }
    }
}

#[test]
fn malformed_arguments_are_refused_naming_the_field_for_every_tool() {
    for &tool in Tool::ALL {
        let s = Value::Object(schema(tool));
        let base = example(&s);
        let required = required(tool);
        for (name, p) in properties(tool) {
            for wrong in wrong_types(&p) {
                refused(tool, &with(&base, &name, wrong), &name);
            }
            if required.contains(&name) {
                refused(tool, &without(&base, &name), &name);
                refused(tool, &with(&base, &name, Value::Null), &name);
                if p["type"] == "string" && p.get("enum").is_none() {
                    for blank in ["", "   ", "\n\t"] {
                        refused(tool, &with(&base, &name, json!(blank)), &name);
                    }
                }
            }
        }
        for extra in ["bogus_field", "Command", "arguments"] {
            if !properties(tool).contains_key(extra) {
                refused(tool, &with(&base, extra, json!("x")), extra);
            }
        }
        for not_an_object in [json!(null), json!([]), json!("run it"), json!(5)] {
            refused(tool, &not_an_object, "JSON object");
        }
    }
}

#[test]
fn integers_sent_as_digits_are_read_as_numbers() {
    for (tool, args) in [
        (Tool::UpdatePlanStep, json!({"seq": "2", "status": "done"})),
        (
            Tool::UpdatePlanStep,
            json!({"seq": " 3 ", "status": "running"}),
        ),
        (Tool::GetKnowledgeContent, json!({"id": "17"})),
        (Tool::CancelExecution, json!({"id": 4})),
        (
            Tool::Run,
            json!({"target": "host:local", "command": "ls", "reason": "r", "step": "1"}),
        ),
    ] {
        tool.check_arguments(args.clone())
            .unwrap_or_else(|e| panic!("{args}: {e}"));
    }
    for bad in ["2a", "", "1.0", "99999999999999999999"] {
        refused(
            Tool::UpdatePlanStep,
            &json!({"seq": bad, "status": "done"}),
            "seq",
        );
    }
}

#[test]
fn enum_arguments_name_the_values_they_accept() {
    for (tool, args, names) in [
        (
            Tool::UpdatePlanStep,
            json!({"seq": 1, "status": "finished"}),
            "`running`, `done`, `failed`, `skipped`",
        ),
        (
            Tool::CompleteTask,
            json!({"outcome": "ok", "summary": "s"}),
            "`success`, `partial`, `failed`",
        ),
        (
            Tool::UpsertKnowledge,
            json!({"kind": "memo", "title": "t", "body": "b"}),
            "`investigation`, `document`, `runbook`, `note`",
        ),
    ] {
        let err = tool.check_arguments(args).unwrap_err();
        assert!(err.contains(names), "{err}");
    }
}

#[test]
fn plan_steps_are_checked_one_by_one() {
    let tool = Tool::ProposePlan;
    // A bare string is a step's title, as before.
    tool.check_arguments(json!({"steps": ["Read the kernel name"]}))
        .unwrap();
    tool.check_arguments(json!({"steps": [
        {"title": "Read", "target": "host:local", "detail": "uname -s"},
        {"title": "Write back", "target": null, "detail": ""}
    ]}))
    .unwrap();
    for (steps, names) in [
        (json!([{}]), "title"),
        (json!([{"target": "host:local"}]), "title"),
        (json!([{"title": ""}]), "title"),
        (json!([{"title": "  "}]), "title"),
        (json!([""]), "non-empty"),
        (json!([{"title": 5}]), "title"),
        (json!([{"title": "a", "target": 5}]), "target"),
        (json!([{"title": "a", "host": "web-01"}]), "host"),
        (json!([{"title": "a"}, 7]), "steps[1]"),
        (json!([{"title": "a"}, null]), "steps[1]"),
        (json!([{"title": "a"}, [1]]), "steps[1]"),
        (json!({"title": "a"}), "steps"),
    ] {
        refused(tool, &json!({ "steps": steps }), names);
    }
}
