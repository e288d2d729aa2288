// SPDX-License-Identifier: GPL-2.0-only
//! The model's side of `lrugen kernel --ftrace`: reclaim events of a run, printed as the kernel's
//! tracepoints print them in `/sys/kernel/tracing/trace`, so that a run of the model and a traced
//! boot of the same workload can be read side by side (docs/kernel-tracing.md, "The model's
//! side").
//!
//! Events are asked for in the guest's syntax: a tracepoint (`vmscan/mm_vmscan_lru_shrink_inactive`)
//! or a kprobe on a function the model has a counterpart of (`p:age try_to_inc_max_seq`; the
//! kprobe's fetch arguments are ignored, and the model prints what it knows at that point
//! instead). Each line is `COMM-PID [CPU] ..... SECONDS: EVENT: FIELDS`, the time being the run's
//! clock (`Machine::now_ns`; under `lrugen kernel` the guest's, shared evenly over each window's
//! steps), COMM `kswapd0` for kswapd and `task` for a task (PID its task id). Tracing costs nothing
//! when off: every call site tests one `Option` on a reclaim path, never per access.

use std::fmt::Write as _;

/// An event the model can trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum Event {
    /// `vmscan/mm_vmscan_lru_shrink_inactive`: one `shrink_folio_list` pass of the classic LRU's
    /// `shrink_inactive_list` or of MGLRU's `evict_folios`.
    ShrinkInactive = 1,
    /// `vmscan/mm_vmscan_memcg_reclaim_begin`: `try_to_free_mem_cgroup_pages` starts.
    MemcgReclaimBegin = 2,
    /// `vmscan/mm_vmscan_memcg_reclaim_end`: it returns.
    MemcgReclaimEnd = 4,
    /// A kprobe on `try_to_inc_max_seq`: MGLRU ages a lruvec.
    Age = 8,
    /// A kprobe on `lru_gen_use_mm`: an mm is marked used, so that the next page-table walk
    /// visits it (the kernel: at every context switch to the task; the model: where it switches
    /// tasks, after a major fault, which the task slept in, and when kswapd ran on the CPU).
    UseMm = 16,
    /// A kprobe on `folio_referenced_one`: rmap looks at one mapping of a folio under reclaim
    /// (its address, the start of its VMA, whether the PTE was young).
    Referenced = 32,
    /// `vmscan/mm_vmscan_direct_reclaim_begin`: `try_to_free_pages` starts (an allocation
    /// below its min watermark reclaims directly; `gfp_flags` names its zone's flags).
    DirectReclaimBegin = 64,
    /// `vmscan/mm_vmscan_direct_reclaim_end`: it returns, with the pages it reclaimed.
    DirectReclaimEnd = 128,
}

/// The tracepoints the model has, by their `tracefs` names.
const TRACEPOINTS: [(&str, Event); 5] = [
    ("vmscan/mm_vmscan_lru_shrink_inactive", Event::ShrinkInactive),
    ("vmscan/mm_vmscan_memcg_reclaim_begin", Event::MemcgReclaimBegin),
    ("vmscan/mm_vmscan_memcg_reclaim_end", Event::MemcgReclaimEnd),
    ("vmscan/mm_vmscan_direct_reclaim_begin", Event::DirectReclaimBegin),
    ("vmscan/mm_vmscan_direct_reclaim_end", Event::DirectReclaimEnd),
];

/// The kernel functions a kprobe may name.
const KPROBES: [(&str, Event); 3] = [
    ("try_to_inc_max_seq", Event::Age),
    ("lru_gen_use_mm", Event::UseMm),
    ("folio_referenced_one", Event::Referenced),
];

/// What the model traces, and the text traced so far.
#[derive(Clone, Debug, Default)]
pub struct Ftrace {
    /// The events asked for ([`Event`] bits).
    mask: u32,
    /// Each kprobe's own name.
    kprobe_names: Vec<(Event, String)>,
    /// The trace.
    pub text: String,
}

impl Ftrace {
    /// Parse the events asked for, in `lrugen kernel --ftrace`'s syntax; an event the model has
    /// no counterpart of is an error naming the ones it has.
    pub fn parse(specs: &[String]) -> Result<Ftrace, String> {
        let mut f = Ftrace::default();
        for spec in specs {
            let spec = spec.trim();
            if let Some(rest) = spec.strip_prefix("p:") {
                let mut words = rest.split_whitespace();
                let (name, func) = (words.next().unwrap_or(""), words.next().unwrap_or(""));
                let func = func.split('+').next().unwrap_or("");
                let Some(&(_, ev)) = KPROBES.iter().find(|(k, _)| *k == func) else {
                    return Err(unknown(spec));
                };
                if name.is_empty() || name.contains('/') {
                    return Err(format!("--ftrace `{spec}`: expected `p:NAME FUNCTION`"));
                }
                f.kprobe_names.push((ev, name.to_string()));
                f.mask |= ev as u32;
                continue;
            }
            let full = if spec.contains('/') {
                spec.to_string()
            } else {
                format!("vmscan/{spec}")
            };
            let Some(&(_, ev)) = TRACEPOINTS.iter().find(|(t, _)| *t == full) else {
                return Err(unknown(spec));
            };
            f.mask |= ev as u32;
        }
        Ok(f)
    }

