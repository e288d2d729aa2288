// SPDX-License-Identifier: GPL-2.0-only
//! The model's `memory.stat` lines against the guests' own: for every shape fixture, the lines the
//! model prints under the preset of the fixture's kernel (`model::profile_for_release`) are
//! exactly the names in the guest's `memory.stat` (`run.memory_stat`; a map, so the order is
//! checked against each kernel's source in `lrugen-core`'s `tests/memory_stat.rs`).

use lrugen::mm::memory_stat;
use std::collections::BTreeSet;
use std::path::PathBuf;

#[test]
fn each_kernels_lines_are_the_guests() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/shapes");
    let mut seen = BTreeSet::new();
    for e in std::fs::read_dir(&dir).unwrap() {
        let path = e.unwrap().path();
        if path.extension().is_none_or(|x| x != "json") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        let run = &v["run"];
        let release = run["kernel_release"].as_str().expect("kernel_release");
        let kernel: BTreeSet<&str> = run["memory_stat"]
            .as_object()
            .unwrap_or_else(|| panic!("{}: no run.memory_stat", path.display()))
            .keys()
            .map(String::as_str)
            .collect();
        let profile = lrugen_kernel::model::profile_for_release(release);
        let model: Vec<&str> = memory_stat::lines(&profile.switches).map(|l| l.name).collect();
        assert_eq!(
            model.iter().copied().collect::<BTreeSet<_>>(),
            kernel,
            "{}: {release} as {}",
            path.display(),
            profile.name()
        );
        assert_eq!(model.len(), kernel.len(), "{}: a line printed twice", path.display());
        seen.insert(profile.name());
    }
    assert_eq!(
        seen.into_iter().collect::<Vec<_>>(),
        ["6.1", "6.12", "7.2"],
        "fixtures of every Debian kernel"
    );
}
