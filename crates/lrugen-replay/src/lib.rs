// SPDX-License-Identifier: GPL-2.0-only
//! The op file: lrugen's operation stream in a compact text form that the guest replayer reads.
//!
//! ```text
//! lrugen-ops 1
//! window 1000              # print miss counts every 1000 measured accesses
//! file 0 data/file0 16384  # file id, path relative to the data mount, pages
//! file 1 data/file1 512 normal  # optional advice: random (the default) or normal
//! anon 4096                # an anonymous region of 4096 pages (optional; `anon 4096 hugepage`:
//!                          # advised MADV_HUGEPAGE)
//! r 0 123                  # buffered pread of page 123 of file 0
//! p 0 123                  # buffered pwrite of the whole page 123 of file 0
//! m 0 123                  # a load from page 123 of file 0 through a shared mmap
//! l 17                     # a load from anon page 17
//! s 17                     # a store to anon page 17
//! w 0                      # measure from here on (lines before are warm-up, e.g. populating)
//! ```
//!
//! Blank lines and `#` comments are ignored. Without a `w` line every access is measured.
//!
//! Version 2 (`lrugen-ops 2`) adds tasks: each `task N` line (N = 0, 1, … in order) opens the
//! section of task N, a process of its own that replays the ops below it until the next `task`
//! line; an `anon` line inside a section declares that task's own anon region, and `w` marks where
//! that task's measurement starts. Files are declared before the first `task` line and shared by
//! every task. Two more ops: `t NS` (think: sleep NS nanoseconds) and `q` (the end of a benchmark
//! request: per-request counts). A version 1 file is read as one task.
//!
//! ```text
//! lrugen-ops 2
//! window 1000
//! file 0 data/file0 16384
//! task 0
//! anon 64
//! r 0 12
//! q
//! task 1
//! w 0
//! r 0 7
//! t 20000
//! ```
//!
//! Version 3 (`lrugen-ops 3`) is version 2 with control ops: `c FILE TEXT` writes TEXT (escapes
//! undone, placeholders such as `{max_seq}` replaced when it runs) to `lru_gen` or the replayer's
//! memcg's `memory.reclaim`, `cr FILE` reads `lru_gen` or `lru_gen_full`; after each the replayer
//! prints its result ([`CTL_PREFIX`]). A file with any is written as version 3, others as before.
//!
//! Version 4 (`lrugen-ops 4`) is version 3 with memcgs: `task N memcg NAME` puts task N in
//! `NAME`, a child of the workload memcg (one path component: letters, digits, `_`, `-`, `.`);
//! in a file that names one, every task names one. The replayer is started in task 0's memcg and
//! each task moves itself into its own right after it is forked (`--memcgs DIR`, the workload
//! memcg's directory), before the tasks are released. A file with memcgs is written as version 4.
//!
//! Version 6 (`lrugen-ops 6`) is version 5 with two more files to read: `cr memory.stat` (the
//! replayer's memcg's) and `cr vmstat` (`/proc/vmstat`), whose text the replayer prints whole
//! after the op. A file that reads either is written as version 6.
//!
//! Version 7 (`lrugen-ops 7`) is version 6 with process ops: `fork` … `exit` (a child process
//! replays the ops between them while its parent waits), `mmap R PAGES`, `munmap R FIRST PAGES`,
//! `madvise R FIRST PAGES ADVICE` and `l R PAGE`/`s R PAGE` on numbered anonymous regions of the
//! current process (region 0: the task's `anon` line). A file with any is written as version 7.
//!
//! Version 8 (`lrugen-ops 8`) is version 7 with `mbind R FIRST PAGES preferred NODE` and
//! `mbind R FIRST PAGES default`: the NUMA memory policy of a range of a region (`mbind(2)`,
//! `MPOL_PREFERRED` of one node or `MPOL_DEFAULT`), which places the pages faulted there after it.
//! A file with any is written as version 8.
//!
//! This module has no dependencies so the host side (`lrugen-kernel`) writes what the guest reads.

use std::fmt;

/// The largest file or anon region an op file may declare, in pages (16 TiB): the replayer maps
/// and tracks them whole.
pub const MAX_PAGES: u64 = 1 << 32;

/// One operation of the replay.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReplayOp {
    /// Buffered `pread` of one 4 KiB page.
    Read { file: u32, index: u64 },
    /// Buffered `pwrite` of one whole 4 KiB page (an uncached page is not read first).
    Write { file: u32, index: u64 },
    /// A load from one page of a file mapped shared and read-only.
    MmapLoad { file: u32, index: u64 },
    /// A load from an anon page.
    Load { vpn: u64 },
    /// A store to an anon page.
    Store { vpn: u64 },
    /// Measurement starts here.
    MeasureStart,
    /// Think time: the task sleeps this many nanoseconds (version 2).
    Think { ns: u64 },
    /// The benchmark request the ops since the previous one belong to ends here (version 2).
    RequestEnd,
    /// Control-file op `id` of [`OpFile::ctl`] (version 3): a write of a text to a control file
    /// (`c FILE TEXT`) or a read of one (`cr FILE`), each followed by a dump of `lru_gen`.
    Ctl { id: u32 },
    /// `fork` (version 7): the process forks a child, which replays the ops up to the matching
    /// [`ReplayOp::Exit`] while the parent waits for it; the parent then goes on after the `Exit`.
    /// The child has a copy of the parent's regions (copy-on-write, as `fork` makes it).
    Fork,
    /// `exit` (version 7): the child of the matching [`ReplayOp::Fork`] exits, its address space
    /// torn down (`exit_mmap`).
    Exit,
    /// `mmap R PAGES` (version 7): map `pages` pages of anonymous private read-write memory as
    /// region `region` (1 and up; region 0 is the task's `anon` line) of the current process.
    Mmap { region: u16, pages: u64 },
    /// `munmap R FIRST PAGES` (version 7): unmap pages `first..first + pages` of region `region`.
    Munmap { region: u16, first: u32, pages: u32 },
    /// `madvise R FIRST PAGES ADVICE` (version 7): `madvise` pages `first..first + pages` of
    /// region `region`.
    Madvise {
        region: u16,
        advice: Advice,
        first: u32,
        pages: u32,
    },
    /// `mbind R FIRST PAGES preferred NODE` or `… default` (version 8): the memory policy of
    /// pages `first..first + pages` of region `region`: `MPOL_PREFERRED` of node `node`, or
    /// `MPOL_DEFAULT` when `node` is [`MBIND_DEFAULT`]. Pages already present stay where they are
    /// (no `MPOL_MF_MOVE`); faults after it allocate by it.
    Mbind {
        region: u16,
        node: u16,
        first: u32,
        pages: u32,
    },
    /// `l R PAGE` with R ≥ 1 (version 7): a load from page `page` of region `region`.
    RegionLoad { region: u16, page: u64 },
    /// `s R PAGE` with R ≥ 1 (version 7): a store to page `page` of region `region`.
    RegionStore { region: u16, page: u64 },
}

/// [`ReplayOp::Mbind`]'s node meaning `MPOL_DEFAULT`.
pub const MBIND_DEFAULT: u16 = u16::MAX;

/// The highest node an `mbind … preferred NODE` may name (the replayer's node mask is one word).
pub const MAX_MBIND_NODE: u64 = 63;

/// The advice of a `madvise` op (version 7): the `MADV_*` value of the same name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Advice {
    /// `MADV_NORMAL`.
    Normal,
    /// `MADV_RANDOM`.
    Random,
    /// `MADV_SEQUENTIAL`.
    Sequential,
    /// `MADV_DONTNEED`: the range is zapped; anon pages read back as zeroes.
    DontNeed,
    /// `MADV_COLD`.
    Cold,
    /// `MADV_PAGEOUT`.
    PageOut,
    /// `MADV_HUGEPAGE`.
    HugePage,
    /// `MADV_NOHUGEPAGE`.
    NoHugePage,
}

impl Advice {
    /// Every advice, in the order of [`Advice::name`]'s list.
    pub const ALL: [Advice; 8] = [
        Advice::Normal,
        Advice::Random,
        Advice::Sequential,
        Advice::DontNeed,
        Advice::Cold,
        Advice::PageOut,
        Advice::HugePage,
        Advice::NoHugePage,
    ];

    /// The word in a `madvise` op.
    pub fn name(self) -> &'static str {
        match self {
            Advice::Normal => "normal",
            Advice::Random => "random",
            Advice::Sequential => "sequential",
            Advice::DontNeed => "dontneed",
            Advice::Cold => "cold",
            Advice::PageOut => "pageout",
            Advice::HugePage => "hugepage",
            Advice::NoHugePage => "nohugepage",
        }
    }

    /// The advice named `s`.
    pub fn from_name(s: &str) -> Option<Advice> {
        Advice::ALL.into_iter().find(|a| a.name() == s)
    }
}

/// Regions a process of the replay may have: ids 0 (the task's `anon` line) to
/// `MAX_REGIONS - 1`.
pub const MAX_REGIONS: u64 = 1 << 16;

/// A region's pages, as the parser tracks them in the process that has it: its size and the
/// ranges `munmap` took out, which no later op may touch.
#[derive(Clone, Debug, Default)]
struct RegionCheck {
    pages: u64,
    holes: Vec<(u64, u64)>,
}

impl RegionCheck {
    fn unmapped(&self, page: u64) -> bool {
        self.holes.iter().any(|&(a, b)| (a..b).contains(&page))
    }

    fn overlaps_hole(&self, first: u64, pages: u64) -> bool {
        self.holes.iter().any(|&(a, b)| first < b && a < first + pages)
    }
}

impl ReplayOp {
    /// Whether it is an access (`r`, `p`, `m`, `l`, `s`): what lockstep's rounds count.
    pub fn is_access(&self) -> bool {
        matches!(
            self,
            ReplayOp::Read { .. }
                | ReplayOp::Write { .. }
                | ReplayOp::MmapLoad { .. }
                | ReplayOp::Load { .. }
                | ReplayOp::Store { .. }
                | ReplayOp::RegionLoad { .. }
                | ReplayOp::RegionStore { .. }
        )
    }

    /// Whether it is a process op of version 7 (`fork`, `exit`, `mmap`, `munmap`, `madvise`, or
    /// an access of a region other than 0).
    pub fn is_process_op(&self) -> bool {
        matches!(
            self,
            ReplayOp::Fork
                | ReplayOp::Exit
                | ReplayOp::Mmap { .. }
                | ReplayOp::Munmap { .. }
                | ReplayOp::Madvise { .. }
                | ReplayOp::Mbind { .. }
                | ReplayOp::RegionLoad { .. }
                | ReplayOp::RegionStore { .. }
        )
    }
}

/// The control files the replayer writes or reads at an op's position (version 3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CtlTarget {
    /// `/sys/kernel/debug/lru_gen`: written (`+`/`-` commands) or read.
    LruGen,
    /// `/sys/kernel/debug/lru_gen_full`: read only.
    LruGenFull,
    /// The replayer's own memcg's `memory.reclaim` (found through `/proc/self/cgroup`): write only.
    MemoryReclaim,
    /// The replayer's own memcg's `memory.stat`: read only (version 6).
    MemoryStat,
    /// `/proc/vmstat`: read only (version 6).
    Vmstat,
}

