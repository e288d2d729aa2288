// SPDX-License-Identifier: GPL-2.0-only
//! The control ops of a run (`lrugen kernel --ctl`) compared between the kernel and the model:
//! each op's return code, the text it wrote (placeholders replaced), and the `lru_gen` text
//! after it, the workload memcg's lruvec taken apart (its `memcg` header line, its generations'
//! sequence numbers and page counts).

use crate::CtlResult;
use lrugen::reclaim::mglru::debugfs::{self, ParsedLruvec};

/// The workload memcg's (`path`) lruvec on node 0 in an `lru_gen` or `lru_gen_full` text.
pub fn lruvec(text: &str, path: &str) -> Option<ParsedLruvec> {
    debugfs::parse(text)
        .ok()?
        .into_iter()
        .find(|l| l.path == path && l.node == 0)
}

/// The `memcg` header line of memcg `path` in an `lru_gen` text, verbatim (its id's width is the
/// kernel's: `%5hu` before 7.x, `%llu` after).
pub fn header(text: &str, path: &str) -> Option<String> {
    text.lines()
        .find(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            f.first() == Some(&"memcg") && f.get(2) == Some(&path)
        })
        .map(str::to_string)
}

/// A written `lru_gen` text with each command's memcg id (its second word) left out: the ids
/// differ where the kernel prints the cgroup id (7.x) and the model its memcg id. Other texts
/// unchanged.
pub fn without_memcg_ids(file: &str, text: &str) -> String {
    if file != "lru_gen" {
        return text.to_string();
    }
    text.split([',', ';', '\n'])
        .map(|c| {
            c.split_whitespace()
                .enumerate()
                .map(|(i, w)| if i == 1 { "_" } else { w })
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect::<Vec<_>>()
        .join(";")
}

/// One op of the two runs side by side.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OpCompare {
    /// The op's id.
    pub id: u32,
    /// The file.
    pub file: String,
    /// The texts written by the kernel's replayer and the model (placeholders replaced).
    pub write: [Option<String>; 2],
    /// The errnos (`None`: success).
    pub errno: [Option<String>; 2],
    /// The workload lruvec's generations after the op: (seq, anon pages, file pages).
    pub gens: [Vec<(u64, u64, u64)>; 2],
    /// Its `memcg` header lines.
    pub header: [Option<String>; 2],
}

impl OpCompare {
    /// Both wrote the same text, the memcg ids aside ([`without_memcg_ids`]).
    pub fn same_write(&self) -> bool {
        let n = |w: &Option<String>| w.as_deref().map(|t| without_memcg_ids(&self.file, t));
        n(&self.write[0]) == n(&self.write[1])
    }
    /// The `memcg` header lines alike but for the id itself: its width and padding compared
    /// (`%5hu` before 7.x, `%llu` after).
    pub fn same_header_format(&self) -> bool {
        let f = |h: &Option<String>| {
            h.as_deref().map(|l| {
                let id = l.split_whitespace().nth(1).unwrap_or("");
                l.replacen(id, "#", 1)
            })
        };
        f(&self.header[0]) == f(&self.header[1])
    }

    /// The same memcg id in the `memcg` header lines.
    pub fn same_memcg_id(&self) -> bool {
        let id = |h: &Option<String>| {
            h.as_deref()
                .and_then(|l| l.split_whitespace().nth(1).map(str::to_string))
        };
        id(&self.header[0]) == id(&self.header[1])
    }

    /// The same return code.
    pub fn same_errno(&self) -> bool {
        self.errno[0] == self.errno[1]
    }
    /// The same generations (sequence numbers).
    pub fn same_seqs(&self) -> bool {
        let s = |g: &Vec<(u64, u64, u64)>| g.iter().map(|x| x.0).collect::<Vec<_>>();
        s(&self.gens[0]) == s(&self.gens[1])
    }
    /// The largest difference of a generation's anon or file pages (the generations paired in
    /// order; meaningful when [`Self::same_seqs`]).
    pub fn worst_pages(&self) -> u64 {
        self.gens[0]
            .iter()
            .zip(&self.gens[1])
            .map(|(k, m)| k.1.abs_diff(m.1).max(k.2.abs_diff(m.2)))
            .max()
            .unwrap_or(0)
    }

    /// [`Self::worst_pages`] relative to the lruvec's pages in the kernel (1.0 when the
    /// generations differ).
    pub fn pages_off(&self) -> f64 {
        if !self.same_seqs() {
            return 1.0;
        }
        self.worst_pages() as f64 / self.kernel_pages().max(1) as f64
    }

    /// The workload lruvec's pages in the kernel after the op.
    pub fn kernel_pages(&self) -> u64 {
        self.gens[0].iter().map(|g| g.1 + g.2).sum()
    }
}

/// The kernel's (`kernel`) and the model's (`model`) results of the same ops, paired by id, with
/// the workload memcg at `path`.
pub fn compare(kernel: &[CtlResult], model: &[CtlResult], path: &str) -> Vec<OpCompare> {
    let gens = |r: Option<&CtlResult>| {
        r.and_then(|r| lruvec(&r.text, path))
            .map(|l| l.gens.iter().map(|g| (g.seq, g.pages[0], g.pages[1])).collect())
            .unwrap_or_default()
    };
    kernel
        .iter()
        .map(|k| {
            let m = model.iter().find(|m| m.id == k.id);
            OpCompare {
                id: k.id,
                file: k.file.clone(),
                write: [k.write.clone(), m.and_then(|m| m.write.clone())],
                errno: [k.errno.clone(), m.and_then(|m| m.errno.clone())],
                gens: [gens(Some(k)), gens(m)],
                header: [header(&k.text, path), m.and_then(|m| header(&m.text, path))],
            }
        })
        .collect()
}

/// Whether a control op read a file of counters (`memory.stat`, `/proc/vmstat`).
pub fn reads_counters(file: &str) -> bool {
    matches!(file, "memory.stat" | "vmstat")
}

/// The numbers of a counters text (`name value` lines), in the text's order.
fn counter_lines(text: &str) -> Vec<(&str, i64)> {
    text.lines()
        .filter_map(|l| {
            let (k, v) = l.split_once(' ')?;
            Some((k, v.trim().parse().ok()?))
        })
        .collect()
}

/// A counter that moved between two reads: (name, the kernel's change, the model's change).
pub type CounterMove = (String, i64, i64);

/// Each read of a counters file ([`reads_counters`]) as the counters that moved since the
/// previous read of the same file (since zero at the first), kernel beside model: per read, its
/// op id and `(name, kernel change, model change)` for every counter either side changed, in the
/// kernel's order (the model's own counters after). A counter one side lacks changes by 0 there.
pub fn counter_moves(kernel: &[CtlResult], model: &[CtlResult]) -> Vec<(u32, Vec<CounterMove>)> {
    use std::collections::BTreeMap;
    let mut prev: [BTreeMap<(String, String), i64>; 2] = Default::default();
    let mut out = Vec::new();
    for k in kernel.iter().filter(|k| k.write.is_none() && reads_counters(&k.file)) {
        let Some(m) = model.iter().find(|m| m.id == k.id) else {
            continue;
        };
        let sides = [counter_lines(&k.text), counter_lines(&m.text)];
        let mut order: Vec<&str> = sides[0].iter().map(|c| c.0).collect();
        for (n, _) in &sides[1] {
            if !order.contains(n) {
                order.push(n);
            }
        }
        let mut delta = [BTreeMap::new(), BTreeMap::new()];
        for (i, side) in sides.iter().enumerate() {
            for &(n, v) in side {
                let key = (k.file.clone(), n.to_string());
                let before = prev[i].insert(key, v).unwrap_or(0);
                delta[i].insert(n, v - before);
            }
        }
        let moved = order
            .into_iter()
            .map(|n| {
                let d = |i: usize| delta[i].get(n).copied().unwrap_or(0);
                (n.to_string(), d(0), d(1))
            })
            .filter(|&(_, a, b)| a != 0 || b != 0)
            .collect();
        out.push((k.id, moved));
    }
    out
}

/// The comparison as a table: per op, what was written, each side's return code, and the
/// workload lruvec's generations after it (`seq:anon/file`, kernel then model); a read of
/// `memory.stat` or `vmstat` shows instead the counters that moved since the previous read of
/// that file ([`counter_moves`], `name kernel/model`).
pub fn table(kernel: &[CtlResult], model: &[CtlResult]) -> String {
    use std::fmt::Write as _;
    let mut s = String::from("control ops (kernel | model): return code, then /t's generations seq:anon/file\n");
    let errno = |e: &Option<String>| e.clone().unwrap_or_else(|| "ok".into());
    let gens = |g: &Vec<(u64, u64, u64)>| {
        g.iter()
            .map(|(s, a, f)| format!("{s}:{a}/{f}"))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let moves = counter_moves(kernel, model);
    for c in compare(kernel, model, "/t") {
        if let Some((_, moved)) = moves.iter().find(|(id, _)| *id == c.id) {
            let at = kernel.iter().find(|k| k.id == c.id).map_or(0, |k| k.accesses);
            let list = moved
                .iter()
                .map(|(n, k, m)| format!("{n} {k}/{m}"))
                .collect::<Vec<_>>()
                .join(", ");
            let _ = writeln!(
                s,
                "{:>3} {} (read at {at} accesses): {} | {}\n      moved (kernel/model): {}",
                c.id,
                c.file,
                errno(&c.errno[0]),
                errno(&c.errno[1]),
                if list.is_empty() { "nothing" } else { &list }
            );
            continue;
        }
        let _ = writeln!(
            s,
            "{:>3} {} {:?}: {} | {}{}\n      kernel {}\n      model  {}",
            c.id,
            c.file,
            c.write[0].as_deref().unwrap_or("(read)"),
            errno(&c.errno[0]),
            errno(&c.errno[1]),
            if c.same_write() {
                ""
            } else {
                " (the model wrote another text)"
            },
            gens(&c.gens[0]),
            gens(&c.gens[1]),
        );
    }
    s
}

/// A capture made with control ops (`lrugen kernel --ctl ... --fixture`) replayed on the model
/// with the kernel's settings and the guest's layout: the op file and the model's results of its
/// control ops.
pub fn model_of_capture(c: &crate::Capture) -> Result<(lrugen_replay::OpFile, Vec<CtlResult>), crate::Error> {
    let ops = c.ops()?;
    let profile = crate::model::profile_for_release(&c.run.kernel_release);
    let mut settings = c.settings.clone();
    settings.model_capacity_pages = c.run.model_capacity_for(&ops).max(1);
    let cfg = crate::model::config(&settings, profile)?;
    let r = crate::model::run_at(&ops, &cfg, &c.layout(&ops))?;
    let res = crate::model::ctl_results(&ops, &r.ctl)?;
    Ok((ops, res))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn res(id: u32, write: &str, errno: Option<&str>, text: &str) -> CtlResult {
        CtlResult {
            id,
            file: "lru_gen".into(),
            write: Some(write.into()),
            errno: errno.map(str::to_string),
            text: text.into(),
            ..Default::default()
        }
    }

    /// Reads of `memory.stat` show what moved since the previous read of it, per side, in the
    /// kernel's order, with a counter only one side has as 0 on the other; writes between them
    /// are not counter reads.
    #[test]
    fn counter_reads_show_what_moved_since_the_last_read() {
        let read = |id, text: &str| CtlResult {
            id,
            file: "memory.stat".into(),
            accesses: u64::from(id) * 500,
            text: text.into(),
            ..Default::default()
        };
        let kernel = [
            read(0, "anon 4096\npgactivate 10\nworkingset_nodes 3\n"),
            res(1, "+ 28 0 3", None, ""),
            read(2, "anon 8192\npgactivate 25\nworkingset_nodes 3\n"),
        ];
        let model = [
            read(0, "anon 4096\npgactivate 12\n"),
            res(1, "+ 2 0 3", None, ""),
            read(2, "anon 4096\npgactivate 40\n"),
        ];
        let m = counter_moves(&kernel, &model);
        let row = |n: &str, k, m| (n.to_string(), k, m);
        assert_eq!(m.len(), 2, "the lru_gen write is no counter read");
        assert_eq!(
            m[0],
            (
                0,
                vec![
                    row("anon", 4096, 4096),
                    row("pgactivate", 10, 12),
                    row("workingset_nodes", 3, 0)
                ]
            )
        );
        assert_eq!(m[1], (2, vec![row("anon", 4096, 0), row("pgactivate", 15, 28)]));
        let t = table(&kernel, &model);
        assert!(t.contains("2 memory.stat (read at 1000 accesses): ok | ok"), "{t}");
        assert!(t.contains("moved (kernel/model): anon 4096/0, pgactivate 15/28"), "{t}");
    }

    #[test]
    fn ops_are_paired_and_compared() {
        let k = "memcg     1 /\n node     0\n          0        100          0           3 \n\
memcg     2 /t\n node     0\n          2        50          10        300 \n          3        10          0          20 \n";
        let m72 = "memcg 1 /\n node     0\n          0        100          0           3 \n\
memcg 2 /t\n node     0\n          2        70          12        290 \n          3        10          0          20 \n";
        let kernel = [res(0, "+ 28 0 3 1 1", None, k)];
        let model = [res(0, "+ 2 0 3 1 1", Some("EINVAL"), m72)];
        let c = compare(&kernel, &model, "/t");
        assert_eq!(c.len(), 1);
        let c = &c[0];
        assert!(c.same_write(), "the memcg ids aside");
        assert!(!c.same_errno());
        assert!(c.same_seqs());
        assert_eq!(c.gens[0], [(2, 10, 300), (3, 0, 20)]);
        assert_eq!(c.pages_off(), 10.0 / 330.0);
        assert_eq!(c.header[0].as_deref(), Some("memcg     2 /t"));
        assert_eq!(c.header[1].as_deref(), Some("memcg 2 /t"));
        assert!(!c.same_header_format(), "padded against unpadded");
        assert!(c.same_memcg_id());
        let t = table(&kernel, &model);
        assert!(t.contains("0 lru_gen \"+ 28 0 3 1 1\": ok | EINVAL"), "{t}");
        assert!(t.contains("kernel 2:10/300 3:0/20"), "{t}");
        // another generation list
        let other = [res(0, "+ 2 0 4 1 1", None, &k.replace("          3 ", "          4 "))];
        let c = &compare(&kernel, &other, "/t")[0];
        assert!(!c.same_seqs() && !c.same_write());
        assert_eq!(c.pages_off(), 1.0);
        assert!(c.same_header_format() && c.same_memcg_id());
        let k72 = [res(0, "+ 28 0 3 1 1", None, &m72.replace("memcg 2 /t", "memcg 28 /t"))];
        let c = &compare(&k72, &model, "/t")[0];
        assert!(c.same_header_format() && !c.same_memcg_id());
        assert_eq!(
            without_memcg_ids("lru_gen", "+ 2 0 3; - 5 0 1 60"),
            "+ _ 0 3;- _ 0 1 60"
        );
        assert_eq!(without_memcg_ids("memory.reclaim", "1M"), "1M");
    }
}
