//! The layers of src/ point one way (CONVENTIONS.md, src/lib.rs): a module names only
//! modules of lower layers, `text → jsnum → json → error → message → stream → event → io →
//! agent → provider → wasm`. Read from the sources: every `crate::<module>` path outside a
//! `#[cfg(test)]` module.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use std::path::Path;

const LAYERS: [&str; 11] = [
    "text", "jsnum", "json", "error", "message", "stream", "event", "io", "agent", "provider",
    "wasm",
];

fn rank(module: &str) -> Option<usize> {
    LAYERS.iter().position(|m| *m == module)
}

/// The wrong-way references in the source `text` of a file of module `from`:
/// `(the module named, the line)`.
fn wrong_way(from: &str, text: &str) -> Vec<(String, usize)> {
    let Some(own) = rank(from) else {
        return Vec::new();
    };
    // The unit tests at a file's end may use anything.
    let code = text.split("#[cfg(test)]\nmod tests").next().unwrap_or(text);
    let mut out = Vec::new();
    for (n, line) in code.lines().enumerate() {
        let line = line.split("//").next().unwrap_or("");
        let mut rest = line;
        while let Some(at) = rest.find("crate::") {
            rest = &rest[at + "crate::".len()..];
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if rank(&name).is_some_and(|r| r > own) {
                out.push((name, n + 1));
            }
        }
    }
    out
}

fn sources(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn every_module_names_only_lower_layers() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&root, &mut files);
    let mut checked = 0;
    let mut wrong = Vec::new();
    for file in &files {
        let relative = file.strip_prefix(&root).unwrap();
        let top = relative
            .iter()
            .next()
            .unwrap()
            .to_string_lossy()
            .trim_end_matches(".rs")
            .to_string();
        let text = std::fs::read_to_string(file).unwrap();
        checked += text.matches("crate::").count();
        for (name, line) in wrong_way(&top, &text) {
            wrong.push(format!("{}:{line} names crate::{name}", relative.display()));
        }
    }
    assert!(
        checked > 300,
        "only {checked} crate:: paths read: the walk missed the sources"
    );
    assert!(
        wrong.is_empty(),
        "imports against the layer order:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn the_check_finds_a_wrong_way_import() {
    let text = "use crate::json::Value;\nuse crate::agent::Host; // here\nfn f() { crate::wasm::x() }\n#[cfg(test)]\nmod tests { use crate::wasm::y; }\n";
    assert_eq!(
        wrong_way("io", text),
        vec![("agent".to_string(), 2), ("wasm".to_string(), 3)]
    );
    assert!(wrong_way("wasm", text).is_empty());
}