impl CtlTarget {
    /// Every target.
    pub const ALL: [CtlTarget; 5] = [
        CtlTarget::LruGen,
        CtlTarget::LruGenFull,
        CtlTarget::MemoryReclaim,
        CtlTarget::MemoryStat,
        CtlTarget::Vmstat,
    ];

    /// The name in an op file (lrugen's control-script name).
    pub fn name(self) -> &'static str {
        match self {
            CtlTarget::LruGen => "lru_gen",
            CtlTarget::LruGenFull => "lru_gen_full",
            CtlTarget::MemoryReclaim => "memory.reclaim",
            CtlTarget::MemoryStat => "memory.stat",
            CtlTarget::Vmstat => "vmstat",
        }
    }

    /// Whether the replayer can write it.
    pub fn writable(self) -> bool {
        matches!(self, CtlTarget::LruGen | CtlTarget::MemoryReclaim)
    }

    /// The op-file version that first has it.
    pub fn since_version(self) -> u32 {
        match self {
            CtlTarget::MemoryStat | CtlTarget::Vmstat => 6,
            _ => 3,
        }
    }

    /// The name of the dump of its text after an op ([`DUMP_PREFIX`] `ctl.NAME`): the file's
    /// own name, but `proc_vmstat` for `/proc/vmstat` (`ctl.vmstat` is every op's dump of the
    /// counters it moved).
    pub fn dump_name(self) -> &'static str {
        match self {
            CtlTarget::Vmstat => "proc_vmstat",
            t => t.name(),
        }
    }

    /// Whether the replayer can read it.
    pub fn readable(self) -> bool {
        self != CtlTarget::MemoryReclaim
    }

    /// By name.
    pub fn from_name(s: &str) -> Option<CtlTarget> {
        CtlTarget::ALL.into_iter().find(|t| t.name() == s)
    }
}

/// A control-file op: write `write` to `file` (`Some`, the bytes as `echo -n` writes them, in
/// one `write` call; placeholders such as `{max_seq}` are replaced when it runs: see
/// [`expand_placeholders`]), or read it (`None`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CtlOp {
    /// The file.
    pub file: CtlTarget,
    /// The text written, or `None` for a read.
    pub write: Option<String>,
}

/// `text` with `\\`, `#`, control characters, non-ASCII bytes and white space at either end
/// escaped (`\\`, `\n`, `\t`, `\xHH`), so that it fits on an op-file line whatever it holds.
pub fn escape_text(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = String::with_capacity(b.len());
    for (i, &c) in b.iter().enumerate() {
        let edge = i == 0 || i + 1 == b.len();
        match c {
            b'\\' => out.push_str("\\\\"),
            b'\n' => out.push_str("\\n"),
            b'\t' => out.push_str("\\t"),
            b' ' if edge => out.push_str("\\x20"),
            b'#' | 0..=0x1f | 0x7f..=0xff => out.push_str(&format!("\\x{c:02x}")),
            _ => out.push(c as char),
        }
    }
    out
}

/// The text [`escape_text`] escaped.
pub fn unescape_text(s: &str) -> Result<String, String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'\\' {
            out.push(b[i]);
            i += 1;
            continue;
        }
        match b.get(i + 1) {
            Some(b'\\') => out.push(b'\\'),
            Some(b'n') => out.push(b'\n'),
            Some(b't') => out.push(b'\t'),
            Some(b'x') => {
                let hex = s
                    .get(i + 2..i + 4)
                    .and_then(|h| u8::from_str_radix(h, 16).ok())
                    .filter(|_| b[i + 2..i + 4].iter().all(u8::is_ascii_hexdigit))
                    .ok_or_else(|| format!("'\\x' at byte {i}: expected two hex digits"))?;
                out.push(hex);
                i += 4;
                continue;
            }
            _ => return Err(format!("'\\' at byte {i}: expected \\\\, \\n, \\t or \\xHH")),
        }
        i += 2;
    }
    String::from_utf8(out).map_err(|_| "the text is not UTF-8".to_string())
}

/// The placeholders a written text may hold, replaced when the op runs with what an agent reads
/// off `lru_gen` first (the names of lrugen's control scripts): `{memcg}` (the id of the
/// replayer's memcg), `{node}` (0), `{max_seq}`, `{min_seq_anon}`, `{min_seq_file}` and
/// `{min_seq}` (the smaller) of its lruvec on node 0, each with an optional `+N` or `-N`.
pub const PLACEHOLDERS: [&str; 6] = ["memcg", "node", "max_seq", "min_seq", "min_seq_anon", "min_seq_file"];

/// A placeholder of a written text: its name (one of [`PLACEHOLDERS`]), its `+N`/`-N`, and where
/// it is in the text (braces included).
pub type Placeholder = (&'static str, i64, std::ops::Range<usize>);

/// The placeholders of `text`, in order; an error names a malformed or unknown one. Shared by the
/// replayer and lrugen's control scripts (`lrugen::control`), which check a script's texts with
/// it before a run starts.
pub fn placeholders(text: &str) -> Result<Vec<Placeholder>, String> {
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(open) = text[i..].find('{').map(|o| i + o) {
        let close = text[open..]
            .find('}')
            .map(|c| open + c)
            .ok_or_else(|| format!("'{}': a `{{` without its `}}`", &text[open..]))?;
        let inner = &text[open + 1..close];
        let (name, off) = match inner.find(['+', '-']) {
            Some(at) => {
                let digits = &inner[at + 1..];
                let n: i64 = digits
                    .parse()
                    .ok()
                    .filter(|_| !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()))
                    .ok_or_else(|| format!("{{{inner}}}: expected a whole number after `{}`", &inner[at..=at]))?;
                (&inner[..at], if &inner[at..=at] == "-" { -n } else { n })
            }
            None => (inner, 0),
        };
        let known = PLACEHOLDERS.into_iter().find(|p| *p == name).ok_or_else(|| {
            format!(
                "{{{inner}}}: unknown name '{name}': expected one of {}",
                PLACEHOLDERS.join(", ")
            )
        })?;
        out.push((known, off, open..close + 1));
        i = close + 1;
    }
    if let Some(c) = text[i..].find('}') {
        return Err(format!("'{}': a `}}` without its `{{`", &text[i + c..]));
    }
    Ok(out)
}

/// `text` with its placeholders replaced by `value(name)`; an error names a malformed or
/// unknown placeholder, one whose value is unknown (`None`) or one that would be negative.
pub fn expand_placeholders(text: &str, value: &dyn Fn(&str) -> Option<u64>) -> Result<String, String> {
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    for (name, off, span) in placeholders(text)? {
        let shown = &text[span.clone()];
        let base = value(name).ok_or_else(|| format!("{shown}: no value for {name}"))?;
        let v = base as i64 + off;
        if v < 0 {
            return Err(format!("{shown}: {name} is {base}, so the value would be {v}"));
        }
        out.push_str(&text[last..span.start]);
        out.push_str(&v.to_string());
        last = span.end;
    }
    out.push_str(&text[last..]);
    Ok(out)
}

/// What the placeholders of a written text stand for, read off an `lru_gen_full` text: the
/// lruvec on node 0 of the memcg at `memcg_path` (`/t`): its id, its `max_seq` (the last
/// generation) and each type's `min_seq` (the first generation whose count for that type is not
/// marked `x`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LruvecSeqs {
    /// The memcg's id.
    pub memcg: u64,
    /// `max_seq`.
    pub max_seq: u64,
    /// `min_seq` of anon and file.
    pub min_seq: [u64; 2],
}

impl LruvecSeqs {
    /// Read from an `lru_gen_full` text; `None` if the memcg or its node 0 is not there.
    pub fn from_lru_gen_full(text: &str, memcg_path: &str) -> Option<LruvecSeqs> {
        let mut memcg = None;
        let mut in_node0 = false;
        let mut out: Option<LruvecSeqs> = None;
        for line in text.lines() {
            let f: Vec<&str> = line.split_whitespace().collect();
            match f.as_slice() {
                ["memcg", id, path @ ..] => {
                    if out.is_some() {
                        break;
                    }
                    memcg = (path.first() == Some(&memcg_path) || (path.is_empty() && memcg_path == "/"))
                        .then(|| id.parse::<u64>().ok())
                        .flatten();
                    in_node0 = false;
                }
                ["node", n] => {
                    if out.is_some() {
                        break;
                    }
                    in_node0 = memcg.is_some() && *n == "0";
                }
                [seq, age, anon, file] if in_node0 && age.bytes().all(|b| b.is_ascii_digit()) => {
                    let Ok(seq) = seq.parse::<u64>() else { continue };
                    let o = out.get_or_insert(LruvecSeqs {
                        memcg: memcg.unwrap_or(0),
                        max_seq: seq,
                        min_seq: [u64::MAX; 2],
                    });
                    o.max_seq = seq;
                    for (t, col) in [anon, file].into_iter().enumerate() {
                        if !col.ends_with('x') && o.min_seq[t] == u64::MAX {
                            o.min_seq[t] = seq;
                        }
                    }
                }
                _ => {}
            }
        }
        out.filter(|o| o.min_seq.iter().all(|&s| s != u64::MAX))
    }

    /// The value of placeholder `name`.
    pub fn value(&self, name: &str) -> Option<u64> {
        Some(match name {
            "memcg" => self.memcg,
            "node" => 0,
            "max_seq" => self.max_seq,
            "min_seq_anon" => self.min_seq[0],
            "min_seq_file" => self.min_seq[1],
            "min_seq" => self.min_seq[0].min(self.min_seq[1]),
            _ => return None,
        })
    }
}

/// The access-pattern advice a file is opened and mapped with.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FileAdvice {
    /// `POSIX_FADV_RANDOM` on the descriptor, `MADV_RANDOM` on the mapping: no read-ahead, no
    /// mmap read-around, and (from 6.3, `vma_has_recency`) young PTEs of the mapping ignored.
    #[default]
    Random,
    /// `POSIX_FADV_NORMAL` and `MADV_NORMAL`: the kernel's default read-ahead (as large as the
    /// disk's `read_ahead_kb`) and read-around.
    Normal,
}

impl FileAdvice {
    /// The word in a `file` line.
    pub fn name(self) -> &'static str {
        match self {
            FileAdvice::Random => "random",
            FileAdvice::Normal => "normal",
        }
    }
}

/// A file the ops name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReplayFile {
    /// Id used by ops.
    pub id: u32,
    /// Path relative to the data directory given to the replayer.
    pub path: String,
    /// Size in pages.
    pub pages: u64,
    /// Advice.
    pub advice: FileAdvice,
}

/// A task of a multi-task op file besides task 0: a process of its own.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReplayTask {
    /// Its anon region, pages (0: none).
    pub anon_pages: u64,
    /// Whether its anon region is advised `MADV_HUGEPAGE` (`anon N hugepage`).
    pub anon_hugepage: bool,
    /// Its ops.
    pub ops: Vec<ReplayOp>,
}

