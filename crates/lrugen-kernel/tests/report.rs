// SPDX-License-Identifier: GPL-2.0-only
//! The kernel-beside-model report from checked-in real runs (no qemu): the model's replay of the
//! fixture's op file (`lrugen_kernel::model`) sampled at the replayer's windows, the report's
//! counters, windows and generations, `report.json` and the plots.

use lrugen::mm::MachineConfig;
use lrugen::reclaim::mglru::{MglruConfig, Profile};
use lrugen::sim::{MemcgConfig, PolicyKind, RunConfig, RunResult};
use lrugen::workload::WorkloadSpec;
use lrugen_kernel::report::{workload_gens, Report, Settings};
use lrugen_kernel::{dense_trace, model, Fixture};

fn load(name: &str) -> Fixture {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name);
    serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap()
}

fn config(f: &Fixture, policy: PolicyKind, workload: WorkloadSpec) -> RunConfig {
    let mut cfg = RunConfig::new(
        MachineConfig {
            clock: lrugen_kernel::model::GUEST_CLOCK,
            // the guests ran with vm.page-cluster=0 (scripts/regen-kernel-fixtures.sh)
            page_cluster: 0,
            ..MachineConfig::simple(131_072, f.run.swap_mib << 8)
        },
        MemcgConfig {
            max: Some(f.run.resident_pages()),
            ..Default::default()
        },
        workload,
        policy,
    );
    cfg.seed = f.seed;
    cfg.mglru = MglruConfig {
        profile: Profile::V6_1,
        ..Default::default()
    };
    cfg
}

fn same_counters(a: &RunResult, b: &RunResult) {
    assert_eq!(
        (a.accesses, a.hits, a.misses, a.minor_faults),
        (b.accesses, b.hits, b.misses, b.minor_faults)
    );
    assert_eq!(a.vmstat.as_ref().unwrap().0, b.vmstat.as_ref().unwrap().0);
    assert_eq!(a.memory_stat.as_ref().unwrap().0, b.memory_stat.as_ref().unwrap().0);
}

/// The model's own workload behind an anon fixture: `WorkloadSpec::Anon` with its pages, write
/// ratio, distribution and accesses.
fn anon_spec(f: &Fixture) -> WorkloadSpec {
    let a = f.anon.clone().expect("an anon fixture");
    WorkloadSpec::Anon {
        compressed_pct: 0,
        pages: a.pages,
        write_ratio: a.write_ratio,
        dist: f.dist.parse().unwrap(),
        accesses: f.accesses,
    }
}

/// Replaying the op file on the model is the model's own run of the workload: the anon fixture's
/// op file against `WorkloadSpec::Anon` with the same seed, and the file fixture's against the
/// dense trace of its reads (no read-ahead: page placement does not matter), counter for counter.
#[test]
fn the_models_replay_of_an_op_file_is_its_own_run_of_the_workload() {
    let f = load("debian-6.1-mglru-anon-zipf.json");
    let spec = anon_spec(&f);
    let cfg = config(&f, PolicyKind::Mglru, spec);
    let own = lrugen::sim::run(&cfg, None, &mut |_, _| {}).unwrap();
    let ops = f.ops().unwrap();
    let replay = model::run_workload_only(&ops, &cfg).unwrap();
    same_counters(&own, &replay);
    // the replay compared with the kernel also has the replayer's own pages (its fixed pages and
    // its op list): at least one more fault per page (its store before the replay; a later load
    // may fault again once swapped out), in less room for the workload
    let with = model::run(&ops, &cfg).unwrap();
    let own_pages = lrugen_kernel::replayer_own_pages(&ops);
    use lrugen::mm::vmstat::Stat;
    assert_eq!(with.accesses, replay.accesses, "its steps are not measured");
    assert!(
        with.vm(Stat::Pgfault) - replay.vm(Stat::Pgfault) >= own_pages as i64,
        "{} vs {}: at least one fault per own page ({own_pages})",
        with.vm(Stat::Pgfault),
        replay.vm(Stat::Pgfault)
    );
    assert!(with.misses > replay.misses, "the op list takes room from the workload");

    let f = load("debian-6.1-classic-file-zipf.json");
    let ops = f.ops().unwrap();
    let (pages, nr) = dense_trace(&ops);
    let cfg = config(
        &f,
        PolicyKind::Classic,
        WorkloadSpec::Trace {
            path: "t".into(),
            format: None,
            access: Default::default(),
        },
    );
    let trace = lrugen::workload::LoadedTrace::from_ids(&pages, nr).unwrap();
    let own = lrugen::sim::run(&cfg, Some(trace), &mut |_, _| {}).unwrap();
    same_counters(&own, &model::run_workload_only(&ops, &cfg).unwrap());
}

