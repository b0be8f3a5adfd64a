//! The labelled corpus as one flat list of commands, shared by the benchmark and the
//! profiling example.

use std::collections::BTreeMap;

#[derive(serde::Deserialize)]
struct Corpus {
    read_only: BTreeMap<String, Vec<String>>,
    config_mutation: BTreeMap<String, Vec<String>>,
    destructive: BTreeMap<String, Vec<String>>,
}

/// Every command of `tests/corpus.toml`, class by class.
pub fn commands() -> Vec<String> {
    let c: Corpus =
        toml::from_str(include_str!("../../tests/corpus.toml")).expect("the corpus parses");
    [c.read_only, c.config_mutation, c.destructive]
        .into_iter()
        .flat_map(|s| s.into_values().flatten())
        .collect()
}
