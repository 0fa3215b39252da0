//! docs/architecture.md draws the crates and writes down each one's direct
//! dependencies on the others (its `crate-graph` block). This reads that
//! block and `cargo metadata` and fails where they differ, so the map a
//! newcomer reads first is the one the compiler enforces.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;

type Graph = BTreeMap<String, BTreeSet<String>>;

fn workspace_root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .and_then(Path::parent)
        .unwrap()
}

/// The `crate-graph` block: `name -> dep dep…` per line.
fn documented() -> Graph {
    let doc = std::fs::read_to_string(workspace_root().join("docs/architecture.md")).unwrap();
    let block = doc
        .split("```crate-graph\n")
        .nth(1)
        .expect("docs/architecture.md has a ```crate-graph block")
        .split("```")
        .next()
        .unwrap();
    block
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|line| {
            let (name, deps) = line
                .split_once("->")
                .unwrap_or_else(|| panic!("`{line}` is not `crate -> deps`"));
            let deps = deps.split_whitespace().map(str::to_string).collect();
            (name.trim().to_string(), deps)
        })
        .collect()
}

/// Each workspace package (test-support aside) → the workspace packages it
/// depends on as a normal (or build) dependency.
fn actual() -> Graph {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .current_dir(workspace_root())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "cargo metadata: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let meta: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let packages = meta["packages"].as_array().unwrap();
    let names: BTreeSet<&str> = packages
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    packages
        .iter()
        .filter(|p| p["name"] != "utter-test-support")
        .map(|p| {
            let deps = p["dependencies"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|d| d["kind"] != "dev")
                .map(|d| d["name"].as_str().unwrap())
                .filter(|n| names.contains(n) && *n != "utter-test-support")
                .map(str::to_string)
                .collect();
            (p["name"].as_str().unwrap().to_string(), deps)
        })
        .collect()
}

#[test]
fn the_documented_crate_graph_is_the_real_one() {
    let (documented, actual) = (documented(), actual());
    assert!(
        actual.len() > 8 && actual["utter-core"].contains("utter-engine"),
        "cargo metadata was read: {actual:?}"
    );
    let mut wrong = Vec::new();
    for (name, deps) in &actual {
        match documented.get(name) {
            None => wrong.push(format!("{name} is missing from the crate-graph block")),
            Some(written) if written != deps => {
                wrong.push(format!("{name}: written {written:?}, real {deps:?}"))
            }
            Some(_) => {}
        }
    }
    for name in documented.keys().filter(|n| !actual.contains_key(*n)) {
        wrong.push(format!(
            "{name} is in the crate-graph block but not in the workspace"
        ));
    }
    assert!(
        wrong.is_empty(),
        "docs/architecture.md's crate graph differs from Cargo.toml:\n{}",
        wrong.join("\n")
    );
}

/// Every crate `name` reaches through normal dependencies.
fn reachable(graph: &Graph, name: &str) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    let mut todo = vec![name.to_string()];
    while let Some(next) = todo.pop() {
        for dep in graph.get(&next).into_iter().flatten() {
            if seen.insert(dep.clone()) {
                todo.push(dep.clone());
            }
        }
    }
    seen
}

/// The engine and the model store run in the server and in worker processes:
/// they must not link the desktop (hotkeys, X11, Wayland, the clipboard).
#[test]
fn the_engine_and_the_models_do_not_reach_the_desktop() {
    let graph = actual();
    for name in ["utter-engine", "utter-models", "utter-base"] {
        let reached = reachable(&graph, name);
        for desktop in ["utter-platform", "utter-clipboard"] {
            assert!(
                !reached.contains(desktop),
                "{name} reaches {desktop}: {reached:?}"
            );
        }
    }
    assert!(reachable(&graph, "utter-models").contains("utter-base"));
}