fn settings(f: &Fixture, lru: &str) -> Settings {
    Settings {
        lru: lru.into(),
        lru_gen_enabled: if lru == "mglru" { "y" } else { "n" }.into(),
        memcg_max_bytes: f.run.memcg_max_bytes,
        swap: "disk".into(),
        swap_mib: f.run.swap_mib,
        window: f.window,
        model_profile: "6.1".into(),
        model_capacity_pages: f.run.resident_pages(),
        ..Default::default()
    }
}

#[test]
fn the_report_puts_the_fixture_beside_the_model() {
    let f = load("debian-6.1-mglru-anon-zipf.json");
    let ops = f.ops().unwrap();
    let spec = anon_spec(&f);
    let m = model::run(&ops, &config(&f, PolicyKind::Mglru, spec)).unwrap();
    // a sample at every window's end, in measured accesses
    let ends: Vec<u64> = (1..=f.run.windows.len() as u64).map(|i| i * f.window).collect();
    assert_eq!(m.series.iter().map(|s| s.step).collect::<Vec<_>>(), ends);
    let r = Report::build(&f.run, &m, "anon fixture".into(), settings(&f, "mglru")).unwrap();

    // counters: the replayer's, vmstat events, memory.stat and memory.events, each with both sides
    let row = |src: &str, name: &str| {
        r.counters
            .iter()
            .find(|x| x.source == src && x.counter == name)
            .unwrap_or_else(|| panic!("no {src} {name} in {:?}", r.counters))
    };
    let misses = row("replayer", "misses");
    assert_eq!((misses.kernel, misses.model), (f.run.misses as i64, m.misses as i64));
    let d = misses.rel_diff.unwrap();
    assert!((d - (m.misses as f64 - f.run.misses as f64) / f.run.misses as f64).abs() < 1e-12);
    let pswpin = row("vmstat", "pswpin");
    assert_eq!(pswpin.kernel, f.run.vmstat_delta["pswpin"]);
    assert_eq!(pswpin.model, m.vm(lrugen::mm::vmstat::Stat::Pswpin));
    let pgscan = row("memory.stat", "pgscan");
    assert_eq!(pgscan.kernel, f.run.memory_stat_at_end_of_replay["pgscan"]);
    assert_eq!(pgscan.model, m.pgscan());
    assert_eq!(row("memory.events", "max").kernel, f.run.memory_events["max"]);
    for x in &r.counters {
        assert!(x.kernel != 0 || x.model != 0, "{x:?}");
        assert_eq!(x.rel_diff.is_none(), x.kernel == 0, "{x:?}");
        // no machine-sized gauges among the vmstat rows
        assert!(x.source != "vmstat" || !x.counter.starts_with("nr_"), "{x:?}");
    }
    let table = r.table();
    assert!(table.contains("memory.events") && table.contains("pswpin"), "{table}");

    // windows: the kernel's, and the model's from its samples, adding up to the totals
    assert_eq!(r.windows.len(), f.run.windows.len());
    assert_eq!(r.windows.iter().map(|w| w.kernel_misses).sum::<u64>(), f.run.misses);
    assert_eq!(r.windows.iter().map(|w| w.model_misses.unwrap()).sum::<u64>(), m.misses);
    assert_eq!(r.windows.iter().map(|w| w.accesses).collect::<Vec<_>>(), ends);

    // generations: each kernel capture of /t beside the model's at the same access count
    assert_eq!(r.generations.kernel.len(), f.run.lru_gen_samples.len());
    for (k, (n, text)) in r.generations.kernel.iter().zip(&f.run.lru_gen_samples) {
        assert_eq!(k.accesses, *n);
        assert_eq!(Some(k.gens.clone()), workload_gens(text).unwrap());
        let lv = lrugen::reclaim::mglru::debugfs::parse(text).unwrap();
        let t: u64 = lv
            .iter()
            .filter(|l| l.path == "/t")
            .flat_map(|l| &l.gens)
            .map(|g| g.pages[0] + g.pages[1])
            .sum();
        assert_eq!(k.gens.iter().map(|g| g.anon + g.file).sum::<u64>(), t);
        assert!(k.gens.windows(2).all(|w| w[0].seq < w[1].seq), "oldest first");
        assert!(r.generations.model.iter().any(|g| g.accesses == k.accesses));
    }
    for g in &r.generations.model {
        // MGLRU keeps between MIN_NR_GENS and MAX_NR_GENS generations
        assert!((2..=4).contains(&g.gens.len()), "{g:?}");
        assert!(g.gens.iter().map(|x| x.anon + x.file).sum::<u64>() <= f.run.resident_pages());
    }

    // report.json and the plots
    let dir = std::env::temp_dir().join(format!("lrugen-report-test-{}", std::process::id()));
    let (files, no_font) = r.write(&dir).unwrap();
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("report.json")).unwrap()).unwrap();
    assert_eq!(json["kernel_release"], f.run.kernel_release.as_str());
    assert_eq!(json["windows"].as_array().unwrap().len(), f.run.windows.len());
    assert_eq!(json["counters"].as_array().unwrap().len(), r.counters.len());
    assert_eq!(json["settings"]["swap"], "disk");
    assert!(json["generations"]["kernel"][0]["gens"][0]["seq"].is_u64());
    match no_font {
        Some(ref why) => eprintln!("plots skipped: {why}"),
        None => {
            for stem in ["misses", "generations"] {
                for ext in ["svg", "png"] {
                    let p = dir.join(format!("{stem}.{ext}"));
                    assert!(files.contains(&p), "{p:?} not in {files:?}");
                    assert!(std::fs::metadata(&p).unwrap().len() > 1000, "{p:?} is (nearly) empty");
                }
            }
            assert!(std::fs::read_to_string(dir.join("misses.svg"))
                .unwrap()
                .contains("<svg"));
        }
    }

    // the report to share (index.html): settings, every counter and window a row, the plots inline
    let cmd = "lrugen kernel --series 6.1 --workload anon --out 'my results'";
    let page = r.write_html(cmd, &dir, &files).unwrap();
    assert_eq!(page, dir.join("index.html"));
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains(&format!(
        "<h1>lrugen kernel: {} beside the model</h1>",
        f.run.kernel_release
    )));
    assert!(html.contains("<pre>lrugen kernel --series 6.1 --workload anon --out &#39;my results&#39;</pre>"));
    let tables: Vec<&str> = html.split("<tbody>").skip(1).collect();
    assert_eq!(tables.len(), 2, "counters and windows");
    assert_eq!(
        tables[0].split("</tbody>").next().unwrap().matches("<tr>").count(),
        r.counters.len()
    );
    assert_eq!(
        tables[1].split("</tbody>").next().unwrap().matches("<tr>").count(),
        r.windows.len()
    );
    let miss_row = format!(
        "<tr><td>replayer</td><td>misses</td><td class=\"n\">{}</td><td class=\"n\">{}</td>",
        lrugen::report::thousands(f.run.misses as i64),
        lrugen::report::thousands(m.misses as i64)
    );
    assert!(html.contains(&miss_row), "{miss_row}");
    assert!(html.contains("<tr><th>memory.max of /t</th>"), "the settings");
    let svgs = files
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "svg"))
        .count();
    assert_eq!(html.matches("<svg").count(), svgs, "every plot inline");
    assert_eq!(svgs, if no_font.is_some() { 0 } else { 2 });
    for fetch in ["<script", "<link", "src=", "href="] {
        assert!(!html.contains(fetch), "{fetch}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// With the classic LRU there are no generations: the report has none and still its counters.
#[test]
fn a_classic_report_has_no_generations() {
    let f = load("debian-6.1-classic-file-zipf.json");
    let ops = f.ops().unwrap();
    let cfg = config(
        &f,
        PolicyKind::Classic,
        WorkloadSpec::Trace {
            path: "t".into(),
            format: None,
            access: Default::default(),
        },
    );
    let m = model::run(&ops, &cfg).unwrap();
    let r = Report::build(&f.run, &m, "classic fixture".into(), settings(&f, "classic")).unwrap();
    assert!(r.generations.kernel.is_empty() && r.generations.model.is_empty());
    assert!(r.counters.iter().any(|x| x.counter == "workingset_refault_file"));
    assert_eq!(r.windows.len(), f.run.windows.len());
    assert!(r.windows.iter().all(|w| w.model_misses.is_some()));
}