/// A parsed op file.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OpFile {
    /// Measured accesses per reported window (0: one window), counted over all tasks.
    pub window: u64,
    /// Files (shared by all tasks).
    pub files: Vec<ReplayFile>,
    /// Task 0's anon region size in pages (0: none).
    pub anon_pages: u64,
    /// Whether task 0's anon region is advised `MADV_HUGEPAGE` (`anon N hugepage`): the replayer
    /// maps it 2 MiB-aligned and advises it before its first access, so that the guest's
    /// `transparent_hugepage` `madvise` (or `always`) serves its faults with 2 MiB folios where
    /// they fit; its stores write without reading first, as the model's do (a load first would
    /// map the huge zero page; docs/thp.md).
    pub anon_hugepage: bool,
    /// Task 0's ops.
    pub ops: Vec<ReplayOp>,
    /// Tasks 1, 2, … (empty: one task). A file with more than one task, think ops or request
    /// marks is written as version 2.
    pub tasks: Vec<ReplayTask>,
    /// The control-file ops, in the order of the file ([`ReplayOp::Ctl`] names one by its place
    /// here). A file with any is written as version 3.
    pub ctl: Vec<CtlOp>,
    /// The memcg of each task (index = task), a child of the workload memcg; empty when the
    /// file names none. A file with any is written as version 4.
    pub memcgs: Vec<String>,
    /// Lockstep (`lockstep K`, version 5; 0: none): the tasks advance in rounds, each doing
    /// its next `K` accesses (`r`, `p`, `m`, `l`, `s`) and then waiting for every task still
    /// replaying to have done as many, so that the order of the tasks' accesses is fixed to
    /// within a round, whatever the guest's scheduler and the emulator's vCPU switching make of
    /// their speeds. Only with several tasks.
    pub lockstep: u32,
}

/// Whether `name` can be a task's memcg: one cgroup path component of letters, digits, `_`, `-`
/// and `.`, not `.` or `..`, at most 64 bytes.
pub fn valid_memcg_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name != "."
        && name != ".."
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
}

/// Parses a number.
fn number(t: &str) -> Option<u64> {
    t.parse::<u64>().ok()
}

/// The highest version this module reads.
pub const VERSION: u32 = 8;

/// Tasks an op file may have (the replayer forks one process each).
pub const MAX_TASKS: u64 = 1024;

/// A malformed op file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpFileError {
    /// 1-based line.
    pub line: usize,
    /// What was wrong.
    pub msg: String,
}

impl fmt::Display for OpFileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "op file line {}: {}", self.line, self.msg)
    }
}

impl std::error::Error for OpFileError {}

impl OpFile {
    /// Number of tasks (at least 1).
    pub fn nr_tasks(&self) -> usize {
        1 + self.tasks.len()
    }

    /// Task `i`'s anon pages and ops (task 0: `anon_pages` and `ops`).
    pub fn task(&self, i: usize) -> (u64, &[ReplayOp]) {
        if i == 0 {
            (self.anon_pages, &self.ops)
        } else {
            let t = &self.tasks[i - 1];
            (t.anon_pages, &t.ops)
        }
    }

    /// Whether task `i`'s anon region is advised `MADV_HUGEPAGE`.
    pub fn anon_hugepage(&self, i: usize) -> bool {
        if i == 0 {
            self.anon_hugepage
        } else {
            self.tasks[i - 1].anon_hugepage
        }
    }

    /// Whether the replay has anon memory of its own: a task's `anon` region or an `mmap` op.
    pub fn has_anon(&self) -> bool {
        (0..self.nr_tasks()).any(|i| self.task(i).0 > 0) || self.all_ops().any(|o| matches!(o, ReplayOp::Mmap { .. }))
    }

    /// Every op of every task, task 0 first.
    pub fn all_ops(&self) -> impl Iterator<Item = &ReplayOp> {
        self.ops.iter().chain(self.tasks.iter().flat_map(|t| t.ops.iter()))
    }

    /// The format version [`Self::to_text`] writes: 1 unless there are several tasks or ops of
    /// version 2 (so that version 1 files read and written back are unchanged), 3 with control
    /// ops, 4 with memcgs, 5 in lockstep.
    pub fn version(&self) -> u32 {
        if self.all_ops().any(|o| matches!(o, ReplayOp::Mbind { .. })) {
            return 8;
        }
        if self.all_ops().any(ReplayOp::is_process_op) {
            return 7;
        }
        if self.ctl.iter().any(|c| c.file.since_version() > 3) {
            return 6;
        }
        if self.lockstep > 0 {
            return 5;
        }
        if !self.memcgs.is_empty() {
            return 4;
        }
        if self.all_ops().any(|o| matches!(o, ReplayOp::Ctl { .. })) {
            return 3;
        }
        let v2 = !self.tasks.is_empty()
            || self
                .all_ops()
                .any(|o| matches!(o, ReplayOp::Think { .. } | ReplayOp::RequestEnd));
        if v2 {
            2
        } else {
            1
        }
    }

    /// Serialize.
    pub fn to_text(&self) -> String {
        use fmt::Write as _;
        let n: usize = self.ops.len() + self.tasks.iter().map(|t| t.ops.len()).sum::<usize>();
        let mut s = String::with_capacity(16 * n + 64);
        let version = self.version();
        let _ = writeln!(s, "lrugen-ops {version}");
        let _ = writeln!(s, "window {}", self.window);
        if self.lockstep > 0 {
            let _ = writeln!(s, "lockstep {}", self.lockstep);
        }
        for f in &self.files {
            let _ = match f.advice {
                FileAdvice::Random => writeln!(s, "file {} {} {}", f.id, f.path, f.pages),
                a => writeln!(s, "file {} {} {} {}", f.id, f.path, f.pages, a.name()),
            };
        }
        for i in 0..self.nr_tasks() {
            let (anon, ops) = self.task(i);
            if let Some(m) = self.memcgs.get(i) {
                let _ = writeln!(s, "task {i} memcg {m}");
            } else if version >= 2 {
                let _ = writeln!(s, "task {i}");
            }
            if anon > 0 && self.anon_hugepage(i) {
                let _ = writeln!(s, "anon {anon} hugepage");
            } else if anon > 0 {
                let _ = writeln!(s, "anon {anon}");
            }
            for op in ops {
                let _ = match op {
                    ReplayOp::Read { file, index } => writeln!(s, "r {file} {index}"),
                    ReplayOp::Write { file, index } => writeln!(s, "p {file} {index}"),
                    ReplayOp::MmapLoad { file, index } => writeln!(s, "m {file} {index}"),
                    ReplayOp::Load { vpn } => writeln!(s, "l {vpn}"),
                    ReplayOp::Store { vpn } => writeln!(s, "s {vpn}"),
                    ReplayOp::MeasureStart => writeln!(s, "w 0"),
                    ReplayOp::Think { ns } => writeln!(s, "t {ns}"),
                    ReplayOp::RequestEnd => writeln!(s, "q"),
                    ReplayOp::Fork => writeln!(s, "fork"),
                    ReplayOp::Exit => writeln!(s, "exit"),
                    ReplayOp::Mmap { region, pages } => writeln!(s, "mmap {region} {pages}"),
                    ReplayOp::Munmap { region, first, pages } => writeln!(s, "munmap {region} {first} {pages}"),
                    ReplayOp::Madvise {
                        region,
                        advice,
                        first,
                        pages,
                    } => writeln!(s, "madvise {region} {first} {pages} {}", advice.name()),
                    ReplayOp::Mbind {
                        region,
                        node: MBIND_DEFAULT,
                        first,
                        pages,
                    } => writeln!(s, "mbind {region} {first} {pages} default"),
                    ReplayOp::Mbind {
                        region,
                        node,
                        first,
                        pages,
                    } => writeln!(s, "mbind {region} {first} {pages} preferred {node}"),
                    ReplayOp::RegionLoad { region, page } => writeln!(s, "l {region} {page}"),
                    ReplayOp::RegionStore { region, page } => writeln!(s, "s {region} {page}"),
                    ReplayOp::Ctl { id } => match self.ctl.get(*id as usize) {
                        Some(CtlOp { file, write: Some(t) }) if t.is_empty() => writeln!(s, "c {}", file.name()),
                        Some(CtlOp { file, write: Some(t) }) => {
                            writeln!(s, "c {} {}", file.name(), escape_text(t))
                        }
                        Some(CtlOp { file, write: None }) => writeln!(s, "cr {}", file.name()),
                        None => writeln!(s, "# control op {id} is missing"),
                    },
                };
            }
        }
        s
    }

    /// Whether some op writes file `id` (the replayer then opens it read-write and the guest
    /// mounts the data disk read-write).
    pub fn writes(&self, id: u32) -> bool {
        self.all_ops()
            .any(|o| matches!(o, ReplayOp::Write { file, .. } if *file == id))
    }

