//! Table-driven: every command in `tests/corpus.toml` must classify exactly as labelled.

use std::collections::BTreeMap;

use nomos_policy::{Class, classify};

type Section = BTreeMap<String, Vec<String>>;

#[derive(serde::Deserialize)]
struct Corpus {
    read_only: Section,
    config_mutation: Section,
    destructive: Section,
}

pub(crate) fn cases() -> Vec<(Class, String, String)> {
    let c: Corpus = toml::from_str(include_str!("../corpus.toml")).expect("corpus parses");
    let mut out = Vec::new();
    for (class, section) in [
        (Class::ReadOnly, c.read_only),
        (Class::ConfigMutation, c.config_mutation),
        (Class::Destructive, c.destructive),
    ] {
        for (group, cmds) in section {
            for cmd in cmds {
                out.push((class, group.clone(), cmd));
            }
        }
    }
    out
}

#[test]
fn corpus_matches_exactly() {
    let cases = cases();
    assert!(
        cases.len() >= 400,
        "corpus has only {} commands",
        cases.len()
    );
    let mut failures = Vec::new();
    for (want, group, cmd) in &cases {
        let d = classify(cmd);
        if d.class != *want {
            failures.push(format!(
                "[{group}] {cmd:?}: want {want}, got {} ({}: {})",
                d.class,
                d.rule(),
                d.reason()
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} corpus commands misclassified:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}
