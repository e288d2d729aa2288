// SPDX-License-Identifier: GPL-2.0-only
//! The guest's serial console output, split into the captured files.

use crate::initramfs::{BEGIN, END};
use crate::{Error, KernelRun, Window};
use lrugen_replay::{CTL_PREFIX, DUMP_END, DUMP_PREFIX, PROGRESS_PREFIX, TASK_PREFIX, TOTAL_PREFIX, WINDOW_PREFIX};
use std::collections::BTreeMap;

/// The sections between `=== lrugen begin NAME` and `=== lrugen end NAME`. Carriage returns are
/// dropped; lines keep their trailing spaces (the `lru_gen` texts end lines with one).
pub fn sections(serial: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut cur: Option<(String, String)> = None;
    for raw in serial.split('\n') {
        let line = raw.trim_end_matches('\r');
        // A marker may follow firmware text on the same line ("Booting from ROM..=== lrugen …").
        if let Some(i) = line.find(BEGIN) {
            cur = Some((line[i + BEGIN.len()..].trim().to_string(), String::new()));
        } else if let Some(name) = line.find(END).map(|i| &line[i + END.len()..]) {
            if let Some((n, text)) = cur.take() {
                if n == name.trim() {
                    out.insert(n, text);
                }
            }
        } else if let Some((_, text)) = cur.as_mut() {
            text.push_str(line);
            text.push('\n');
        }
    }
    out
}

/// `name value` lines (`/proc/vmstat`, `memory.stat`, `memory.events`).
pub fn counters(text: &str) -> BTreeMap<String, i64> {
    text.lines()
        .filter_map(|l| {
            let mut it = l.split_whitespace();
            let k = it.next()?;
            let v = it.next()?.parse().ok()?;
            Some((k.to_string(), v))
        })
        .collect()
}

/// The text of the last file named `name` the replayer dumped (`lrugen-replay dump NAME N` …
/// `lrugen-replay dump-end`), e.g. [`crate::initramfs::ZRAM_MM_STAT`].
pub fn last_dump(serial: &str, name: &str) -> Option<String> {
    let mut found = None;
    let mut cur: Option<String> = None;
    for raw in serial.split('\n') {
        let line = raw.trim_end_matches('\r');
        if let Some(text) = cur.as_mut() {
            if line.starts_with(DUMP_END) {
                found = cur.take();
            } else {
                text.push_str(line);
                text.push('\n');
            }
        } else if let Some(rest) = line.strip_prefix(DUMP_PREFIX) {
            if rest.split_whitespace().next() == Some(name) {
                cur = Some(String::new());
            }
        }
    }
    found
}

/// A control op's line after [`CTL_PREFIX`]: `ID FILE errno E ret R accesses A [wrote TEXT]`.
fn parse_ctl_line(rest: &str) -> Result<crate::CtlResult, String> {
    let rest = rest.trim_end();
    let (head, wrote) = match rest.split_once(" wrote ") {
        Some((h, w)) => (h, Some(w)),
        None => match rest.strip_suffix(" wrote") {
            Some(h) => (h, Some("")),
            None => (rest, None),
        },
    };
    let f: Vec<&str> = head.split_whitespace().collect();
    let expected = "expected 'ID FILE errno E ret R accesses A [wrote TEXT]'";
    let (id, file) = match f.as_slice() {
        [id, file, ..] => (id.parse::<u32>().map_err(|_| expected.to_string())?, file.to_string()),
        _ => return Err(expected.into()),
    };
    let num = |k: &str| -> Result<i64, String> {
        f.iter()
            .position(|x| *x == k)
            .and_then(|i| f.get(i + 1))
            .and_then(|v| v.parse::<i64>().ok())
            .ok_or_else(|| format!("no number after '{k}': {expected}"))
    };
    let errno = num("errno")?;
    Ok(crate::CtlResult {
        id,
        file,
        write: wrote.map(lrugen_replay::unescape_text).transpose()?,
        errno: (errno != 0).then(|| crate::errno_name(errno as i32)),
        ret: Some(num("ret")?),
        accesses: num("accesses")?.max(0) as u64,
        ..Default::default()
    })
}

