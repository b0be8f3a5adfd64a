//! Assertions shared by the classifier's test families: every failure names the command
//! with the rule and reason of its decision.

use nomos_policy::{Class, classify};

/// The commands of `cmds` that classify `read_only`, with why.
fn read_only_of(cmds: &[String]) -> Vec<(String, String)> {
    cmds.iter()
        .map(|c| (c.clone(), classify(c)))
        .filter(|(_, d)| d.class == Class::ReadOnly)
        .map(|(c, d)| (c, format!("{}: {}", d.rule(), d.reason())))
        .collect()
}

/// Every command asks (a family that generated nothing fails too).
pub fn assert_all_ask(cmds: &[String]) {
    assert!(!cmds.is_empty(), "the family is empty");
    let open = read_only_of(cmds);
    assert!(open.is_empty(), "read_only: {open:#?}");
}

/// Every command stays `read_only`.
pub fn assert_all_read_only(cmds: &[&str]) {
    let wrong: Vec<(&str, String)> = cmds
        .iter()
        .map(|c| (*c, classify(c)))
        .filter(|(_, d)| d.class != Class::ReadOnly)
        .map(|(c, d)| (c, format!("{}: {}", d.rule(), d.reason())))
        .collect();
    assert!(wrong.is_empty(), "not read_only: {wrong:#?}");
}
