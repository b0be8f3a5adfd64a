//! The crate's module graph: no module imports (`use crate::…`, `use super::…`) a module
//! that imports it back, directly or through others.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let p = entry.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

/// `handlers/mod.rs` → `handlers`, `handlers/vcs.rs` → `handlers::vcs`, `lib.rs` → ``.
fn module_of(src: &Path, file: &Path) -> String {
    let rel = file.strip_prefix(src).unwrap().with_extension("");
    let mut parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if matches!(parts.last().map(String::as_str), Some("mod" | "lib")) {
        parts.pop();
    }
    parts.join("::")
}

/// The module a path names: the longest prefix that is a module of the crate.
fn target(path: &str, modules: &BTreeSet<String>) -> Option<String> {
    let segs: Vec<&str> = path.split("::").collect();
    (1..=segs.len())
        .rev()
        .map(|n| segs[..n].join("::"))
        .find(|m| modules.contains(m))
}

/// Module → modules its `use` lines name (test modules excluded: they may import anything).
fn import_graph() -> BTreeMap<String, BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let modules: BTreeSet<String> = files.iter().map(|f| module_of(&src, f)).collect();
    let mut graph = BTreeMap::new();
    for f in &files {
        let me = module_of(&src, f);
        let text = std::fs::read_to_string(f).unwrap();
        let code = text.split("#[cfg(test)]").next().unwrap_or("");
        let mut deps = BTreeSet::new();
        let mut add = |abs: String| {
            if let Some(t) = target(&abs, &modules)
                && t != me
            {
                deps.insert(t);
            }
        };
        for line in code.lines() {
            let line = line.trim_start();
            if line.starts_with("//") {
                continue;
            }
            // Every `crate::` path, in a `use` line or inline (`crate::paths::resolve(…)`).
            for (i, _) in line.match_indices("crate::") {
                let before = line[..i].chars().next_back();
                if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
                    continue;
                }
                let path: String = line[i + 7..]
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':')
                    .collect();
                add(path.trim_end_matches(':').to_owned());
            }
            let Some(rest) = line
                .strip_prefix("use ")
                .or_else(|| line.strip_prefix("pub(crate) use "))
                .or_else(|| line.strip_prefix("pub use "))
            else {
                continue;
            };
            let path = rest.split(['{', ';', ' ']).next().unwrap_or("");
            let path = path.trim_end_matches("::");
            if let Some(p) = path.strip_prefix("super::") {
                let parent = me.rsplit_once("::").map_or("", |(a, _)| a);
                add(if parent.is_empty() {
                    p.to_owned()
                } else {
                    format!("{parent}::{p}")
                });
            } else if let Some(p) = path.strip_prefix("self::") {
                add(if me.is_empty() {
                    p.to_owned()
                } else {
                    format!("{me}::{p}")
                });
            }
        }
        graph.insert(me, deps);
    }
    graph
}

fn cycle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        n: &str,
        g: &BTreeMap<String, BTreeSet<String>>,
        stack: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(i) = stack.iter().position(|s| s == n) {
            let mut c = stack[i..].to_vec();
            c.push(n.to_owned());
            return Some(c);
        }
        if done.contains(n) {
            return None;
        }
        stack.push(n.to_owned());
        for d in g.get(n).into_iter().flatten() {
            if let Some(c) = visit(d, g, stack, done) {
                return Some(c);
            }
        }
        stack.pop();
        done.insert(n.to_owned());
        None
    }
    let mut done = BTreeSet::new();
    for n in graph.keys() {
        if let Some(c) = visit(n, graph, &mut Vec::new(), &mut done) {
            return Some(c);
        }
    }
    None
}

#[test]
fn no_import_circles_inside_the_crate() {
    let g = import_graph();
    // The graph is read at all: the known edges are seen.
    assert!(g["handlers::vcs"].contains("classify"), "{g:?}");
    assert!(g["spec"].contains("handlers::registry"), "{g:?}");
    assert!(g["handlers::databases"].contains("sql"), "{g:?}");
    if let Some(c) = cycle(&g) {
        panic!("import circle: {}", c.join(" -> "));
    }
}

#[test]
fn the_circle_finder_finds_circles() {
    let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    g.insert("a".into(), ["b".into()].into());
    g.insert("b".into(), ["c".into()].into());
    g.insert("c".into(), BTreeSet::new());
    assert_eq!(cycle(&g), None);
    g.insert("c".into(), ["a".into()].into());
    assert_eq!(
        cycle(&g),
        Some(vec!["a".into(), "b".into(), "c".into(), "a".into()])
    );
}
