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

/// `cargo metadata` of the workspace (offline) with `args`.
fn cargo_metadata(args: &[&str]) -> serde_json::Value {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .args(["metadata", "--format-version", "1", "--offline"])
        .args(args)
        .current_dir(workspace_root())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "cargo metadata: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
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
    let meta = cargo_metadata(&["--no-deps"]);
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

/// The target this test runs on (`rustc -vV`'s host).
fn host_target() -> String {
    let out = Command::new("rustc").arg("-vV").output().unwrap();
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("host: "))
        .expect("rustc -vV names its host")
        .to_string()
}

/// Every package `name` reaches through normal dependencies, external
/// crates included (Cargo's resolved graph for this machine's target: the
/// other targets' crates are not downloaded offline; `npm run check:targets`
/// builds those).
fn resolved_reach(name: &str) -> BTreeSet<String> {
    let meta = cargo_metadata(&["--filter-platform", &host_target()]);
    let name_of: BTreeMap<&str, &str> = meta["packages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["id"].as_str().unwrap(), p["name"].as_str().unwrap()))
        .collect();
    let normal_deps: BTreeMap<&str, Vec<&str>> = meta["resolve"]["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|node| {
            let deps = node["deps"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|d| {
                    d["dep_kinds"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .any(|k| k["kind"].is_null())
                })
                .map(|d| d["pkg"].as_str().unwrap())
                .collect();
            (node["id"].as_str().unwrap(), deps)
        })
        .collect();
    let start = name_of
        .iter()
        .find(|(_, n)| **n == name)
        .map(|(id, _)| *id)
        .unwrap_or_else(|| panic!("{name} is not in the workspace"));
    let (mut seen, mut todo) = (BTreeSet::new(), vec![start]);
    while let Some(id) = todo.pop() {
        for dep in normal_deps.get(id).into_iter().flatten() {
            if seen.insert(name_of[dep].to_string()) {
                todo.push(dep);
            }
        }
    }
    seen
}

/// The desktop: hotkeys, key presses, the clipboard, the display server.
const DESKTOP: &[&str] = &[
    "utter-platform",
    "utter-desktop",
    "utter-clipboard",
    "global-hotkey",
    "enigo",
    "arboard",
    "x11rb",
];

/// The dictation, the files and the meetings' transcripts (utter-core) are
/// held off the OS by the compiler: nothing below utter-core can open a
/// window, grab a key, read the clipboard or open an audio device; it
/// reaches them through utter-ports' traits. The server compiles no desktop
/// either (it records through utter-capture for `--listen`, nothing more).
#[test]
fn the_core_and_the_server_cannot_touch_the_desktop() {
    let core = resolved_reach("utter-core");
    assert!(
        core.contains("utter-ports") && core.contains("transcribe-cpp"),
        "the resolved graph was read: {core:?}"
    );
    for banned in DESKTOP.iter().chain(&["utter-capture", "cpal"]) {
        assert!(!core.contains(*banned), "utter-core reaches {banned}");
    }
    let server = resolved_reach("utter-server");
    for banned in DESKTOP {
        assert!(!server.contains(*banned), "utter-server reaches {banned}");
    }
    for name in ["utter-engine", "utter-models"] {
        let reached = resolved_reach(name);
        for banned in DESKTOP.iter().chain(&["cpal"]) {
            assert!(!reached.contains(*banned), "{name} reaches {banned}");
        }
    }
    let desktop = resolved_reach("utter-desktop");
    assert!(desktop.contains("utter-platform") && desktop.contains("cpal"));
}