/// Parse a whole serial log into a [`KernelRun`] (settings left at their defaults: the caller
/// fills them in).
pub fn parse_serial(serial: &str) -> Result<KernelRun, Error> {
    let s = sections(serial);
    let need = |n: &str| {
        s.get(n).cloned().ok_or_else(|| {
            let tail: String = serial
                .lines()
                .rev()
                .take(15)
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect::<Vec<_>>()
                .join("\n");
            Error::Guest(format!(
                "section '{n}' missing from the serial output; its last lines:\n{tail}"
            ))
        })
    };
    let before = counters(&need("vmstat-before")?);
    let after = counters(&need("vmstat-after")?);
    let vmstat_delta: BTreeMap<String, i64> = after
        .iter()
        // Wrapping: the counters are unsigned longs in the kernel and a garbled log must not panic.
        .map(|(k, v)| (k.clone(), v.wrapping_sub(before.get(k).copied().unwrap_or(0))))
        .collect();
    let replay = need("replay")?;
    let mut windows = Vec::new();
    let mut total = None;
    let mut rc = None;
    // the last progress line (`--progress`)
    let mut progress = None;
    // (task id, counts) of a multi-task replay
    let mut tasks: Vec<(u64, crate::model::TaskCount)> = Vec::new();
    let mut nr_tasks = None;
    // Files the replayer dumped: (name, accesses so far, text).
    let mut dumps: Vec<(String, u64, String)> = Vec::new();
    let mut in_dump = false;
    // control ops' results, each with the index in `dumps` of its first dump
    let mut ctl: Vec<(crate::CtlResult, usize)> = Vec::new();
    for l in replay.lines() {
        if in_dump {
            if l.starts_with(DUMP_END) {
                in_dump = false;
            } else if let Some(d) = dumps.last_mut() {
                d.2.push_str(l);
                d.2.push('\n');
            }
            continue;
        }
        if let Some(rest) = l.strip_prefix(DUMP_PREFIX) {
            let mut it = rest.split_whitespace();
            let name = it.next().unwrap_or("").to_string();
            let n = it.next().and_then(|v| v.parse().ok()).unwrap_or(0);
            dumps.push((name, n, String::new()));
            in_dump = true;
            continue;
        }
        let f: Vec<&str> = l.split_whitespace().collect();
        let num = |k: &str| {
            f.iter()
                .position(|x| *x == k)
                .and_then(|i| f.get(i + 1))
                .and_then(|v| v.parse::<u64>().ok())
        };
        if let Some(rest) = l.strip_prefix(CTL_PREFIX) {
            ctl.push((
                parse_ctl_line(rest).map_err(|why| Error::Guest(format!("a malformed control line '{l}': {why}")))?,
                dumps.len(),
            ));
            continue;
        }
        if l.starts_with(PROGRESS_PREFIX) {
            progress = Some(crate::OomKilled {
                ops: num("ops").unwrap_or(0),
                accesses: num("accesses").unwrap_or(0),
            });
        } else if l.starts_with(WINDOW_PREFIX) {
            windows.push(Window {
                accesses: num("accesses").unwrap_or(0),
                misses: num("misses").unwrap_or(0),
                minor: num("minor").unwrap_or(0),
                ns: num("ns").unwrap_or(0),
                kswapd_ns: num("kswapd_ns").unwrap_or(0),
            });
        } else if let Some(rest) = l.strip_prefix(TASK_PREFIX) {
            let id = rest.split_whitespace().next().and_then(|v| v.parse::<u64>().ok());
            let (Some(id), Some(accesses), Some(misses)) = (id, num("accesses"), num("misses")) else {
                return Err(Error::Guest(format!(
                    "a malformed task line '{l}': expected '{TASK_PREFIX} ID accesses A misses M minor N requests R missed_requests X'"
                )));
            };
            tasks.push((
                id,
                crate::model::TaskCount {
                    accesses,
                    misses,
                    minor: num("minor").unwrap_or(0),
                    requests: num("requests").unwrap_or(0),
                    missed_requests: num("missed_requests").unwrap_or(0),
                },
            ));
        } else if l.starts_with(TOTAL_PREFIX) {
            total = Some((
                num("accesses").unwrap_or(0),
                num("misses").unwrap_or(0),
                num("minor").unwrap_or(0),
            ));
            nr_tasks = num("tasks");
        } else if let Some(r) = l.strip_prefix("lrugen-replay rc ") {
            rc = r.trim().parse::<i32>().ok();
        }
    }
    // SIGKILL (the shell's 128 + 9) with the OOM killer's count moved: the OOM killer ended the
    // replay; its full windows are what it counted
    let oom_killed = (total.is_none() && rc == Some(137) && vmstat_delta.get("oom_kill").is_some_and(|&n| n > 0))
        .then(|| progress.unwrap_or_default());
    if oom_killed.is_some() {
        let sum = |f: fn(&Window) -> u64| windows.iter().map(f).sum::<u64>();
        total = Some((sum(|w| w.accesses), sum(|w| w.misses), sum(|w| w.minor)));
        rc = Some(0);
    }
    let (accesses, misses, minor) =
        total.ok_or_else(|| Error::Guest(format!("the replayer printed no total (exit status {rc:?}):\n{replay}")))?;
    if rc != Some(0) {
        return Err(Error::Guest(format!(
            "the replayer failed (exit status {rc:?}):\n{replay}"
        )));
    }
    // the tasks of a multi-task replay: each once, 0..n, summing to the total
    tasks.sort_by_key(|t| t.0);
    if let Some(n) = nr_tasks {
        let ids: Vec<u64> = tasks.iter().map(|t| t.0).collect();
        if ids != (0..n).collect::<Vec<u64>>() {
            return Err(Error::Guest(format!(
                "the replayer ran {n} tasks but printed the counts of tasks {ids:?}:\n{replay}"
            )));
        }
        let sum = |f: fn(&crate::model::TaskCount) -> u64| tasks.iter().map(|t| f(&t.1)).sum::<u64>();
        if (sum(|t| t.accesses), sum(|t| t.misses), sum(|t| t.minor)) != (accesses, misses, minor) {
            return Err(Error::Guest(format!(
                "the tasks' counts do not add up to the total (accesses {accesses}, misses {misses}, minor {minor}):\n{replay}"
            )));
        }
    } else if !tasks.is_empty() {
        return Err(Error::Guest(format!(
            "task lines in a replay whose total names no tasks:\n{replay}"
        )));
    }
    let last = |n: &str| dumps.iter().rev().find(|d| d.0 == n).map(|d| d.2.clone());
    // each control op's dumps: those after its line, up to the next op's
    let ends: Vec<usize> = ctl.iter().skip(1).map(|c| c.1).chain([dumps.len()]).collect();
    let ctl = ctl
        .into_iter()
        .zip(ends)
        .map(|((mut c, from), to)| {
            for (name, _, text) in &dumps[from..to] {
                match name.as_str() {
                    "ctl.lru_gen" | "ctl.lru_gen_full" | "ctl.memory.stat" | "ctl.proc_vmstat" => c.text = text.clone(),
                    "ctl.vmstat" => c.vmstat_delta = counters(text),
                    _ => {}
                }
            }
            c
        })
        .collect();
    Ok(KernelRun {
        ctl,
        tasks: tasks.into_iter().map(|t| t.1).collect(),
        cpus_online: s.get("cpus-online").map(|t| t.trim().to_string()).unwrap_or_default(),
        damon_stat: s
            .get(crate::initramfs::DAMON_STAT)
            .map(|t| t.trim().to_string())
            .unwrap_or_default(),
        memory_stat_at_end_of_replay: last("memory.stat").map(|t| counters(&t)).unwrap_or_default(),
        child_memory_stat_at_end_of_replay: dumps
            .iter()
            .filter_map(|d| {
                d.0.strip_prefix(crate::initramfs::CHILD_STAT_DUMP)
                    .map(|c| (c.to_string(), counters(&d.2)))
            })
            .collect(),
        smaps_at_end_of_replay: last("smaps").unwrap_or_default(),
        numa_maps_at_end_of_replay: last("numa_maps").unwrap_or_default(),
        memory_tiers: s.get(crate::initramfs::MEMORY_TIERS).cloned().unwrap_or_default(),
        zoneinfo_at_end_of_replay: last("zoneinfo").unwrap_or_default(),
        ftrace: s.get("ftrace").cloned().unwrap_or_default(),
        zoneinfo_before: s.get("zoneinfo-before").cloned().unwrap_or_default(),
        meminfo_before: s.get("meminfo-before").cloned().unwrap_or_default(),
        thp_knobs: [crate::initramfs::THP_ENABLED, crate::initramfs::THP_DEFRAG]
            .iter()
            .filter_map(|k| s.get(*k).map(|t| t.trim().to_string()))
            .collect::<Vec<_>>()
            .join("\n"),
        memory_current_at_end_of_replay: last("memory.current").and_then(|t| t.trim().parse().ok()).unwrap_or(0),
        memory_swap_current_at_end_of_replay: last("memory.swap.current")
            .and_then(|t| t.trim().parse().ok())
            .unwrap_or(0),
        lru_gen_samples: dumps
            .iter()
            .filter(|d| d.0 == "lru_gen")
            .map(|d| (d.1, d.2.clone()))
            .collect(),
        lru_gen_full_samples: dumps
            .iter()
            .filter(|d| d.0 == "lru_gen_full")
            .map(|d| (d.1, d.2.clone()))
            .collect(),
        kernel_release: need("uname")?.trim().to_string(),
        lru_gen_enabled: s.get("enabled").map(|t| t.trim().to_string()).unwrap_or_default(),
        vmstat_delta,
        memory_stat: counters(&need("memory.stat")?),
        memory_events: counters(&need("memory.events")?),
        memory_current: need("memory.current")?.trim().parse().unwrap_or(0),
        memory_swap_current: s
            .get("memory.swap.current")
            .and_then(|t| t.trim().parse().ok())
            .unwrap_or(0),
        lru_gen: s.get("lru_gen").cloned().unwrap_or_default(),
        lru_gen_full: s.get("lru_gen_full").cloned().unwrap_or_default(),
        windows,
        accesses,
        misses,
        minor,
        oom_killed,
        ..KernelRun::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Abridged from a real 6.1 boot (captured with `scripts/regen-kernel-fixtures.sh`), with a
    /// kernel message interleaved and CRLF line ends as a serial console gives them.
    const SAMPLE: &str = "[    1.234] random: crng init done\r\n\
Booting from ROM..=== lrugen begin uname\r\n6.1.0-57-amd64\r\n=== lrugen end uname\r\n\
=== lrugen begin enabled\r\n0x0007\r\n=== lrugen end enabled\r\n\
=== lrugen begin vmstat-before\r\nnr_free_pages 100000\r\npgpgin 10\r\nworkingset_refault_file 0\r\n=== lrugen end vmstat-before\r\n\
=== lrugen begin replay\r\n\
lrugen-replay window 0 accesses 1000 misses 900 minor 0\r\n\
lrugen-replay window 1 accesses 500 misses 100 minor 0 ns 2500000000\r\n\
lrugen-replay total accesses 1500 misses 1000 minor 0 sink 0\r\n\
lrugen-replay rc 0\r\n=== lrugen end replay\r\n\
=== lrugen begin vmstat-after\r\nnr_free_pages 90000\r\npgpgin 4010\r\nworkingset_refault_file 120\r\n=== lrugen end vmstat-after\r\n\
=== lrugen begin memory.stat\r\nanon 4096\r\nfile 31457280\r\n=== lrugen end memory.stat\r\n\
=== lrugen begin memory.events\r\nlow 0\r\nhigh 0\r\nmax 42\r\noom 0\r\noom_kill 0\r\n=== lrugen end memory.events\r\n\
=== lrugen begin memory.current\r\n33550336\r\n=== lrugen end memory.current\r\n\
=== lrugen begin lru_gen\r\nmemcg     2 /t\r\n node     0\r\n          1       1652          0       12097 \r\n          2       1652          0        4096 \r\n          3       1652          0           2 \r\n=== lrugen end lru_gen\r\n\
=== lrugen begin lru_gen_full\r\n=== lrugen end lru_gen_full\r\n=== lrugen done\r\n";

    /// A control op's line and its dumps become one [`crate::CtlResult`]: the errno by name,
    /// what `write` returned, the text written (escapes undone), `lru_gen` after it and the
    /// vmstat counters it moved; a window's `lru_gen` dump is not taken for it.
    #[test]
    fn parses_control_ops() {
        let replay = "lrugen-replay ctl 0 lru_gen errno 0 ret 0 accesses 0\r\n\
lrugen-replay dump ctl.lru_gen 0\r\nmemcg     2 /t\r\n node     0\r\n          0        10          0           3 \r\nlrugen-replay dump-end\r\n\
lrugen-replay dump ctl.vmstat 0\r\nlrugen-replay dump-end\r\n\
lrugen-replay window 0 accesses 1500 misses 1000 minor 0 ns 2500000000\r\n\
lrugen-replay dump lru_gen 1500\r\nmemcg     2 /t\r\nlrugen-replay dump-end\r\n\
lrugen-replay ctl 1 memory.reclaim errno 11 ret -1 accesses 1500 wrote 1M\\x20swappiness=0\r\n\
lrugen-replay dump ctl.lru_gen 1500\r\nmemcg     2 /t\r\n node     0\r\n          1        10          0           0 \r\nlrugen-replay dump-end\r\n\
lrugen-replay dump ctl.vmstat 1500\r\npgscan_file 87\r\npgsteal_file 21\r\nlrugen-replay dump-end\r\n\
lrugen-replay ctl 2 memory.reclaim errno 0 ret 0 accesses 1500 wrote\r\n\
lrugen-replay ctl 3 memory.stat errno 0 ret 0 accesses 1500\r\n\
lrugen-replay dump ctl.memory.stat 1500\r\nanon 4096\r\npgactivate 7\r\nlrugen-replay dump-end\r\n\
lrugen-replay dump ctl.vmstat 1500\r\nlrugen-replay dump-end\r\n\
lrugen-replay ctl 4 vmstat errno 0 ret 0 accesses 1500\r\n\
lrugen-replay dump ctl.proc_vmstat 1500\r\nnr_free_pages 90\r\npgactivate 9\r\nlrugen-replay dump-end\r\n\
lrugen-replay dump ctl.vmstat 1500\r\nlrugen-replay dump-end\r\n\
lrugen-replay total accesses 1500 misses 1000 minor 0 sink 0\r\n";
        let log = SAMPLE.replace(
            "lrugen-replay window 0 accesses 1000 misses 900 minor 0\r\n\
lrugen-replay window 1 accesses 500 misses 100 minor 0 ns 2500000000\r\n\
lrugen-replay total accesses 1500 misses 1000 minor 0 sink 0\r\n",
            replay,
        );
        assert_ne!(log, SAMPLE);
        let r = parse_serial(&log).unwrap();
        assert_eq!(r.ctl.len(), 5);
        // reads of memory.stat and /proc/vmstat keep the text read (not the ops' vmstat moves)
        assert_eq!(
            (r.ctl[3].file.as_str(), r.ctl[3].text.as_str()),
            ("memory.stat", "anon 4096\npgactivate 7\n")
        );
        assert_eq!(
            (r.ctl[4].file.as_str(), r.ctl[4].text.as_str()),
            ("vmstat", "nr_free_pages 90\npgactivate 9\n")
        );
        let (a, b, c) = (&r.ctl[0], &r.ctl[1], &r.ctl[2]);
        assert_eq!(
            (a.id, a.file.as_str(), &a.write, &a.errno, a.ret),
            (0, "lru_gen", &None, &None, Some(0))
        );
        assert!(
            a.text.ends_with("          0        10          0           3 \n"),
            "{:?}",
            a.text
        );
        assert!(a.vmstat_delta.is_empty());
        assert_eq!(b.write.as_deref(), Some("1M swappiness=0"));
        assert_eq!(
            (b.errno.as_deref(), b.ret, b.accesses),
            (Some("EAGAIN"), Some(-1), 1500)
        );
        assert_eq!(b.vmstat_delta["pgsteal_file"], 21);
        assert!(b.text.contains("          1        10 "), "{:?}", b.text);
        assert_eq!((c.write.as_deref(), c.text.as_str()), (Some(""), ""));
        assert_eq!(r.lru_gen_samples.len(), 1, "the window's dump stays a sample");
        let bad = log.replace("errno 11 ret -1", "errno x ret -1");
        let e = parse_serial(&bad).unwrap_err().to_string();
        assert!(
            e.contains("a malformed control line") && e.contains("no number after 'errno'"),
            "{e}"
        );
    }

    #[test]
    fn parses_a_serial_log() {
        let r = parse_serial(SAMPLE).unwrap();
        assert_eq!(r.kernel_release, "6.1.0-57-amd64");
        assert_eq!(r.lru_gen_enabled, "0x0007");
        assert_eq!(r.vmstat_delta["nr_free_pages"], -10000);
        assert_eq!(r.vmstat_delta["pgpgin"], 4000);
        assert_eq!(r.vmstat_delta["workingset_refault_file"], 120);
        assert_eq!(r.memory_stat["file"], 31457280);
        assert_eq!(r.memory_events["max"], 42);
        assert_eq!(r.memory_current, 33550336);
        assert_eq!((r.accesses, r.misses, r.minor), (1500, 1000, 0));
        assert_eq!(r.windows.len(), 2);
        assert_eq!(
            r.windows[1],
            Window {
                accesses: 500,
                misses: 100,
                minor: 0,
                ns: 2_500_000_000,
                kswapd_ns: 0,
            }
        );
        // the replayer's kswapd CPU time (2026-12-07 on): the window's `kswapd_ns`
        let with = SAMPLE.replace("minor 0 ns 2500000000", "minor 0 ns 2500000000 kswapd_ns 700000000");
        let w = parse_serial(&with).unwrap().windows;
        assert_eq!(
            (w[0].kswapd_ns, w[1].ns, w[1].kswapd_ns),
            (0, 2_500_000_000, 700_000_000)
        );
        assert!(r.lru_gen.ends_with("2 \n"), "trailing spaces kept: {:?}", r.lru_gen);
        let lv = r.lru_gen_parsed().unwrap();
        assert_eq!(lv[0].path, "/t");
        assert_eq!(lv[0].gens.iter().map(|g| g.pages[1]).sum::<u64>(), 12097 + 4096 + 2);
    }

    /// `--ftrace`: the trace `/init` dumps after the replay is kept verbatim; a run without it
    /// has none.
    #[test]
    fn keeps_the_ftrace_buffer() {
        assert_eq!(parse_serial(SAMPLE).unwrap().ftrace, "");
        let trace = "# tracer: nop\r\n   lrugen-replay-109     [000] .....   291.643842: age: (try_to_inc_max_seq+0x0/0x8a0) max_seq=6\r\n";
        let log = SAMPLE.replace(
            "=== lrugen done",
            &format!("=== lrugen begin ftrace\r\n{trace}=== lrugen end ftrace\r\n=== lrugen done"),
        );
        let r = parse_serial(&log).unwrap();
        assert_eq!(r.ftrace, trace.replace("\r\n", "\n"));
    }

    /// A replayer the OOM killer ended (the shell reports 128 + SIGKILL, `oom_kill` moved): no
    /// total, no dumps; the run is its full windows and its last progress line, and the counters
    /// `/init` read after it are kept. Killed without `oom_kill` counted, it is a failure.
    #[test]
    fn an_oom_killed_replay_is_a_run_that_says_where_it_died() {
        let killed = SAMPLE
            .replace(
                "lrugen-replay total accesses 1500 misses 1000 minor 0 sink 0\r\nlrugen-replay rc 0\r\n",
                "lrugen-replay progress ops 1000 accesses 0\r\nlrugen-replay progress ops 2000 accesses 1000\r\n\
                 Killed\r\nlrugen-replay rc 137\r\n",
            )
            .replace(
                "lrugen-replay window 1 accesses 500 misses 100 minor 0 ns 2500000000\r\n",
                "",
            );
        let with_kill = killed.replace(
            "workingset_refault_file 120\r\n",
            "workingset_refault_file 120\r\noom_kill 1\r\n",
        );
        let r = parse_serial(&with_kill).unwrap();
        assert_eq!(
            r.oom_killed,
            Some(crate::OomKilled {
                ops: 2000,
                accesses: 1000
            })
        );
        assert_eq!((r.accesses, r.misses, r.windows.len()), (1000, 900, 1));
        assert_eq!(r.vmstat_delta["oom_kill"], 1);
        assert_eq!(r.memory_stat["file"], 31457280);
        let e = parse_serial(&killed).unwrap_err().to_string();
        assert!(e.contains("exit status Some(137)"), "{e}");
        assert_eq!(parse_serial(SAMPLE).unwrap().oom_killed, None);
    }

    #[test]
    fn a_truncated_log_names_what_is_missing() {
        let cut = &SAMPLE[..SAMPLE.find("=== lrugen begin vmstat-after").unwrap()];
        let e = parse_serial(cut).unwrap_err().to_string();
        assert!(e.contains("vmstat-after"), "{e}");
        let failed = SAMPLE.replace("lrugen-replay rc 0", "lrugen-replay rc 1");
        assert!(parse_serial(&failed).unwrap_err().to_string().contains("failed"));
    }

    /// Dumps the replayer prints inside the replay section: `lru_gen` after a window (abridged from
    /// the anon fixture's 6.1 boot) and `memory.stat` before it exits.
    #[test]
    fn parses_the_replayers_dumps() {
        let dumps = "lrugen-replay window 0 accesses 1000 misses 900 minor 0\r\n\
lrugen-replay dump lru_gen 1000\r\nmemcg     1 /\r\n node     0\r\n          0      63928          0           4 \r\n\
memcg     2 /t\r\n node     0\r\n          8       7216        224           0 \r\n          9       5756        597           0 \r\n\
lrugen-replay dump-end\r\n\
lrugen-replay dump lru_gen_full 1000\r\nmemcg     2 /t\r\n node     0\r\n          8       7216        224           0 \r\n\
lrugen-replay dump-end\r\n\
lrugen-replay window 1 accesses 500 misses 100 minor 0\r\n\
lrugen-replay dump memory.stat 1500\r\nanon 8130560\r\nfile 0\r\nlrugen-replay dump-end\r\n\
lrugen-replay dump memory.swap.current 1500\r\n16683008\r\nlrugen-replay dump-end\r\n\
lrugen-replay dump memory.stat:a 1500\r\nanon 4096\r\nfile 0\r\nlrugen-replay dump-end\r\n\
lrugen-replay dump memory.stat:b 1500\r\nanon 8126464\r\nlrugen-replay dump-end\r\n\
lrugen-replay total";
        let log = SAMPLE.replace(
            "lrugen-replay window 0 accesses 1000 misses 900 minor 0\r\nlrugen-replay window 1 accesses 500 misses 100 minor 0 ns 2500000000\r\nlrugen-replay total",
            dumps,
        );
        assert_ne!(log, SAMPLE);
        let r = parse_serial(&log).unwrap();
        assert_eq!(r.windows.len(), 2);
        assert_eq!(r.lru_gen_samples.len(), 1);
        assert_eq!(r.lru_gen_full_samples.len(), 1);
        assert_eq!(r.lru_gen_full_samples[0].0, 1000);
        assert!(r.lru_gen_full_samples[0].1.starts_with("memcg     2 /t\n"));
        let (n, text) = &r.lru_gen_samples[0];
        assert_eq!(*n, 1000);
        assert!(text.ends_with("597           0 \n"), "{text:?}");
        let t = lrugen::reclaim::mglru::debugfs::parse(text)
            .unwrap()
            .into_iter()
            .find(|l| l.path == "/t")
            .unwrap();
        assert_eq!(t.gens.len(), 2);
        assert_eq!(r.memory_stat_at_end_of_replay["anon"], 8130560);
        // the children's memory.stat (tasks in memcgs: `--end memory.stat:NAME=...`)
        let kids: Vec<(&str, i64)> = r
            .child_memory_stat_at_end_of_replay
            .iter()
            .map(|(k, v)| (k.as_str(), v["anon"]))
            .collect();
        assert_eq!(kids, [("a", 4096), ("b", 8126464)]);
        assert_eq!(last_dump(&log, "memory.swap.current").as_deref(), Some("16683008\n"));
        assert_eq!(
            last_dump(&log, "memory.stat").as_deref(),
            Some("anon 8130560\nfile 0\n")
        );
        assert_eq!(last_dump(&log, "zram.mm_stat"), None);
        assert_eq!(r.memory_swap_current_at_end_of_replay, 16683008);
        assert_eq!(r.resident_pages(), 8130560 / 4096);
    }

    /// A multi-task replay's lines, verbatim from Debian 6.12 MGLRU fio with 4 jobs (boot 3 of
    /// `tests/fixtures/multitask`; the tasks print as they finish, in any order): each task's
    /// counts, in task order, summing to the total.
    #[test]
    fn parses_the_tasks_of_a_multi_task_replay() {
        let tasks = "lrugen-replay task 3 accesses 25000 misses 5110 minor 0 requests 0 missed_requests 0 sink 114\r\n\
lrugen-replay task 2 accesses 25000 misses 5058 minor 0 requests 0 missed_requests 0 sink 246\r\n\
lrugen-replay task 0 accesses 25000 misses 5308 minor 0 requests 0 missed_requests 0 sink 158\r\n\
lrugen-replay task 1 accesses 25000 misses 5454 minor 0 requests 9 missed_requests 4 sink 244\r\n\
lrugen-replay total accesses 100000 misses 20930 minor 0 tasks 4 sink 0\r\n";
        let old = "lrugen-replay total accesses 1500 misses 1000 minor 0 sink 0\r\n";
        let log = SAMPLE
            .replace(old, tasks)
            .replace("accesses 1000 misses 900", "accesses 98500 misses 20830");
        let r = parse_serial(&log).unwrap();
        assert_eq!((r.accesses, r.misses), (100_000, 20_930));
        let misses: Vec<u64> = r.tasks.iter().map(|t| t.misses).collect();
        assert_eq!(misses, [5308, 5454, 5058, 5110]);
        assert_eq!((r.tasks[1].requests, r.tasks[1].missed_requests), (9, 4));
        // a task missing, or counts that do not add up, are errors naming what is wrong
        let e = parse_serial(&log.replace("lrugen-replay task 2 ", "lrugen-replay task 7 "))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("ran 4 tasks but printed the counts of tasks [0, 1, 3, 7]"),
            "{e}"
        );
        let e = parse_serial(&log.replace("misses 5058", "misses 5059"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("do not add up"), "{e}");
        let e = parse_serial(&log.replace("task 0 accesses 25000", "task 0 accesses x"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("a malformed task line"), "{e}");
        // a one-task replay has no task lines
        assert!(parse_serial(SAMPLE).unwrap().tasks.is_empty());
    }

    /// Extreme counters in the vmstat sections give a (wrapped) delta, not an overflow panic.
    #[test]
    fn extreme_counters_do_not_overflow() {
        let log = SAMPLE
            .replace("pgpgin 10\r\n", "pgpgin 1\r\n")
            .replace("pgpgin 4010\r\n", &format!("pgpgin {}\r\n", i64::MIN));
        assert_ne!(log, SAMPLE);
        let r = parse_serial(&log).unwrap();
        assert_eq!(r.vmstat_delta["pgpgin"], i64::MIN.wrapping_sub(1));
    }

    /// A garbled log (lines dropped, repeated or replaced by marker fragments and extreme numbers)
    /// gives a run or an error, never a panic. A fixed xorshift sequence keeps it reproducible.
    #[test]
    fn garbled_logs_never_panic() {
        const NOISE: &[&str] = &[
            "=== lrugen begin vmstat-after",
            "=== lrugen end replay",
            "=== lrugen begin ",
            "lrugen-replay dump lru_gen 18446744073709551616",
            "lrugen-replay dump-end",
            "lrugen-replay total accesses -1 misses",
            "lrugen-replay rc 99999999999",
            "pgpgin -9223372036854775808",
            "pgpgin 9223372036854775807",
            "é\u{0}",
            "",
        ];
        let lines: Vec<&str> = SAMPLE.split('\n').collect();
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = |n: usize| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % n as u64) as usize
        };
        let mut oks = 0;
        for _ in 0..2000 {
            let mut log: Vec<&str> = lines.clone();
            for _ in 0..1 + next(4) {
                let at = next(log.len());
                match next(3) {
                    0 => {
                        log.remove(at);
                    }
                    1 => log.insert(at, log[next(log.len())]),
                    _ => log[at] = NOISE[next(NOISE.len())],
                }
            }
            oks += usize::from(parse_serial(&log.join("\n")).is_ok());
        }
        // Some garbled logs still hold every section (a dropped kernel message, say).
        assert!(oks > 0);
    }
}
