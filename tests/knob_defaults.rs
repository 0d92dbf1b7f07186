//! One source for the ATOME_* knob defaults: the KNOBS table in build.rs.
//! cmake/atome.cmake and firmware/fw.sh read that table; the copies that
//! cannot (the C header's #defines from cbindgen.toml, the Python package,
//! the README's table) are checked against it here.
use std::fs;

fn root() -> &'static str {
    env!("CARGO_MANIFEST_DIR")
}

fn read(rel: &str) -> String {
    fs::read_to_string(format!("{}/{rel}", root())).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// (name, default) for each `Knob { name: "ATOME_..", default: N, .. }` of build.rs.
fn knobs() -> Vec<(String, u64)> {
    let src = read("build.rs");
    let out: Vec<(String, u64)> = src
        .lines()
        .filter_map(|l| {
            let rest = l.trim().strip_prefix("Knob { name: \"")?;
            let (name, rest) = rest.split_once('"')?;
            let val = rest.trim_start_matches(", default: ");
            let val: String = val.chars().take_while(|c| c.is_ascii_digit()).collect();
            Some((name.to_string(), val.parse().ok()?))
        })
        .collect();
    assert_eq!(out.len(), 9, "expected the 9 knobs in build.rs's KNOBS table, found {out:?}");
    out
}

#[test]
fn c_header_defaults() {
    for file in ["cbindgen.toml", "include/atome.h"] {
        let text = read(file);
        for (name, v) in knobs() {
            let want = format!("#ifndef {name}\n#define {name} {v}\n#endif");
            assert!(text.contains(&want), "{file}: no `#define {name} {v}` default (build.rs says {v})");
        }
    }
}

#[test]
fn python_defaults() {
    let text = read("python/atome/_build.py");
    for (name, v) in knobs() {
        let want = format!("(\"{name}\", {v}, ");
        assert!(text.contains(&want), "python/atome/_build.py: {name} default is not {v} (build.rs)");
    }
}

#[test]
fn readme_table() {
    let text = read("README.md");
    for (name, v) in knobs() {
        let want = format!("| {name} | {v} ");
        assert!(text.contains(&want), "README.md: the knob table does not say {name} = {v} (build.rs)");
    }
}

/// The readers of the table really read it: no numeric copy left behind.
#[test]
fn cmake_and_fw_read_build_rs() {
    let cmake = read("cmake/atome.cmake");
    assert!(cmake.contains("build.rs\" _atome_knob_lines"), "cmake/atome.cmake no longer reads build.rs");
    assert!(!cmake.contains("set(_atome_defaults 64"), "cmake/atome.cmake has its own defaults again");
    let fw = read("firmware/fw.sh");
    assert!(fw.contains("build.rs"), "firmware/fw.sh no longer reads build.rs");
    assert!(!fw.contains("\"D\": 64"), "firmware/fw.sh has its own defaults again");
}
