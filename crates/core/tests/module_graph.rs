//! The layers inside utter-core. What lies between crates (the desktop,
//! capture, engine, models, the app, the leaf crates) the compiler holds:
//! utter-core cannot name the platform or an audio device, they are not its
//! dependencies (crate_graph). What is left
//! inside this crate is held here: each top-level module has a rank and may
//! name only modules of a lower rank (docs/architecture.md, "Inside
//! utter-core"). The scan reads `crate::a` and grouped `crate::{a, b::c}`
//! paths in non-test code, comments left out.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The core's own modules, lowest first. A module may import the modules of
/// the ranks before its own, never its own rank or a later one.
const RANKS: &[&[&str]] = &[
    // Plain data and text, no I/O.
    &["language", "text", "placeholders", "subtitles"],
    // Audio files and sample arithmetic (the microphone is utter-capture's).
    &["audio"],
    // What a transcript is, how speech is packed for the engine, how its text is checked
    // (coverage, the vocabulary's recheck), what a profile is.
    &["transcript", "packing", "coverage", "recheck", "profiles"],
    // The settings file; files transcribed.
    &["settings", "transcribe"],
    // The dictation service; meetings; exports (which read the settings' spelling).
    &["dictation", "meeting", "export"],
];

/// The code of a file without its `//` comments and its test module.
fn code_of(text: &str) -> String {
    let text = text.split("#[cfg(test)]\nmod tests").next().unwrap();
    text.lines()
        .map(|line| match line.find("//") {
            Some(i) => &line[..i],
            None => line,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The top-level names a piece of code imports through `crate::`.
fn crate_paths(code: &str) -> BTreeSet<String> {
    let ident = |s: &str| -> String {
        s.trim_start()
            .chars()
            .take_while(|c| c.is_ascii_lowercase() || *c == '_')
            .collect()
    };
    let mut names = BTreeSet::new();
    for (i, _) in code.match_indices("crate::") {
        let rest = &code[i + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            // Top-level items of the group only: `b::{c, d}` names `b`.
            let mut depth = 0;
            let mut item_start = true;
            for (j, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => item_start = true,
                    _ if item_start && !c.is_whitespace() => {
                        names.insert(ident(&group[j..]));
                        item_start = false;
                    }
                    _ => {}
                }
            }
        } else {
            names.insert(ident(rest));
        }
    }
    names.retain(|n| !n.is_empty());
    names
}

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
            // Test code: a `tests.rs` file, or any file under a `tests` folder.
            let test_code =
                name.ends_with("tests.rs") || rel.components().any(|c| c.as_os_str() == "tests");
            if !name.ends_with(".rs") || name == "lib.rs" || test_code {
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
            let code = code_of(&std::fs::read_to_string(&path).unwrap());
            let deps = graph.entry(top.clone()).or_default();
            for dep in crate_paths(&code) {
                if dep != top {
                    deps.insert(dep);
                }
            }
        }
    }
    graph
}

fn rank_of(module: &str) -> Option<usize> {
    RANKS.iter().position(|rank| rank.contains(&module))
}

#[test]
fn grouped_and_nested_imports_are_seen_and_comments_are_not() {
    let code = code_of(
        "use crate::{audio::wav, settings::{self, MicMode}, text};\n\
         // crate::setup is named in a comment only\n\
         fn f() { crate::dictation::run() }",
    );
    let names: Vec<String> = crate_paths(&code).into_iter().collect();
    assert_eq!(names, ["audio", "dictation", "settings", "text"]);
}

#[test]
fn each_module_imports_only_lower_ranks() {
    let graph = imports();
    assert!(
        graph.len() > 10 && graph["dictation"].contains("settings"),
        "the scan sees the modules: {graph:?}"
    );
    let mut wrong = Vec::new();
    for (module, deps) in &graph {
        let Some(rank) = rank_of(module) else {
            wrong.push(format!("{module} has no rank: add it to RANKS"));
            continue;
        };
        for dep in deps {
            match rank_of(dep) {
                Some(r) if r < rank => {}
                Some(_) => wrong.push(format!(
                    "{module} (rank {rank}) imports {dep}, which is not below it"
                )),
                None => wrong.push(format!("{module} imports {dep}, which has no rank")),
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