    /// Whether `e` is traced.
    #[inline]
    pub fn on(&self, e: Event) -> bool {
        self.mask & e as u32 != 0
    }

    /// The name `e` prints under: a tracepoint's without its system, a kprobe's its own.
    fn name(&self, e: Event) -> &str {
        match TRACEPOINTS.iter().find(|(_, t)| *t == e) {
            Some((tp, _)) => tp.split_once('/').map_or(tp, |(_, n)| n),
            None => self
                .kprobe_names
                .iter()
                .rev()
                .find(|(k, _)| *k == e)
                .map_or("kprobe", |(_, n)| n.as_str()),
        }
    }

    /// Append one line: event `e` at `now_ns` by `who` (a task id, or `None` for kswapd).
    pub fn emit(&mut self, now_ns: u64, who: Option<u32>, e: Event, fields: std::fmt::Arguments) {
        if !self.on(e) {
            return;
        }
        let (comm, pid) = match who {
            Some(t) => ("task", t),
            None => ("kswapd0", 0),
        };
        let name = self.name(e).to_string();
        let _ = writeln!(
            self.text,
            "{comm:>16}-{pid:<7} [000] ..... {:>5}.{:06}: {name}: {fields}",
            now_ns / 1_000_000_000,
            now_ns % 1_000_000_000 / 1_000,
        );
    }
}

fn unknown(spec: &str) -> String {
    let tps: Vec<&str> = TRACEPOINTS.iter().map(|t| t.0).collect();
    let kps: Vec<&str> = KPROBES.iter().map(|k| k.0).collect();
    format!(
        "--ftrace `{spec}`: the model traces the tracepoints {} and kprobes (`p:NAME FUNCTION`) on {}",
        tps.join(", "),
        kps.join(", ")
    )
}

/// `show_reclaim_flags` of `trace_reclaim_flags(file)`.
pub fn reclaim_flags(file: bool) -> &'static str {
    if file {
        "RECLAIM_WB_FILE|RECLAIM_WB_ASYNC"
    } else {
        "RECLAIM_WB_ANON|RECLAIM_WB_ASYNC"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_guests_syntax_and_refuses_what_the_model_lacks() {
        let f = Ftrace::parse(&[
            "vmscan/mm_vmscan_lru_shrink_inactive".into(),
            "mm_vmscan_memcg_reclaim_end".into(),
            "p:age try_to_inc_max_seq lruvec=$arg1:x64".into(),
        ])
        .unwrap();
        assert!(f.on(Event::ShrinkInactive) && f.on(Event::MemcgReclaimEnd) && f.on(Event::Age));
        assert!(!f.on(Event::MemcgReclaimBegin));
        let e = Ftrace::parse(&["sched/sched_switch".into()]).unwrap_err();
        assert!(
            e.contains("sched/sched_switch") && e.contains("try_to_inc_max_seq"),
            "{e}"
        );
        let mut two = Ftrace::parse(&["p:a try_to_inc_max_seq".into(), "p:u lru_gen_use_mm".into()]).unwrap();
        two.emit(0, Some(1), Event::UseMm, format_args!("x"));
        two.emit(0, Some(1), Event::Age, format_args!("y"));
        assert!(
            two.text.contains(": u: x\n") && two.text.contains(": a: y\n"),
            "{}",
            two.text
        );
        let e = Ftrace::parse(&["p:x walk_pud_range".into()]).unwrap_err();
        assert!(e.contains("walk_pud_range"), "{e}");
        assert!(Ftrace::parse(&["p: try_to_inc_max_seq".into()]).is_err());
    }

    #[test]
    fn lines_look_like_the_kernels() {
        let mut f = Ftrace::parse(&["p:age try_to_inc_max_seq".into(), "mm_vmscan_memcg_reclaim_end".into()]).unwrap();
        f.emit(
            4_916_741_000,
            Some(0),
            Event::Age,
            format_args!("(try_to_inc_max_seq) max_seq=5"),
        );
        f.emit(
            4_916_742_123,
            None,
            Event::MemcgReclaimEnd,
            format_args!("nr_reclaimed=32"),
        );
        f.emit(1, None, Event::MemcgReclaimBegin, format_args!("not traced"));
        assert_eq!(
            f.text,
            "            task-0       [000] .....     4.916741: age: (try_to_inc_max_seq) max_seq=5\n         kswapd0-0       [000] .....     4.916742: mm_vmscan_memcg_reclaim_end: nr_reclaimed=32\n"
        );
    }
}