    /// Parse, checking that every op names a declared file and stays within its size (and, in
    /// version 2, that tasks are declared `task 0`, `task 1`, … in order, with every op, `anon`
    /// and `w` inside a task's section and every file declared before the first task).
    pub fn parse(text: &str) -> Result<OpFile, OpFileError> {
        let mut out = OpFile::default();
        let mut version = 0u32;
        // the task whose section this is (version 1: always task 0), and whether its anon
        // region was declared
        let mut cur: Option<usize> = None;
        let mut seen_anon = false;
        // version 7: the current task's processes, innermost last (the line of its `fork`, its
        // regions other than 0 and region 0's holes under key 0)
        let mut procs: Vec<(usize, std::collections::BTreeMap<u16, RegionCheck>)> =
            vec![(0, std::collections::BTreeMap::new())];
        let unmatched_fork = |procs: &[(usize, std::collections::BTreeMap<u16, RegionCheck>)]| {
            procs.last().filter(|_| procs.len() > 1).map(|p| OpFileError {
                line: p.0,
                msg: "fork without its exit: expected an 'exit' before the task's ops end".into(),
            })
        };
        for (i, raw) in text.lines().enumerate() {
            let line = i + 1;
            let err = |msg: String| OpFileError { line, msg };
            let l = raw.split('#').next().unwrap_or("").trim();
            if l.is_empty() {
                continue;
            }
            let mut it = l.split_ascii_whitespace();
            let kw = it.next().unwrap_or("");
            let mut num = |what: &str| -> Result<u64, OpFileError> {
                let t = it.next().ok_or_else(|| err(format!("missing {what} after '{kw}'")))?;
                number(t).ok_or_else(|| err(format!("expected {what} (a number), found '{t}'")))
            };
            if version == 0 {
                version = match l {
                    "lrugen-ops 1" => 1,
                    "lrugen-ops 2" => 2,
                    "lrugen-ops 3" => 3,
                    "lrugen-ops 4" => 4,
                    "lrugen-ops 5" => 5,
                    "lrugen-ops 6" => 6,
                    "lrugen-ops 7" => 7,
                    "lrugen-ops 8" => 8,
                    _ => {
                        return Err(err(format!(
                            "expected header 'lrugen-ops 1' to 'lrugen-ops {VERSION}', found '{l}'"
                        )))
                    }
                };
                if version == 1 {
                    cur = Some(0);
                }
                continue;
            }
            let file_ok = |out: &OpFile, file: u64, index: u64| -> Result<u32, OpFileError> {
                let f = out
                    .files
                    .iter()
                    .find(|f| f.id as u64 == file)
                    .ok_or_else(|| err(format!("file {file} is not declared")))?;
                if index >= f.pages {
                    return Err(err(format!("page {index} is beyond file {file} ({} pages)", f.pages)));
                }
                Ok(file as u32)
            };
            // the section an op goes to
            let section = |cur: Option<usize>| -> Result<usize, OpFileError> {
                cur.ok_or_else(|| err(format!("'{kw}' before the first task: expected a 'task 0' line first")))
            };
            let task_anon = |out: &OpFile, t: usize| {
                if t == 0 {
                    out.anon_pages
                } else {
                    out.tasks[t - 1].anon_pages
                }
            };
            let op = match kw {
                "window" => {
                    out.window = num("window size")?;
                    continue;
                }
                "lockstep" if version >= 5 => {
                    if cur.is_some() {
                        return Err(err(
                            "'lockstep' inside a task's section: expected it before 'task 0'".into()
                        ));
                    }
                    let k = num("accesses per round")?;
                    if k == 0 || k > u32::MAX as u64 {
                        return Err(err(format!(
                            "lockstep {k}: expected accesses per round from 1 to {}",
                            u32::MAX
                        )));
                    }
                    if out.lockstep > 0 {
                        return Err(err("lockstep declared twice".into()));
                    }
                    out.lockstep = k as u32;
                    continue;
                }
                "task" if version >= 2 => {
                    let t = it.next().ok_or_else(|| err("missing task id after 'task'".into()))?;
                    let id = number(t).ok_or_else(|| err(format!("expected task id (a number), found '{t}'")))?;
                    let next = cur.map_or(0, |c| c + 1);
                    if id != next as u64 {
                        return Err(err(format!(
                            "task {id}: expected task {next} (tasks are declared once each, 0, 1, 2, ... in order)"
                        )));
                    }
                    match (it.next(), version >= 4) {
                        (None, _) => {
                            if !out.memcgs.is_empty() {
                                return Err(err(format!(
                                    "task {id} names no memcg: expected 'task {id} memcg NAME' (the tasks before it name theirs)"
                                )));
                            }
                        }
                        (Some("memcg"), true) => {
                            let name = it
                                .next()
                                .ok_or_else(|| err(format!("missing the memcg's name after 'task {id} memcg'")))?;
                            if !valid_memcg_name(name) {
                                return Err(err(format!(
                                    "task {id} memcg '{name}': expected one path component of letters, digits, '_', '-' or '.'"
                                )));
                            }
                            if out.memcgs.len() != next {
                                return Err(err(format!(
                                    "task {id} names a memcg, the tasks before it none: every task names one or none does"
                                )));
                            }
                            out.memcgs.push(name.to_string());
                            if let Some(t) = it.next() {
                                return Err(err(format!("unexpected '{t}' after the memcg's name")));
                            }
                        }
                        (Some(t), v4) => {
                            return Err(err(if v4 {
                                format!("unexpected '{t}' after the task id: expected 'memcg NAME' or nothing")
                            } else {
                                format!("unexpected '{t}' after the task id")
                            }))
                        }
                    }
                    if id >= MAX_TASKS {
                        return Err(err(format!("task {id}: at most {MAX_TASKS} tasks")));
                    }
                    if let Some(e) = unmatched_fork(&procs) {
                        return Err(e);
                    }
                    procs.truncate(1);
                    procs[0].1.clear();
                    if next > 0 {
                        out.tasks.push(ReplayTask::default());
                    }
                    cur = Some(next);
                    seen_anon = false;
                    continue;
                }
                "anon" => {
                    let t = section(cur)?;
                    if seen_anon {
                        return Err(err(if version >= 2 {
                            format!("anon region of task {t} declared twice (a task has one)")
                        } else {
                            "anon region declared twice (an op file has one)".into()
                        }));
                    }
                    seen_anon = true;
                    let n = num("anon pages")?;
                    if n > MAX_PAGES {
                        return Err(err(format!("anon region of {n} pages: at most {MAX_PAGES} (16 TiB)")));
                    }
                    let huge = match it.next() {
                        None => false,
                        Some("hugepage") => true,
                        Some(t) => {
                            return Err(err(format!(
                                "expected the anon region's advice (hugepage) after its size, found '{t}'"
                            )))
                        }
                    };
                    if let Some(t) = it.next() {
                        return Err(err(format!("unexpected '{t}' after the anon region's advice")));
                    }
                    if t == 0 {
                        out.anon_pages = n;
                        out.anon_hugepage = huge;
                    } else {
                        out.tasks[t - 1].anon_pages = n;
                        out.tasks[t - 1].anon_hugepage = huge;
                    }
                    continue;
                }
                "file" => {
                    if version >= 2 && cur.is_some() {
                        return Err(err(
                            "a file declared inside a task's section: expected every file before 'task 0'".into(),
                        ));
                    }
                    let id = num("file id")?;
                    let path = it.next().ok_or_else(|| err("missing file path".into()))?.to_string();
                    let pages = it
                        .next()
                        .and_then(number)
                        .ok_or_else(|| err("expected the file's size in pages".into()))?;
                    if id > u32::MAX as u64 {
                        return Err(err(format!("file id {id} too large")));
                    }
                    if pages > MAX_PAGES {
                        return Err(err(format!("file of {pages} pages: at most {MAX_PAGES} (16 TiB)")));
                    }
                    let advice = match it.next() {
                        None | Some("random") => FileAdvice::Random,
                        Some("normal") => FileAdvice::Normal,
                        Some(t) => {
                            return Err(err(format!(
                                "expected the file's advice (random or normal) after its size, found '{t}'"
                            )))
                        }
                    };
                    if let Some(t) = it.next() {
                        return Err(err(format!("unexpected '{t}' after the file's advice")));
                    }
                    if out.files.iter().any(|f| f.id as u64 == id) {
                        return Err(err(format!("file id {id} declared twice")));
                    }
                    out.files.push(ReplayFile {
                        id: id as u32,
                        path,
                        pages,
                        advice,
                    });
                    continue;
                }
                "r" | "m" | "p" => {
                    section(cur)?;
                    let file = num("file id")?;
                    let index = num("page index")?;
                    let file = file_ok(&out, file, index)?;
                    match kw {
                        "r" => ReplayOp::Read { file, index },
                        "p" => ReplayOp::Write { file, index },
                        _ => ReplayOp::MmapLoad { file, index },
                    }
                }
                "l" | "s" => {
                    let t = section(cur)?;
                    let first = num("anon page")?;
                    let (region, vpn) = match it.next() {
                        None => (0, first),
                        Some(p) if version >= 7 => {
                            let page = number(p)
                                .ok_or_else(|| err(format!("expected the region's page (a number), found '{p}'")))?;
                            (first, page)
                        }
                        Some(p) => {
                            return Err(err(format!(
                                "unexpected '{p}' after the anon page ('{kw} REGION PAGE' is version 7)"
                            )))
                        }
                    };
                    if let Some(p) = it.next() {
                        return Err(err(format!("unexpected '{p}' after the page")));
                    }
                    let top = &procs.last().expect("a process").1;
                    if region == 0 {
                        let anon = task_anon(&out, t);
                        if vpn >= anon {
                            return Err(err(if version >= 2 {
                                format!("anon page {vpn} is beyond task {t}'s region ({anon} pages)")
                            } else {
                                format!("anon page {vpn} is beyond the region ({anon} pages)")
                            }));
                        }
                        if top.get(&0).is_some_and(|r| r.unmapped(vpn)) {
                            return Err(err(format!("anon page {vpn} of region 0 was unmapped")));
                        }
                        if kw == "l" {
                            ReplayOp::Load { vpn }
                        } else {
                            ReplayOp::Store { vpn }
                        }
                    } else {
                        let r = top.get(&(region as u16)).filter(|_| region < MAX_REGIONS).ok_or_else(|| {
                            err(format!("region {region} is not mapped in this process: expected 'mmap {region} PAGES' first"))
                        })?;
                        if vpn >= r.pages {
                            return Err(err(format!("page {vpn} is beyond region {region} ({} pages)", r.pages)));
                        }
                        if r.unmapped(vpn) {
                            return Err(err(format!("page {vpn} of region {region} was unmapped")));
                        }
                        let (region, page) = (region as u16, vpn);
                        if kw == "l" {
                            ReplayOp::RegionLoad { region, page }
                        } else {
                            ReplayOp::RegionStore { region, page }
                        }
                    }
                }
                "fork" if version >= 7 => {
                    section(cur)?;
                    if let Some(t) = it.next() {
                        return Err(err(format!("unexpected '{t}' after 'fork'")));
                    }
                    let regions = procs.last().expect("a process").1.clone();
                    procs.push((line, regions));
                    ReplayOp::Fork
                }
                "exit" if version >= 7 => {
                    section(cur)?;
                    if let Some(t) = it.next() {
                        return Err(err(format!("unexpected '{t}' after 'exit'")));
                    }
                    if procs.len() < 2 {
                        return Err(err(
                            "exit without a fork: expected it to end the ops of a child ('fork' first)".into(),
                        ));
                    }
                    procs.pop();
                    ReplayOp::Exit
                }
                "mmap" if version >= 7 => {
                    section(cur)?;
                    let region = num("region id")?;
                    let pages = num("pages")?;
                    if let Some(t) = it.next() {
                        return Err(err(format!("unexpected '{t}' after the region's pages")));
                    }
                    if region == 0 || region >= MAX_REGIONS {
                        return Err(err(format!(
                            "region {region}: expected an id from 1 to {} (region 0 is the task's 'anon' line)",
                            MAX_REGIONS - 1
                        )));
                    }
                    if pages == 0 || pages > u32::MAX as u64 {
                        return Err(err(format!("mmap of {pages} pages: expected 1 to {}", u32::MAX)));
                    }
                    let top = &mut procs.last_mut().expect("a process").1;
                    if top.contains_key(&(region as u16)) {
                        return Err(err(format!(
                            "region {region} is already mapped in this process (an id is not reused)"
                        )));
                    }
                    top.insert(
                        region as u16,
                        RegionCheck {
                            pages,
                            holes: Vec::new(),
                        },
                    );
                    ReplayOp::Mmap {
                        region: region as u16,
                        pages,
                    }
                }
                "munmap" | "madvise" | "mbind" if version >= 7 => {
                    if kw == "mbind" && version < 8 {
                        return Err(err(
                            "mbind is an op of version 8 on: the header must be 'lrugen-ops 8'".into()
                        ));
                    }
                    let t = section(cur)?;
                    let region = num("region id")?;
                    let first = num("first page")?;
                    let pages = num("pages")?;
                    let mut node = MBIND_DEFAULT;
                    if kw == "mbind" {
                        match it.next() {
                            Some("default") => {}
                            Some("preferred") => {
                                let t = it
                                    .next()
                                    .ok_or_else(|| err("missing the node after 'preferred'".into()))?;
                                let n =
                                    number(t).ok_or_else(|| err(format!("expected a node (a number), found '{t}'")))?;
                                if n > MAX_MBIND_NODE {
                                    return Err(err(format!("node {n}: expected 0 to {MAX_MBIND_NODE}")));
                                }
                                node = n as u16;
                            }
                            Some(x) => {
                                return Err(err(format!(
                                    "unknown memory policy '{x}': expected 'preferred NODE' or 'default'"
                                )))
                            }
                            None => {
                                return Err(err(
                                    "missing the memory policy after the pages: expected 'preferred NODE' or 'default'"
                                        .into(),
                                ))
                            }
                        }
                    }
                    let advice = if kw == "madvise" {
                        let a = it
                            .next()
                            .ok_or_else(|| err("missing the advice after the pages".into()))?;
                        let names = || Advice::ALL.iter().map(|a| a.name()).collect::<Vec<_>>().join(", ");
                        Some(
                            Advice::from_name(a)
                                .ok_or_else(|| err(format!("unknown advice '{a}': expected one of {}", names())))?,
                        )
                    } else {
                        None
                    };
                    if let Some(x) = it.next() {
                        return Err(err(format!("unexpected '{x}' after the {kw}'s range")));
                    }
                    let anon = task_anon(&out, t);
                    let top = &mut procs.last_mut().expect("a process").1;
                    let size = match region {
                        0 if anon > 0 => anon,
                        r if r > 0 && r < MAX_REGIONS => top.get(&(r as u16)).map_or(0, |r| r.pages),
                        _ => 0,
                    };
                    if size == 0 {
                        return Err(err(format!("region {region} is not mapped in this process")));
                    }
                    if pages == 0 || first.checked_add(pages).is_none_or(|end| end > size) {
                        return Err(err(format!(
                            "pages {first}..{} of region {region}: expected a range of 1 page or more within its {size} pages",
                            first.saturating_add(pages)
                        )));
                    }
                    let r = top.entry(region as u16).or_insert_with(|| RegionCheck {
                        pages: size,
                        holes: Vec::new(),
                    });
                    if r.overlaps_hole(first, pages) {
                        return Err(err(format!(
                            "pages {first}..{} of region {region} were unmapped before",
                            first + pages
                        )));
                    }
                    let (region, first, pages) = (region as u16, first as u32, pages as u32);
                    match advice {
                        None if kw == "mbind" => ReplayOp::Mbind {
                            region,
                            node,
                            first,
                            pages,
                        },
                        None => {
                            r.holes.push((u64::from(first), u64::from(first) + u64::from(pages)));
                            ReplayOp::Munmap { region, first, pages }
                        }
                        Some(advice) => ReplayOp::Madvise {
                            region,
                            advice,
                            first,
                            pages,
                        },
                    }
                }
                "w" => {
                    section(cur)?;
                    ReplayOp::MeasureStart
                }
                "t" if version >= 2 => {
                    section(cur)?;
                    ReplayOp::Think {
                        ns: num("think time (ns)")?,
                    }
                }
                "q" if version >= 2 => {
                    section(cur)?;
                    ReplayOp::RequestEnd
                }
                "c" | "cr" if version >= 3 => {
                    section(cur)?;
                    let name = it
                        .next()
                        .ok_or_else(|| err(format!("missing control file after '{kw}'")))?;
                    let known = || CtlTarget::ALL.iter().map(|t| t.name()).collect::<Vec<_>>().join(", ");
                    let file = CtlTarget::from_name(name)
                        .ok_or_else(|| err(format!("unknown control file '{name}': expected one of {}", known())))?;
                    if version < file.since_version() {
                        return Err(err(format!(
                            "{name} is read from version {} on: the header must be 'lrugen-ops {}'",
                            file.since_version(),
                            file.since_version()
                        )));
                    }
                    let write = if kw == "c" {
                        if !file.writable() {
                            return Err(err(format!(
                                "{name} cannot be written (the replayer reads it: 'cr {name}')"
                            )));
                        }
                        // the rest of the line after the file's name, escapes undone
                        let rest = l[1..].trim_start()[name.len()..].trim();
                        Some(unescape_text(rest).map_err(|e| err(format!("the text to write to {name}: {e}")))?)
                    } else {
                        if !file.readable() {
                            return Err(err(format!("{name} cannot be read (it is write only)")));
                        }
                        if let Some(t) = it.next() {
                            return Err(err(format!("unexpected '{t}' after the file of 'cr'")));
                        }
                        None
                    };
                    if out.ctl.len() >= u32::MAX as usize {
                        return Err(err("too many control ops".into()));
                    }
                    out.ctl.push(CtlOp { file, write });
                    ReplayOp::Ctl {
                        id: (out.ctl.len() - 1) as u32,
                    }
                }
                _ => {
                    return Err(err(if version >= 7 {
                        format!(
                            "unknown op '{kw}': expected r, p, m, l, s, w, t, q, c, cr, fork, exit, mmap, munmap, madvise, mbind, task, file, anon, window or lockstep"
                        )
                    } else if version >= 5 {
                        format!(
                            "unknown op '{kw}': expected r, p, m, l, s, w, t, q, c, cr, task, file, anon, window or lockstep"
                        )
                    } else if version >= 3 {
                        format!("unknown op '{kw}': expected r, p, m, l, s, w, t, q, c, cr, task, file, anon or window")
                    } else if version >= 2 {
                        format!("unknown op '{kw}': expected r, p, m, l, s, w, t, q, task, file, anon or window")
                    } else {
                        format!("unknown op '{kw}': expected r, p, m, l, s, w, file, anon or window")
                    }))
                }
            };
            let t = section(cur)?;
            if t == 0 {
                out.ops.push(op);
            } else {
                out.tasks[t - 1].ops.push(op);
            }
        }
        if version == 0 {
            return Err(OpFileError {
                line: 1,
                msg: "empty op file".into(),
            });
        }
        if let Some(e) = unmatched_fork(&procs) {
            return Err(e);
        }
        if out.lockstep > 0 && out.tasks.is_empty() {
            let line = text
                .lines()
                .position(|l| l.trim_start().starts_with("lockstep"))
                .map_or(1, |i| i + 1);
            return Err(OpFileError {
                line,
                msg: "lockstep with one task: expected several tasks ('task 1', ...) to keep in step".into(),
            });
        }
        Ok(out)
    }
}

