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

/// The code of a source file without comments and without its tests (`#[cfg(test)]` and all
/// after it: test modules close the files of this crate).
fn code_of(text: &str) -> String {
    let text = text.split("#[cfg(test)]").next().unwrap_or("");
    text.lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The names a source takes through `prefix` (`super::a`, `super::{a, b::c}`).
fn names_after(code: &str, prefix: &str) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    for (i, _) in code.match_indices(prefix) {
        let rest = &code[i + prefix.len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let end = group.find('}').unwrap_or(group.len());
            for n in group[..end].split(',') {
                found.insert(n.trim().split("::").next().unwrap_or("").trim().to_owned());
            }
        } else {
            let n = rest
                .split(|c: char| !(c.is_alphanumeric() || c == '_'))
                .next()
                .unwrap_or("");
            found.insert(n.to_owned());
        }
    }
    found.remove("");
    found
}

/// Inside a folder module (`tools/`), no file imports one that imports it back either: the
/// children share what they need through a sibling (`contract`, `args`), never through the
/// parent that declares them.
#[test]
fn layers_no_file_of_a_folder_module_imports_one_that_imports_it_back() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut checked = 0;
    for entry in std::fs::read_dir(&src).unwrap() {
        let dir = entry.unwrap().path();
        if !dir.is_dir() {
            continue;
        }
        let mut files: BTreeMap<String, String> = BTreeMap::new();
        for f in std::fs::read_dir(&dir).unwrap() {
            let path = f.unwrap().path();
            let stem = path.file_stem().unwrap().to_str().unwrap().to_owned();
            if path.extension().is_some_and(|e| e == "rs") && stem != "tests" {
                files.insert(stem, code_of(&std::fs::read_to_string(&path).unwrap()));
            }
        }
        let children: BTreeSet<String> = files.keys().filter(|k| *k != "mod").cloned().collect();
        for (child, code) in &files {
            if child == "mod" {
                continue;
            }
            for name in names_after(code, "super::") {
                assert!(
                    children.contains(&name),
                    "{}/{child}.rs takes `{name}` from the module that declares it",
                    dir.display()
                );
            }
        }
        // Among the children, the sibling imports form no circle.
        let edges: BTreeMap<&String, BTreeSet<String>> = children
            .iter()
            .map(|c| {
                let mut deps = names_after(&files[c], "super::");
                deps.remove(c);
                (c, deps)
            })
            .collect();
        for start in &children {
            let mut stack = vec![start.clone()];
            let mut seen = BTreeSet::new();
            while let Some(m) = stack.pop() {
                for dep in &edges[&m] {
                    assert!(
                        dep != start,
                        "import circle in {}: {start} … {m} -> {start}",
                        dir.display()
                    );
                    if seen.insert(dep.clone()) {
                        stack.push(dep.clone());
                    }
                }
            }
        }
        checked += 1;
    }
    assert!(checked >= 1, "no folder module found under src/");
}

#[test]
fn layers_the_import_reader_sees_the_forms_the_crate_uses() {
    let code = code_of(
        "use super::{a, b::C};\nuse super::d::E;\n// super::x\n#[cfg(test)]\nmod tests { use super::y; }",
    );
    let want: BTreeSet<String> = ["a", "b", "d"].iter().map(|s| (*s).into()).collect();
    assert_eq!(names_after(&code, "super::"), want);

    let modules: BTreeSet<String> = ["a", "b", "c", "d"].iter().map(|s| (*s).into()).collect();
    let text = "use crate::{a, b::Thing};\nlet x = crate::c::f();\n// crate::d::not_code\n";
    let want: BTreeSet<String> = ["a", "b", "c"].iter().map(|s| (*s).into()).collect();
    assert_eq!(imports(text, &modules), want);
}
