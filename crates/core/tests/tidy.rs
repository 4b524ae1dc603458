//! The core stays pure: no web crates, no file or network IO (ARCHITECTURE.md, invariants).

use std::path::Path;

fn sources(dir: &Path, out: &mut Vec<(String, String)>) {
    for entry in std::fs::read_dir(dir).expect("readable src dir").flatten() {
        let path = entry.path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push((
                path.display().to_string(),
                std::fs::read_to_string(&path).expect("readable source"),
            ));
        }
    }
}

#[test]
fn core_has_no_io_and_no_web_dependencies() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let manifest = std::fs::read_to_string(root.join("Cargo.toml")).expect("manifest");
    let deps = manifest
        .split("[dev-dependencies]")
        .next()
        .unwrap_or_default();
    for web in ["leptos", "web-sys", "wasm-bindgen", "js-sys", "plotly"] {
        assert!(!deps.contains(web), "crates/core depends on {web}");
    }
    let mut files = Vec::new();
    sources(&root.join("src"), &mut files);
    assert!(!files.is_empty());
    for (path, text) in files {
        for banned in [
            "std::fs",
            "std::net",
            "std::process",
            "web_sys",
            "leptos::",
            "wasm_bindgen",
        ] {
            assert!(
                !text.contains(banned),
                "{path} uses {banned}: IO belongs in the CLI or the app"
            );
        }
    }
}
