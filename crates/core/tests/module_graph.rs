//! The core's top-level modules import each other in one direction only
//! (docs/architecture.md): a cycle means two modules that cannot be
//! understood, tested or moved apart. This reads `use crate::…` paths from
//! the sources (test code aside) and fails on any cycle, naming it. (The
//! model converters and the text rules are crates of their own,
//! `utter-convert` and `utter-postprocess`: the compiler keeps those from
//! importing the core.)

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Top-level module → the top-level modules its non-test code names.
fn imports() -> BTreeMap<String, BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut stack = vec![src.clone()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            let rel = path.strip_prefix(&src).unwrap();
            let name = rel.to_string_lossy();
            if !name.ends_with(".rs") || name == "lib.rs" || name.ends_with("tests.rs") {
                continue;
            }
            let top = rel
                .components()
                .next()
                .unwrap()
                .as_os_str()
                .to_string_lossy()
                .trim_end_matches(".rs")
                .to_string();
            let text = std::fs::read_to_string(&path).unwrap();
            let code = text.split("#[cfg(test)]\nmod tests").next().unwrap();
            let deps = graph.entry(top.clone()).or_default();
            for (i, _) in code.match_indices("crate::") {
                let dep: String = code[i + "crate::".len()..]
                    .chars()
                    .take_while(|c| c.is_ascii_lowercase() || *c == '_')
                    .collect();
                if !dep.is_empty() && dep != top {
                    deps.insert(dep);
                }
            }
        }
    }
    graph
}

/// A cycle through `from`, if any, as the modules along it.
fn cycle_from(
    graph: &BTreeMap<String, BTreeSet<String>>,
    from: &str,
    path: &mut Vec<String>,
) -> Option<Vec<String>> {
    if let Some(start) = path.iter().position(|m| m == from) {
        let mut cycle = path[start..].to_vec();
        cycle.push(from.to_string());
        return Some(cycle);
    }
    path.push(from.to_string());
    for dep in graph.get(from).into_iter().flatten() {
        if let Some(cycle) = cycle_from(graph, dep, path) {
            return Some(cycle);
        }
    }
    path.pop();
    None
}

#[test]
fn the_core_s_modules_import_each_other_without_a_cycle() {
    let graph = imports();
    assert!(
        graph.len() > 10 && graph["dictation"].contains("engine"),
        "the scan sees the modules: {graph:?}"
    );
    for module in graph.keys() {
        if let Some(cycle) = cycle_from(&graph, module, &mut Vec::new()) {
            panic!("import cycle: {}", cycle.join(" → "));
        }
    }
}
