//! The layers of src/ point one way (CONVENTIONS.md, src/lib.rs): a module names only
//! modules of lower layers, `text → jsnum → json → error → message → stream → event → io →
//! agent → provider → wasm`. Read from the sources: every `crate::<module>` path outside a
//! `#[cfg(test)]` module.
#![allow(
    clippy::disallowed_methods, // core's substring search: only the .wasm avoids it (size)
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

/// The files of src/wasm name each other (`super::<file>`) without a circle: the exports
/// (`api`) over the hooks, the hooks over the tools, all over the conversions and errors.
#[test]
fn the_binding_files_name_each_other_without_a_circle() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/wasm");
    let mut names = Vec::new();
    let mut texts = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_stem().unwrap().to_string_lossy().to_string();
        if name == "mod" {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let code = text
            .split("#[cfg(test)]\nmod tests")
            .next()
            .unwrap_or(&text)
            .to_string();
        names.push(name);
        texts.push(code);
    }
    assert!(names.len() > 10, "{names:?}");
    // edges[i]: the files file i names.
    let edges: Vec<Vec<usize>> = texts
        .iter()
        .enumerate()
        .map(|(i, t)| {
            (0..names.len())
                .filter(|&j| j != i && t.contains(&format!("super::{}::", names[j])))
                .collect()
        })
        .collect();
    // Depth-first search for a circle: 0 unseen, 1 on the path, 2 done.
    fn visit(
        i: usize,
        edges: &[Vec<usize>],
        state: &mut [u8],
        path: &mut Vec<usize>,
    ) -> Option<Vec<usize>> {
        state[i] = 1;
        path.push(i);
        for &j in &edges[i] {
            if state[j] == 1 {
                let at = path.iter().position(|&p| p == j).unwrap();
                return Some(path[at..].to_vec());
            }
            if state[j] == 0 {
                if let Some(c) = visit(j, edges, state, path) {
                    return Some(c);
                }
            }
        }
        path.pop();
        state[i] = 2;
        None
    }
    let mut state = vec![0u8; names.len()];
    for i in 0..names.len() {
        if state[i] == 0 {
            if let Some(circle) = visit(i, &edges, &mut state, &mut Vec::new()) {
                let named: Vec<&str> = circle.iter().map(|&k| names[k].as_str()).collect();
                panic!("a circle among src/wasm files: {}", named.join(" -> "));
            }
        }
    }
}
