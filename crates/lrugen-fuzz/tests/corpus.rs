// SPDX-License-Identifier: GPL-2.0-only
//! Replays the checked-in fuzz corpus (`fuzz/corpus/<target>/`, every file) and the inputs of
//! every bug fuzzing found (`fuzz/regressions/<target>/`, named after the bug; see
//! docs/fuzzing.md) through the target bodies on the stable toolchain, so that `cargo test`
//! checks them all.

use std::fs;
use std::path::{Path, PathBuf};

fn corpus_dir(target: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../fuzz/corpus")
        .join(target)
}

fn regressions_dir(target: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../fuzz/regressions")
        .join(target)
}

fn replay(target: &str) {
    replay_dir(target, &corpus_dir(target), 5);
    let regressions = regressions_dir(target);
    if regressions.is_dir() {
        replay_dir(target, &regressions, 1);
    }
}

fn replay_dir(target: &str, dir: &Path, at_least: usize) {
    let body = lrugen_fuzz::TARGETS
        .iter()
        .find(|(name, _)| *name == target)
        .map(|(_, f)| *f)
        .expect("a target of lrugen_fuzz::TARGETS");
    let mut files: Vec<PathBuf> = fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("a directory entry").path())
        .collect();
    files.sort();
    assert!(
        files.len() >= at_least,
        "{}: only {} inputs",
        dir.display(),
        files.len()
    );
    for f in &files {
        let data = fs::read(f).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        let r = std::panic::catch_unwind(|| body(&data));
        assert!(r.is_ok(), "{target} fails on {}", f.display());
    }
}

#[test]
fn every_target_has_a_corpus() {
    for (name, _) in lrugen_fuzz::TARGETS {
        assert!(corpus_dir(name).is_dir(), "no corpus for {name}");
    }
}

#[test]
fn traces() {
    replay("traces");
}

#[test]
fn experiment_toml() {
    replay("experiment_toml");
}

#[test]
fn op_file() {
    replay("op_file");
}

#[test]
fn debugfs_cmd() {
    replay("debugfs_cmd");
}

#[test]
fn control() {
    replay("control");
}

#[test]
fn serial_log() {
    replay("serial_log");
}

/// Each regression input is one that the bug it is named after made fail: check that it still
/// reaches the code it is about (an input that no longer did would pass for nothing).
#[test]
fn regressions_reach_their_code() {
    use lrugen::experiment::Experiment;
    let read = |t: &str, n: &str| fs::read(regressions_dir(t).join(n)).expect("a regression input");
    let exp = read("experiment_toml", "sweep-count-overflow");
    let e = Experiment::parse(std::str::from_utf8(&exp).unwrap(), Path::new("x.toml")).unwrap_err();
    assert!(e.to_string().contains("points: at most 100,000"), "{e}");
    let ops = read("op_file", "second-anon-line");
    let e = lrugen_replay::OpFile::parse(std::str::from_utf8(&ops).unwrap()).unwrap_err();
    assert!(e.msg.contains("declared twice"), "{e}");
    let lcs = read("traces", "lcs-end-magic-offset");
    let r = lrugen_trace::RecordReader::new(&lcs[2..], lrugen_trace::TraceFormat::Lcs, "t", &Default::default());
    let e = r.into_iter().find_map(Result::err).expect("an error");
    assert_eq!(e.location(), Some(lrugen_trace::Location::Byte(1016)), "{e}");
    // a ` node` line with no generation under it is refused
    let t = read("debugfs_cmd", "node-without-generations");
    let e = lrugen::reclaim::mglru::debugfs::parse(&String::from_utf8_lossy(&t[1..])).unwrap_err();
    assert!(
        e.to_string().contains("a generation line after the ` node` line"),
        "{e}"
    );
    // a short text whose format no line tells parses, its format untold
    let t = read("debugfs_cmd", "format-untold-is-not-an-error");
    let text = String::from_utf8_lossy(&t[1..]);
    let lvs = lrugen::reclaim::mglru::debugfs::parse(&text).expect("parses");
    assert!(lvs.iter().all(|lv| !lv.gens.is_empty()));
    assert_eq!(lrugen::reclaim::mglru::debugfs::detect_format(&text), None);
}

#[test]
fn bench_inputs() {
    replay("bench_inputs");
}