/// Marker lines the replayer prints (parsed by `lrugen-kernel`).
pub const WINDOW_PREFIX: &str = "lrugen-replay window";

/// Whether a thread's `comm` is a kswapd's (`kswapd0`, `kswapd1`, ...).
pub fn is_kswapd_comm(comm: &str) -> bool {
    comm.strip_prefix("kswapd")
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// The time on the CPU, ns, of a `/proc/PID/schedstat` text (its first field; the others are
/// the time waiting on a run queue and the slices run).
pub fn schedstat_runtime_ns(text: &str) -> Option<u64> {
    text.split_whitespace().next()?.parse().ok()
}
/// With `--progress N`, a replay of one task prints `lrugen-replay progress ops O accesses A`
/// after every `N` access ops (populate pass included; `A` counts the measured ones): the last
/// such line before the OOM killer ends the replayer tells how far it got.
pub const PROGRESS_PREFIX: &str = "lrugen-replay progress";
/// The final line.
pub const TOTAL_PREFIX: &str = "lrugen-replay total";
/// A task's counts in a multi-task replay, printed by the task when its ops are done:
/// `lrugen-replay task ID accesses A misses M minor N requests R missed_requests X sink S`
/// (requests: `q` marks passed while measuring; missed: those with a miss since the previous).
pub const TASK_PREFIX: &str = "lrugen-replay task";
/// A file dumped by the replayer (options `--end NAME=PATH`, after the last access, and
/// `--every NAME=PATH`, after each full window): `lrugen-replay dump NAME ACCESSES`, the file's
/// text, then [`DUMP_END`]. `ACCESSES` counts the measured accesses done so far.
pub const DUMP_PREFIX: &str = "lrugen-replay dump";
/// See [`DUMP_PREFIX`].
pub const DUMP_END: &str = "lrugen-replay dump-end";
/// A control op's result, printed right after it ran:
/// `lrugen-replay ctl ID FILE errno E ret R accesses A [wrote TEXT]` (`E`: 0 or the write's
/// errno; `R`: what `write` returned, 0 for a read; `A`: measured accesses so far; `TEXT`: what
/// was written, placeholders replaced, escaped as [`escape_text`] does), then two dumps (see
/// [`DUMP_PREFIX`]): `ctl.lru_gen` (or `ctl.lru_gen_full` for a read of it), the file's text
/// after the op, and `ctl.vmstat`, the `/proc/vmstat` counters the op moved (`name delta`).
pub const CTL_PREFIX: &str = "lrugen-replay ctl";

#[cfg(test)]
mod tests {
    #[test]
    fn kswapd_threads_and_their_cpu_time() {
        use super::{is_kswapd_comm, schedstat_runtime_ns};
        assert!(is_kswapd_comm("kswapd0") && is_kswapd_comm("kswapd12"));
        assert!(!is_kswapd_comm("kswapd") && !is_kswapd_comm("kswapd0x") && !is_kswapd_comm("kcompactd0"));
        assert_eq!(schedstat_runtime_ns("1118483000 52345 573\n"), Some(1_118_483_000));
        assert_eq!(schedstat_runtime_ns(""), None);
        assert_eq!(schedstat_runtime_ns("x 1 2"), None);
    }

    use super::*;

    /// `anon N hugepage`: the region advised MADV_HUGEPAGE, per task, written back as read; any
    /// other word after the size is refused.
    #[test]
    fn anon_hugepage_advice() {
        let f = OpFile::parse("lrugen-ops 1\nanon 1024 hugepage\ns 2\n").unwrap();
        assert!(f.anon_hugepage && f.anon_hugepage(0));
        assert_eq!(f.to_text(), "lrugen-ops 1\nwindow 0\nanon 1024 hugepage\ns 2\n");
        assert!(!OpFile::parse("lrugen-ops 1\nanon 1024\n").unwrap().anon_hugepage);
        let e = OpFile::parse("lrugen-ops 1\nanon 4 huge\n").unwrap_err();
        assert_eq!(e.line, 2);
        assert!(e.msg.contains("expected the anon region's advice (hugepage)"), "{e}");
        let e = OpFile::parse("lrugen-ops 1\nanon 4 hugepage x\n").unwrap_err();
        assert!(e.msg.contains("unexpected 'x'"), "{e}");
        let t = OpFile::parse("lrugen-ops 2\ntask 0\nanon 2\ntask 1\nanon 512 hugepage\n").unwrap();
        assert_eq!((t.anon_hugepage(0), t.anon_hugepage(1)), (false, true));
        assert_eq!(OpFile::parse(&t.to_text()).unwrap(), t);
    }

    /// Fuzzing found a second `anon` line accepted: one shrinking the region left earlier stores
    /// beyond it (and the printed file did not parse back).
    #[test]
    fn one_anon_region() {
        let e = OpFile::parse("lrugen-ops 1\nanon 3\ns 2\nanon 2\n").unwrap_err();
        assert_eq!(
            (e.line, e.msg.as_str()),
            (4, "anon region declared twice (an op file has one)")
        );
        assert!(OpFile::parse("lrugen-ops 1\nanon 3\nanon 3\n").is_err());
        assert_eq!(OpFile::parse("lrugen-ops 1\nanon 3\ns 2\n").unwrap().anon_pages, 3);
    }

    #[test]
    fn round_trip() {
        let f = OpFile {
            anon_hugepage: false,
            lockstep: 0,
            ctl: Vec::new(),
            memcgs: Vec::new(),
            tasks: Vec::new(),
            window: 2,
            files: vec![
                ReplayFile {
                    id: 0,
                    path: "file0".into(),
                    pages: 8,
                    advice: FileAdvice::Random,
                },
                ReplayFile {
                    id: 1,
                    path: "file1".into(),
                    pages: 2,
                    advice: FileAdvice::Normal,
                },
            ],
            anon_pages: 4,
            ops: vec![
                ReplayOp::Store { vpn: 3 },
                ReplayOp::MeasureStart,
                ReplayOp::Read { file: 0, index: 7 },
                ReplayOp::MmapLoad { file: 0, index: 1 },
                ReplayOp::Load { vpn: 0 },
                ReplayOp::Write { file: 0, index: 7 },
            ],
        };
        let text = f.to_text();
        assert!(text.ends_with("l 0\np 0 7\n"), "{text}");
        assert_eq!(OpFile::parse(&text).unwrap(), f);
        assert!(text.contains("file 0 file0 8\nfile 1 file1 2 normal\n"), "{text}");
        assert!(f.writes(0));
        assert!(!f.writes(1));
        let e = OpFile::parse("lrugen-ops 1\nfile 0 f 4 sequential\n").unwrap_err();
        assert_eq!(e.line, 2);
        assert!(e.msg.contains("random or normal"), "{e}");
        let e = OpFile::parse("lrugen-ops 1\nfile 0 f 4 normal x\n").unwrap_err();
        assert!(e.msg.contains("unexpected 'x'"), "{e}");
    }

    #[test]
    fn sizes_the_replayer_cannot_map_and_duplicate_files_are_refused() {
        let head = "lrugen-ops 1\nwindow 0\n";
        let e = OpFile::parse(&format!("{head}file 0 f 4294967297\n")).unwrap_err();
        assert_eq!(e.line, 3);
        assert!(e.msg.contains("at most 4294967296"), "{e}");
        let e = OpFile::parse(&format!("{head}anon 99999999999\n")).unwrap_err();
        assert!(e.msg.contains("anon region of 99999999999 pages"), "{e}");
        let e = OpFile::parse(&format!("{head}file 0 f 4\nfile 0 g 8\n")).unwrap_err();
        assert_eq!((e.line, e.msg.as_str()), (4, "file id 0 declared twice"));
    }

    #[test]
    fn write_op_errors_name_the_line() {
        let head = "lrugen-ops 1\nwindow 0\nfile 0 f 4\n";
        let e = OpFile::parse(&format!("{head}p 0 1\np 0 4\n")).unwrap_err();
        assert_eq!(e.line, 5);
        assert!(e.msg.contains("page 4 is beyond file 0 (4 pages)"), "{e}");
        let e = OpFile::parse(&format!("{head}\np 2 0\n")).unwrap_err();
        assert_eq!(e.line, 5);
        assert!(e.msg.contains("file 2 is not declared"), "{e}");
        let e = OpFile::parse(&format!("{head}p 0\n")).unwrap_err();
        assert_eq!((e.line, e.msg.as_str()), (4, "missing page index after 'p'"));
        let e = OpFile::parse(&format!("{head}p 0 x1\n")).unwrap_err();
        assert_eq!(
            e.to_string(),
            "op file line 4: expected page index (a number), found 'x1'"
        );
        assert_eq!(
            OpFile::parse(&format!("{head}p 0 3 # a comment\n")).unwrap().ops,
            [ReplayOp::Write { file: 0, index: 3 }]
        );
    }

    #[test]
    fn errors_name_the_line() {
        let e = OpFile::parse("lrugen-ops 1\nfile 0 f 4\nr 0 4\n").unwrap_err();
        assert_eq!(e.line, 3);
        assert!(e.msg.contains("beyond"), "{e}");
        let e = OpFile::parse("lrugen-ops 1\nr 1 0\n").unwrap_err();
        assert!(e.msg.contains("not declared"), "{e}");
        assert!(OpFile::parse("hello\n").is_err());
        assert!(OpFile::parse("lrugen-ops 1\nx 1\n")
            .unwrap_err()
            .msg
            .contains("unknown op"));
    }

    fn two_tasks() -> OpFile {
        OpFile {
            anon_hugepage: false,
            lockstep: 0,
            ctl: Vec::new(),
            memcgs: Vec::new(),
            window: 10,
            files: vec![ReplayFile {
                id: 3,
                path: "f3".into(),
                pages: 8,
                advice: FileAdvice::Random,
            }],
            anon_pages: 2,
            ops: vec![
                ReplayOp::Store { vpn: 1 },
                ReplayOp::MeasureStart,
                ReplayOp::Read { file: 3, index: 7 },
                ReplayOp::RequestEnd,
            ],
            tasks: vec![
                ReplayTask {
                    anon_hugepage: false,
                    anon_pages: 0,
                    ops: vec![ReplayOp::MmapLoad { file: 3, index: 0 }, ReplayOp::Think { ns: 20_000 }],
                },
                ReplayTask {
                    anon_hugepage: false,
                    anon_pages: 5,
                    ops: vec![ReplayOp::Load { vpn: 4 }, ReplayOp::Write { file: 3, index: 1 }],
                },
            ],
        }
    }

    #[test]
    fn lockstep_is_version_5_and_needs_several_tasks() {
        let f = OpFile {
            lockstep: 4,
            ..two_tasks()
        };
        let text = f.to_text();
        assert!(
            text.starts_with("lrugen-ops 5\nwindow 10\nlockstep 4\nfile 3 f3 8\ntask 0\n"),
            "{text}"
        );
        assert_eq!(OpFile::parse(&text).unwrap(), f);
        let e = |t: &str| OpFile::parse(t).unwrap_err();
        let x = e("lrugen-ops 5\nlockstep 2\ntask 0\nanon 1\nl 0\n");
        assert_eq!(
            (x.line, x.msg.as_str()),
            (
                2,
                "lockstep with one task: expected several tasks ('task 1', ...) to keep in step"
            )
        );
        let x = e("lrugen-ops 5\nlockstep 0\ntask 0\ntask 1\n");
        assert_eq!(
            (x.line, x.msg.as_str()),
            (2, "lockstep 0: expected accesses per round from 1 to 4294967295")
        );
        let x = e("lrugen-ops 5\nlockstep 1\nlockstep 1\ntask 0\ntask 1\n");
        assert_eq!((x.line, x.msg.as_str()), (3, "lockstep declared twice"));
        let x = e("lrugen-ops 5\ntask 0\nlockstep 1\ntask 1\n");
        assert_eq!(
            (x.line, x.msg.as_str()),
            (3, "'lockstep' inside a task's section: expected it before 'task 0'")
        );
        let x = e("lrugen-ops 5\nlockstep x\ntask 0\ntask 1\n");
        assert_eq!(x.msg, "expected accesses per round (a number), found 'x'");
        // before version 5 it is an unknown op
        assert!(e("lrugen-ops 4\nlockstep 1\n").msg.contains("unknown op 'lockstep'"));
    }

    #[test]
    fn tasks_round_trip_as_version_2() {
        let f = two_tasks();
        let text = f.to_text();
        assert!(
            text.starts_with("lrugen-ops 2\nwindow 10\nfile 3 f3 8\ntask 0\nanon 2\ns 1\nw 0\n"),
            "{text}"
        );
        assert!(
            text.contains("task 1\nm 3 0\nt 20000\ntask 2\nanon 5\nl 4\np 3 1\n"),
            "{text}"
        );
        assert_eq!(OpFile::parse(&text).unwrap(), f);
        assert_eq!(f.nr_tasks(), 3);
        assert_eq!(f.task(2).0, 5);
        assert_eq!(f.all_ops().count(), 8);
        assert!(f.writes(3));
        // one task without version 2 ops stays version 1, byte for byte
        let one = OpFile {
            tasks: Vec::new(),
            ops: vec![ReplayOp::Read { file: 3, index: 1 }],
            ..f.clone()
        };
        assert_eq!(one.version(), 1);
        assert_eq!(one.to_text(), "lrugen-ops 1\nwindow 10\nfile 3 f3 8\nanon 2\nr 3 1\n");
        // a version 1 file is one task
        let v1 = OpFile::parse("lrugen-ops 1\nanon 2\ns 1\n").unwrap();
        assert_eq!((v1.nr_tasks(), v1.anon_pages), (1, 2));
    }

    #[test]
    fn malformed_task_sections_name_the_line() {
        let e = |t: &str| OpFile::parse(t).unwrap_err();
        let h = "lrugen-ops 2\nfile 0 f 4\n";
        let x = e(&format!("{h}r 0 1\n"));
        assert_eq!(
            (x.line, x.msg.as_str()),
            (3, "'r' before the first task: expected a 'task 0' line first")
        );
        let x = e(&format!("{h}task 1\n"));
        assert_eq!(
            (x.line, x.msg.as_str()),
            (
                3,
                "task 1: expected task 0 (tasks are declared once each, 0, 1, 2, ... in order)"
            )
        );
        let x = e(&format!("{h}task 0\nr 0 1\ntask 0\n"));
        assert_eq!(x.line, 5);
        assert!(x.msg.contains("task 0: expected task 1"), "{x}");
        let x = e(&format!("{h}task 0\ntask 2\n"));
        assert!(x.msg.contains("task 2: expected task 1"), "{x}");
        assert_eq!(e(&format!("{h}task\n")).msg, "missing task id after 'task'");
        assert_eq!(e(&format!("{h}task x\n")).msg, "expected task id (a number), found 'x'");
        assert_eq!(e(&format!("{h}task 0 1\n")).msg, "unexpected '1' after the task id");
        let x = e(&format!("{h}task 0\nfile 1 g 4\n"));
        assert_eq!(x.line, 4);
        assert!(x.msg.contains("every file before 'task 0'"), "{x}");
        // an anon op beyond its own task's region (task 1 has none)
        let x = e(&format!("{h}task 0\nanon 4\nl 3\ntask 1\nl 3\n"));
        assert_eq!(
            (x.line, x.msg.as_str()),
            (7, "anon page 3 is beyond task 1's region (0 pages)")
        );
        let x = e(&format!("{h}task 0\nanon 4\nanon 4\n"));
        assert_eq!(x.msg, "anon region of task 0 declared twice (a task has one)");
        assert_eq!(e(&format!("{h}task 0\nt\n")).msg, "missing think time (ns) after 't'");
        assert!(e(&format!("{h}task 0\nzz\n"))
            .msg
            .contains("expected r, p, m, l, s, w, t, q, task"));
        // version 1 knows no tasks, think or request marks
        assert!(e("lrugen-ops 1\ntask 0\n").msg.contains("unknown op 'task'"));
        assert!(e("lrugen-ops 1\nq\n").msg.contains("unknown op 'q'"));
        assert!(e("lrugen-ops 9\n").msg.contains("'lrugen-ops 1' to 'lrugen-ops 8'"));
        // control ops are version 3's
        assert!(e("lrugen-ops 2\ntask 0\nc lru_gen + 1 0 3\n")
            .msg
            .contains("unknown op 'c'"));
    }

    #[test]
    fn memcgs_round_trip_as_version_4() {
        let f = OpFile {
            memcgs: vec!["a".into(), "b-2.x".into(), "a".into()],
            ..two_tasks()
        };
        assert_eq!(f.version(), 4);
        let text = f.to_text();
        assert!(
            text.starts_with("lrugen-ops 4\nwindow 10\nfile 3 f3 8\ntask 0 memcg a\n"),
            "{text}"
        );
        assert!(
            text.contains("\ntask 1 memcg b-2.x\n") && text.contains("\ntask 2 memcg a\n"),
            "{text}"
        );
        assert_eq!(OpFile::parse(&text).unwrap(), f);
        // version 4 without memcgs is version 2 written back
        let plain = OpFile::parse(&text.replace(" memcg a", "").replace(" memcg b-2.x", "")).unwrap();
        assert_eq!(plain, two_tasks());
        assert_eq!(plain.version(), 2);
    }

    #[test]
    fn malformed_memcgs_name_the_line() {
        let e = |t: &str| OpFile::parse(t).unwrap_err();
        let h = "lrugen-ops 4\nfile 0 f 4\n";
        // every task names one or none does
        let x = e(&format!("{h}task 0 memcg a\nr 0 1\ntask 1\n"));
        assert_eq!(x.line, 5);
        assert!(x.msg.contains("task 1 names no memcg"), "{x}");
        let x = e(&format!("{h}task 0\ntask 1 memcg b\n"));
        assert_eq!(x.line, 4);
        assert!(x.msg.contains("every task names one or none does"), "{x}");
        // one path component
        for bad in ["a/b", "..", ".", "x y", "a*"] {
            let x = e(&format!("{h}task 0 memcg {bad}\n"));
            assert_eq!(x.line, 3, "{bad}");
        }
        assert!(e(&format!("{h}task 0 memcg a/b\n")).msg.contains("one path component"));
        assert_eq!(
            e(&format!("{h}task 0 memcg\n")).msg,
            "missing the memcg's name after 'task 0 memcg'"
        );
        assert_eq!(
            e(&format!("{h}task 0 memcg a b\n")).msg,
            "unexpected 'b' after the memcg's name"
        );
        assert!(e(&format!("{h}task 0 cgroup a\n"))
            .msg
            .contains("expected 'memcg NAME' or nothing"));
        // version 3 knows no memcgs
        assert_eq!(
            e("lrugen-ops 3\ntask 0 memcg a\n").msg,
            "unexpected 'memcg' after the task id"
        );
        assert!(valid_memcg_name("a.b_c-1") && !valid_memcg_name("") && !valid_memcg_name(&"x".repeat(65)));
    }

    /// Version 7's process ops: a child forked, its own region mapped, advised, partly unmapped
    /// and accessed, then its exit; written back as read, as version 7.
    #[test]
    fn process_ops_round_trip_as_version_7() {
        let text = "lrugen-ops 7\nwindow 0\nfile 0 f 4\ntask 0\nanon 8\ns 3\nfork\nmmap 1 256\ns 1 0\n\
                    l 1 255\nl 0 3\nmadvise 1 0 128 pageout\nmunmap 1 128 128\nmadvise 0 0 8 cold\n\
                    fork\nl 1 5\nexit\nexit\nr 0 1\nl 3\n";
        let f = OpFile::parse(text).unwrap();
        assert_eq!(f.version(), 7);
        assert_eq!(
            f.ops[2..9],
            [
                ReplayOp::Mmap { region: 1, pages: 256 },
                ReplayOp::RegionStore { region: 1, page: 0 },
                ReplayOp::RegionLoad { region: 1, page: 255 },
                ReplayOp::Load { vpn: 3 },
                ReplayOp::Madvise {
                    region: 1,
                    advice: Advice::PageOut,
                    first: 0,
                    pages: 128
                },
                ReplayOp::Munmap {
                    region: 1,
                    first: 128,
                    pages: 128
                },
                ReplayOp::Madvise {
                    region: 0,
                    advice: Advice::Cold,
                    first: 0,
                    pages: 8
                },
            ]
        );
        assert_eq!(f.all_ops().filter(|o| o.is_access()).count(), 7);
        let back = f.to_text();
        assert!(back.contains("\nl 0 3\n") || back.contains("\nl 3\n"), "{back}");
        assert_eq!(OpFile::parse(&back).unwrap(), f);
        for a in Advice::ALL {
            assert_eq!(Advice::from_name(a.name()), Some(a));
        }
    }

    /// Version 8's `mbind`: preferred nodes over ranges of region 0 before a populate pass, the
    /// default policy over the whole region after it; written back as read, as version 8; bad
    /// policies, nodes and ranges refused naming the line, and the op unknown before version 8.
    #[test]
    fn mbind_ops_round_trip_as_version_8_and_bad_ones_are_refused() {
        let text = "lrugen-ops 8\nwindow 0\ntask 0\nanon 10\nmbind 0 3 4 preferred 1\nmbind 0 0 3 preferred 0\n\
                    s 0\ns 9\nw 0\nmbind 0 0 10 default\nl 5\n";
        let f = OpFile::parse(text).unwrap();
        assert_eq!(f.version(), 8);
        assert_eq!(
            f.ops[..2],
            [
                ReplayOp::Mbind {
                    region: 0,
                    node: 1,
                    first: 3,
                    pages: 4
                },
                ReplayOp::Mbind {
                    region: 0,
                    node: 0,
                    first: 0,
                    pages: 3
                },
            ]
        );
        assert_eq!(
            f.ops[5],
            ReplayOp::Mbind {
                region: 0,
                node: MBIND_DEFAULT,
                first: 0,
                pages: 10
            }
        );
        assert!(f.ops[5].is_process_op() && !f.ops[5].is_access());
        assert_eq!(OpFile::parse(&f.to_text()).unwrap(), f);
        let e = |body: &str| OpFile::parse(&format!("lrugen-ops 8\ntask 0\nanon 4\n{body}")).unwrap_err();
        let cases: [(&str, usize, &str); 6] = [
            ("mbind 0 0 4 interleave\n", 4, "unknown memory policy 'interleave'"),
            ("mbind 0 0 4\n", 4, "missing the memory policy"),
            ("mbind 0 0 4 preferred\n", 4, "missing the node after 'preferred'"),
            ("mbind 0 0 4 preferred 64\n", 4, "node 64: expected 0 to 63"),
            ("mbind 0 2 3 default\n", 4, "pages 2..5 of region 0"),
            ("mbind 1 0 1 default\n", 4, "region 1 is not mapped in this process"),
        ];
        for (body, line, msg) in cases {
            let err = e(body);
            assert_eq!(err.line, line, "{body:?}: {err}");
            assert!(err.msg.contains(msg), "{body:?}: {err}");
        }
        let err = OpFile::parse("lrugen-ops 7\ntask 0\nanon 4\nmbind 0 0 4 default\n").unwrap_err();
        assert!(err.msg.contains("version 8"), "{err}");
    }

    /// Every process op the replayer could not carry out is refused at parse time, naming the
    /// line: the replayer must never touch a page that is not mapped.
    #[test]
    fn process_ops_the_replayer_cannot_do_are_refused() {
        let e = |body: &str| OpFile::parse(&format!("lrugen-ops 7\ntask 0\nanon 4\n{body}")).unwrap_err();
        let cases: [(&str, usize, &str); 13] = [
            ("exit\n", 4, "exit without a fork"),
            ("l 0\nfork\nl 1\n", 5, "fork without its exit"),
            ("l 1 0\n", 4, "region 1 is not mapped in this process"),
            ("fork\nmmap 1 4\nexit\ns 1 0\n", 7, "region 1 is not mapped"),
            ("mmap 1 4\nl 1 4\n", 5, "page 4 is beyond region 1 (4 pages)"),
            ("mmap 1 4\nmunmap 1 1 2\nl 1 2\n", 6, "page 2 of region 1 was unmapped"),
            ("munmap 0 0 1\ns 0\n", 5, "anon page 0 of region 0 was unmapped"),
            ("mmap 1 4\nmadvise 1 0 4 lukewarm\n", 5, "unknown advice 'lukewarm'"),
            ("mmap 0 4\n", 4, "expected an id from 1 to 65535"),
            ("mmap 1 4\nmmap 1 8\n", 5, "region 1 is already mapped"),
            ("mmap 1 4\nmadvise 1 2 3 cold\n", 5, "pages 2..5 of region 1"),
            (
                "mmap 1 4\nmunmap 1 0 2\nmadvise 1 1 2 cold\n",
                6,
                "were unmapped before",
            ),
            ("mmap 2 0\n", 4, "mmap of 0 pages"),
        ];
        for (body, line, msg) in cases {
            let err = e(body);
            assert_eq!(err.line, line, "{body:?}: {err}");
            assert!(err.msg.contains(msg), "{body:?}: {err}");
        }
        // a task's section ends its forks
        let err = OpFile::parse("lrugen-ops 7\ntask 0\nfork\ntask 1\nexit\n").unwrap_err();
        assert_eq!(
            (err.line, err.msg.contains("fork without its exit")),
            (3, true),
            "{err}"
        );
        // before version 7 they are unknown ops, and an anon access takes one number
        let err = OpFile::parse("lrugen-ops 6\ntask 0\nfork\n").unwrap_err();
        assert!(err.msg.contains("unknown op 'fork'"), "{err}");
        let err = OpFile::parse("lrugen-ops 6\ntask 0\nanon 4\nl 1 2\n").unwrap_err();
        assert!(err.msg.contains("is version 7"), "{err}");
    }

    /// An op stays 16 bytes: the replayer's op list is charged to its memcg, and the model
    /// counts it at that size (`lrugen_kernel::replayer_own_pages`).
    #[test]
    fn an_op_is_sixteen_bytes() {
        assert_eq!(std::mem::size_of::<ReplayOp>(), 16);
    }

    /// Reads of `memory.stat` and `/proc/vmstat` are version 6: parsed, written back as
    /// version 6, neither writable.
    #[test]
    fn counters_reads_round_trip_as_version_6() {
        let text = "lrugen-ops 6\nwindow 0\nfile 0 f 4\ntask 0\nr 0 1\ncr memory.stat\nr 0 2\ncr vmstat\n";
        let f = OpFile::parse(text).unwrap();
        let r = |file| CtlOp { file, write: None };
        assert_eq!(f.ctl, [r(CtlTarget::MemoryStat), r(CtlTarget::Vmstat)]);
        assert_eq!(f.version(), 6);
        assert_eq!(OpFile::parse(&f.to_text()).unwrap(), f);
        for t in ["c memory.stat 1", "c vmstat 1"] {
            let e = OpFile::parse(&format!("lrugen-ops 6\ntask 0\n{t}\n")).unwrap_err();
            assert!(e.msg.contains("cannot be written"), "{t}: {}", e.msg);
        }
        assert_eq!(CtlTarget::Vmstat.dump_name(), "proc_vmstat");
        assert_eq!(CtlTarget::MemoryStat.dump_name(), "memory.stat");
    }

    #[test]
    fn control_ops_round_trip_as_version_3() {
        let text = "lrugen-ops 3\nwindow 0\nfile 0 f 4\ntask 0\nr 0 1\ncr lru_gen\n\
                    c lru_gen + {memcg} {node} {max_seq} 1 1  # age\nc memory.reclaim 1M swappiness=10\n\
                    c memory.reclaim\nc lru_gen \\x20- 2 0 1;\\x23\\n\ncr lru_gen_full\n";
        let f = OpFile::parse(text).unwrap();
        assert_eq!(f.ops.len(), 7);
        assert_eq!(f.ops[1], ReplayOp::Ctl { id: 0 });
        assert_eq!(f.ops[6], ReplayOp::Ctl { id: 5 });
        let w = |file, t: &str| CtlOp {
            file,
            write: Some(t.to_string()),
        };
        assert_eq!(
            f.ctl,
            [
                CtlOp {
                    file: CtlTarget::LruGen,
                    write: None
                },
                w(CtlTarget::LruGen, "+ {memcg} {node} {max_seq} 1 1"),
                w(CtlTarget::MemoryReclaim, "1M swappiness=10"),
                w(CtlTarget::MemoryReclaim, ""),
                w(CtlTarget::LruGen, " - 2 0 1;#\n"),
                CtlOp {
                    file: CtlTarget::LruGenFull,
                    write: None
                },
            ]
        );
        assert_eq!(f.version(), 3);
        let back = f.to_text();
        assert!(back.contains("c lru_gen \\x20- 2 0 1;\\x23\\n\n"), "{back}");
        assert!(back.contains("\nc memory.reclaim\n"), "{back}");
        assert_eq!(OpFile::parse(&back).unwrap(), f);
        // errors name the line
        let e = |t: &str| OpFile::parse(&format!("lrugen-ops 3\ntask 0\n{t}\n")).unwrap_err();
        assert_eq!(
            e("c lru_gen_full x").msg,
            "lru_gen_full cannot be written (the replayer reads it: 'cr lru_gen_full')"
        );
        assert_eq!(
            e("cr memory.reclaim").msg,
            "memory.reclaim cannot be read (it is write only)"
        );
        assert!(e("c memory.max 1M")
            .msg
            .starts_with("unknown control file 'memory.max': expected one of lru_gen"));
        assert_eq!(
            e("cr memory.stat").msg,
            "memory.stat is read from version 6 on: the header must be 'lrugen-ops 6'"
        );
        assert_eq!(e("c").msg, "missing control file after 'c'");
        assert_eq!(e("cr lru_gen x").msg, "unexpected 'x' after the file of 'cr'");
        let x = e("c lru_gen a\\q");
        assert_eq!(
            (x.line, x.msg.as_str()),
            (
                3,
                "the text to write to lru_gen: '\\' at byte 1: expected \\\\, \\n, \\t or \\xHH"
            )
        );
        assert!(e("c lru_gen \\x4").msg.contains("two hex digits"));
    }

    #[test]
    fn escaped_texts_come_back_whole() {
        for t in ["", " ", "a b  c ", "#\\\n\t\r\u{7f}é", "x\\x41"] {
            let e = escape_text(t);
            assert!(!e.contains(['#', '\n']) && e.trim() == e, "{e:?}");
            assert_eq!(unescape_text(&e).as_deref(), Ok(t), "{e:?}");
        }
        assert!(unescape_text("\\xff").unwrap_err().contains("not UTF-8"));
    }

    #[test]
    fn placeholders_are_read_off_lru_gen_full() {
        // as 6.12 prints it: generation 1 of /t holds no anon (min_seq[anon] = 2), the tiers'
        // and the mm walk's lines under each generation
        let full = "memcg     1 /\n node     0\n          0       7504          0           3 \n\
memcg     2 /t\n node     0\n          1       3316          0x          0 \n\
                     0          0x          0x          0x          0x          0x          0x\n\
                                0x          0x          0x          0x\n\
          2       3316          0        3344 \n          3       3316          0         253 \n\
          4        936          0           2 \n";
        let s = LruvecSeqs::from_lru_gen_full(full, "/t").unwrap();
        assert_eq!(
            s,
            LruvecSeqs {
                memcg: 2,
                max_seq: 4,
                min_seq: [2, 1]
            }
        );
        let v = |n: &str| s.value(n);
        assert_eq!(
            expand_placeholders(
                "+ {memcg} {node} {max_seq} 1 1; - {memcg} 0 {min_seq+1} {min_seq_anon}",
                &v
            )
            .unwrap(),
            "+ 2 0 4 1 1; - 2 0 2 2"
        );
        assert_eq!(
            expand_placeholders("- {memcg} 0 {max_seq-2} 200", &v).unwrap(),
            "- 2 0 2 200"
        );
        assert!(expand_placeholders("{max_seq-5}", &v)
            .unwrap_err()
            .contains("would be -1"));
        assert!(expand_placeholders("{maxseq}", &v)
            .unwrap_err()
            .contains("unknown name 'maxseq'"));
        assert!(expand_placeholders("{max_seq", &v)
            .unwrap_err()
            .contains("without its `}`"));
        assert!(expand_placeholders("max_seq}", &v)
            .unwrap_err()
            .contains("without its `{`"));
        assert!(expand_placeholders("{max_seq-}", &v)
            .unwrap_err()
            .contains("whole number"));
        assert_eq!(LruvecSeqs::from_lru_gen_full(full, "/u"), None);
        // 7.2 prints the id unpadded
        let s72 = LruvecSeqs::from_lru_gen_full("memcg 5 /t\n node     0\n 7 1 0 0 \n 8 1 4 5 \n", "/t").unwrap();
        assert_eq!((s72.memcg, s72.max_seq, s72.min_seq), (5, 8, [7, 7]));
    }

    /// Op files of random tasks and ops print and parse back to themselves.
    #[test]
    fn random_multi_task_files_round_trip() {
        let mut x = 0x853c_49e6_748f_ea9bu64;
        let mut next = |n: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % n
        };
        for _ in 0..500 {
            let files: Vec<ReplayFile> = (0..next(3))
                .map(|i| ReplayFile {
                    id: i as u32 * 2,
                    path: format!("f{i}"),
                    pages: 1 + next(9),
                    advice: if next(2) == 0 {
                        FileAdvice::Random
                    } else {
                        FileAdvice::Normal
                    },
                })
                .collect();
            let task = |next: &mut dyn FnMut(u64) -> u64| {
                let anon = next(4);
                let ops = (0..next(12))
                    .filter_map(|_| {
                        let f = (!files.is_empty()).then(|| &files[next(files.len() as u64) as usize]);
                        Some(match next(8) {
                            0 => ReplayOp::Read {
                                file: f?.id,
                                index: next(f?.pages),
                            },
                            1 => ReplayOp::Write {
                                file: f?.id,
                                index: next(f?.pages),
                            },
                            2 => ReplayOp::MmapLoad {
                                file: f?.id,
                                index: next(f?.pages),
                            },
                            3 if anon > 0 => ReplayOp::Load { vpn: next(anon) },
                            4 if anon > 0 => ReplayOp::Store { vpn: next(anon) },
                            5 => ReplayOp::Think { ns: next(1 << 40) },
                            6 => ReplayOp::RequestEnd,
                            _ => ReplayOp::MeasureStart,
                        })
                    })
                    .collect();
                ReplayTask {
                    anon_hugepage: false,
                    anon_pages: anon,
                    ops,
                }
            };
            let t0 = task(&mut next);
            let tasks: Vec<ReplayTask> = (0..next(4)).map(|_| task(&mut next)).collect();
            let f = OpFile {
                anon_hugepage: false,
                lockstep: if tasks.is_empty() { 0 } else { next(3) as u32 },
                ctl: Vec::new(),
                memcgs: Vec::new(),
                window: next(100),
                files: files.clone(),
                anon_pages: t0.anon_pages,
                ops: t0.ops,
                tasks,
            };
            let text = f.to_text();
            assert_eq!(OpFile::parse(&text).as_ref(), Ok(&f), "{text}");
        }
    }

    /// Any line soup gives an op file or an error naming a line of the input, never a panic. A
    /// fixed xorshift sequence of lines built from the format's own words keeps it reproducible.
    #[test]
    fn garbage_never_panics() {
        const WORDS: &[&str] = &[
            "lrugen-ops",
            "1",
            "0",
            "4294967295",
            "4294967296",
            "18446744073709551615",
            "18446744073709551616",
            "-1",
            "window",
            "anon",
            "file",
            "f",
            "r",
            "p",
            "m",
            "l",
            "s",
            "w",
            "t",
            "q",
            "task",
            "lrugen-ops 2",
            "lrugen-ops 3",
            "lrugen-ops 5",
            "lockstep",
            "c",
            "cr",
            "lru_gen",
            "lru_gen_full",
            "memory.reclaim",
            "\\x2",
            "\\x23",
            "{max_seq}",
            "#",
            "é",
            "x1",
        ];
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut next = |n: usize| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % n as u64) as usize
        };
        for _ in 0..3000 {
            let mut text = String::from(match next(7) {
                0 => "",
                1 | 2 => "lrugen-ops 2\n",
                3 => "lrugen-ops 3\ntask 0\n",
                _ => "lrugen-ops 1\n",
            });
            let nlines = next(8);
            for _ in 0..nlines {
                for _ in 0..next(5) {
                    text.push_str(WORDS[next(WORDS.len())]);
                    text.push(if next(5) == 0 { '\t' } else { ' ' });
                }
                text.push_str(if next(6) == 0 { "\r\n" } else { "\n" });
            }
            match OpFile::parse(&text) {
                Ok(f) => assert_eq!(OpFile::parse(&f.to_text()).as_ref(), Ok(&f), "{text:?}"),
                Err(e) => assert!(e.line >= 1 && e.line <= text.lines().count().max(1), "{e} in {text:?}"),
            }
        }
    }
}
