//! The agent's modules form layers: no module imports one that imports it back, directly or
//! around a longer circle (`runner ↔ turn ↔ worker` was one). Read from the sources, so a new
//! `use crate::…` or `crate::module::item` that closes a circle fails here.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Top-level module of each source file (`tools/plan.rs` belongs to `tools`); the crate root
/// (`lib.rs`, which declares and wires them all) is left out.
fn module_sources() -> BTreeMap<String, String> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut out: BTreeMap<String, String> = BTreeMap::new();
    let mut stack = vec![src.clone()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            let rel = path.strip_prefix(&src).unwrap();
            let first = rel.components().next().unwrap().as_os_str();
            let module = first.to_str().unwrap().trim_end_matches(".rs").to_owned();
            if module == "lib" {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            out.entry(module).or_default().push_str(&text);
        }
    }
    out
}

/// The crate's modules a source names: `use crate::{a, b::c}` and `crate::a::item` paths.
fn imports(text: &str, modules: &BTreeSet<String>) -> BTreeSet<String> {
    let code: String = text
        .lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n");
    let mut found = BTreeSet::new();
    for (i, _) in code.match_indices("crate::") {
        let rest = &code[i + "crate::".len()..];
        // `crate::{a, b::c}`: every name in the braces.
        let names: Vec<&str> = if let Some(group) = rest.strip_prefix('{') {
            let end = group.find('}').unwrap_or(group.len());
            group[..end]
                .split(',')
                .map(|n| n.trim().split("::").next().unwrap_or("").trim())
                .collect()
        } else {
            vec![
                rest.split(|c: char| !(c.is_alphanumeric() || c == '_'))
                    .next()
                    .unwrap_or(""),
            ]
        };
        for n in names {
            if modules.contains(n) {
                found.insert(n.to_owned());
            }
        }
    }
    found
}

#[test]
fn layers_no_module_of_the_agent_imports_one_that_imports_it_back() {
    let sources = module_sources();
    let modules: BTreeSet<String> = sources.keys().cloned().collect();
    for expected in ["turn", "worker", "tools", "execution", "events", "notes"] {
        assert!(
            modules.contains(expected),
            "{expected} not found: {modules:?}"
        );
    }
    let edges: BTreeMap<String, BTreeSet<String>> = sources
        .iter()
        .map(|(m, text)| {
            let mut deps = imports(text, &modules);
            deps.remove(m);
            (m.clone(), deps)
        })
        .collect();
    // Depth-first search for a path from each module back to itself.
    for start in &modules {
        let mut stack: Vec<(String, Vec<String>)> = vec![(start.clone(), vec![start.clone()])];
        let mut seen = BTreeSet::new();
        while let Some((m, path)) = stack.pop() {
            for dep in &edges[&m] {
                assert!(
                    dep != start,
                    "import circle: {} -> {start}",
                    path.join(" -> ")
                );
                if seen.insert(dep.clone()) {
                    let mut next = path.clone();
                    next.push(dep.clone());
                    stack.push((dep.clone(), next));
                }
            }
        }
    }
}

#[test]
fn layers_the_import_reader_sees_the_forms_the_crate_uses() {
    let modules: BTreeSet<String> = ["a", "b", "c", "d"].iter().map(|s| (*s).into()).collect();
    let text = "use crate::{a, b::Thing};\nlet x = crate::c::f();\n// crate::d::not_code\n";
    let want: BTreeSet<String> = ["a", "b", "c"].iter().map(|s| (*s).into()).collect();
    assert_eq!(imports(text, &modules), want);
}
