//! Writes the UI's command signatures (`ui/src/lib/generated/commands.ts`)
//! from the `#[tauri::command]` functions the shell registers, so the UI's
//! `invoke` calls are type-checked against the Rust signatures. The types
//! the signatures name are ts-rs's (written by utter-core's `cargo test`);
//! `npm run ui:lint` (svelte-check) fails on a name ts-rs did not write, and
//! `npm test` fails when the committed file is stale.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use syn::punctuated::Punctuated;
use syn::{FnArg, GenericArgument, Item, Pat, PathArguments, ReturnType, Token, Type};

/// Shell-side arguments Tauri fills in itself; the UI never passes them.
const INJECTED: [&str; 3] = ["AppHandle", "State", "Window"];

fn crate_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The commands `main.rs` registers, in its order, as (module, fn).
fn registered() -> Vec<(String, String)> {
    let main = std::fs::read_to_string(crate_dir().join("src/main.rs")).unwrap();
    let start = main
        .find("generate_handler![")
        .expect("generate_handler! in main.rs");
    let body = &main[start + "generate_handler![".len()..];
    let body = &body[..body.find(']').unwrap()];
    let paths =
        syn::parse::Parser::parse_str(Punctuated::<syn::Path, Token![,]>::parse_terminated, body)
            .unwrap();
    paths
        .iter()
        .map(|p| {
            let names: Vec<String> = p.segments.iter().map(|s| s.ident.to_string()).collect();
            assert_eq!(names.len(), 2, "module::command expected: {names:?}");
            (names[0].clone(), names[1].clone())
        })
        .collect()
}

/// The TypeScript for a Rust type; named types are collected for imports.
fn ts(ty: &Type, named: &mut BTreeSet<String>) -> String {
    match ty {
        Type::Tuple(t) if t.elems.is_empty() => "void".into(),
        Type::Reference(r) => ts(&r.elem, named),
        Type::Path(p) => {
            let last = p.path.segments.last().unwrap();
            let inner = |i: usize, named: &mut BTreeSet<String>| match &last.arguments {
                PathArguments::AngleBracketed(a) => match a.args.iter().nth(i) {
                    Some(GenericArgument::Type(t)) => ts(t, named),
                    _ => panic!("{}: argument {i} is not a type", last.ident),
                },
                _ => panic!("{} without a type argument", last.ident),
            };
            match last.ident.to_string().as_str() {
                "String" | "str" | "PathBuf" | "Path" => "string".into(),
                "bool" => "boolean".into(),
                "i8" | "i16" | "i32" | "i64" | "u8" | "u16" | "u32" | "u64" | "usize" | "f32"
                | "f64" => "number".into(),
                "Option" => format!("{} | null", inner(0, named)),
                "Vec" => format!("{}[]", inner(0, named)),
                // The error is a string (CommandError serialises its message).
                "Result" => inner(0, named),
                // Raw bytes: Tauri hands them over as an ArrayBuffer.
                "Response" => "ArrayBuffer".into(),
                name => {
                    named.insert(name.to_string());
                    name.to_string()
                }
            }
        }
        _ => panic!("no TypeScript for this kind of type (a path, a reference or `()`)"),
    }
}

/// `used_for` → `usedFor`: Tauri's default for command argument names.
fn camel(name: &str) -> String {
    let mut out = String::new();
    let mut upper = false;
    for c in name.chars() {
        if c == '_' {
            upper = true;
        } else if upper {
            out.extend(c.to_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
}

/// Each `#[tauri::command]` fn of `src/{module}.rs`, as (name, TS entry).
fn commands_of(module: &str, named: &mut BTreeSet<String>) -> Vec<(String, String)> {
    let path = crate_dir().join(format!("src/{module}.rs"));
    let file = syn::parse_file(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let mut out = Vec::new();
    for item in file.items {
        let Item::Fn(f) = item else { continue };
        let is_command = f.attrs.iter().any(|a| {
            let segments: Vec<String> = a
                .path()
                .segments
                .iter()
                .map(|s| s.ident.to_string())
                .collect();
            segments == ["tauri", "command"]
        });
        if !is_command {
            continue;
        }
        let mut args = Vec::new();
        for input in &f.sig.inputs {
            let FnArg::Typed(arg) = input else { continue };
            let Pat::Ident(name) = arg.pat.as_ref() else {
                panic!("{}: a pattern argument", f.sig.ident)
            };
            let Type::Path(p) = arg.ty.as_ref() else {
                args.push(format!(
                    "{}: {}",
                    camel(&name.ident.to_string()),
                    ts(&arg.ty, named)
                ));
                continue;
            };
            let last = p.path.segments.last().unwrap().ident.to_string();
            if INJECTED.contains(&last.as_str()) {
                continue;
            }
            args.push(format!(
                "{}: {}",
                camel(&name.ident.to_string()),
                ts(&arg.ty, named)
            ));
        }
        let result = match &f.sig.output {
            ReturnType::Default => "void".to_string(),
            ReturnType::Type(_, ty) => ts(ty, named),
        };
        let args = if args.is_empty() {
            "Record<string, never>".to_string()
        } else {
            format!("{{ {} }}", args.join("; "))
        };
        out.push((
            f.sig.ident.to_string(),
            format!("{{ args: {args}; result: {result} }}"),
        ));
    }
    out
}

fn render() -> String {
    let mut named = BTreeSet::new();
    let registered = registered();
    let modules: BTreeSet<&str> = registered.iter().map(|(m, _)| m.as_str()).collect();
    let mut defined = Vec::new();
    for module in modules {
        defined.extend(commands_of(module, &mut named));
    }
    let mut entries = String::new();
    for (_, command) in &registered {
        let (_, entry) = defined
            .iter()
            .find(|(name, _)| name == command)
            .unwrap_or_else(|| panic!("`{command}` is registered but not a #[tauri::command]"));
        writeln!(entries, "  {command}: {entry};").unwrap();
    }
    for (name, _) in &defined {
        assert!(
            registered.iter().any(|(_, c)| c == name),
            "`{name}` is a #[tauri::command] that main.rs does not register"
        );
    }
    let mut out = String::from(
        "// Generated by src-tauri/tests/command_types.rs from the shell's #[tauri::command]\n\
         // functions (`cargo test -p utter-app`). Do not edit.\n\n",
    );
    for name in &named {
        writeln!(out, "import type {{ {name} }} from './{name}';").unwrap();
    }
    out.push_str(
        "\n/** Each command the shell registers: its arguments (camelCase, as Tauri\n \
         *  takes them) and what it resolves to. A failed command rejects with a string. */\n\
         export interface Commands {\n",
    );
    out.push_str(&entries);
    out.push_str("}\n");
    out
}

#[test]
fn the_uis_command_signatures_are_written_from_the_rust_commands() {
    let dir = std::env::var("TS_RS_EXPORT_DIR").expect("set in .cargo/config.toml");
    let dir = Path::new(&dir);
    std::fs::create_dir_all(dir).unwrap();
    let text = render();
    assert!(text.contains("  save_settings: { args: { settings: Settings }; result: Settings };"));
    assert!(text.contains("usedFor: UseFor"), "camelCase argument names");
    std::fs::write(dir.join("commands.ts"), text).unwrap();
}
