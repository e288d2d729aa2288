// SPDX-License-Identifier: GPL-2.0-only
//! Helpers shared by the integration tests: tiny machines, folio lookups, list membership found by
//! walking the lists (not by reading flags), and independent recounts of what the checker checks.
#![allow(dead_code)] // each test binary uses a different subset

pub mod memory_stat_lists;

use lrugen::kernel::{AccessError, Kernel};
use lrugen::mm::folio::{pg, FolioId};
use lrugen::mm::memcg::{MemcgId, ROOT_MEMCG};
use lrugen::mm::pagecache::{Advice, Slot};
use lrugen::mm::vm::vmf;
use lrugen::mm::vmstat::Stat;
use lrugen::mm::{Lru, Machine, MachineConfig};
use lrugen::reclaim::classic::Classic;
use lrugen::reclaim::{Policy, Reclaimer, ScanControl, SWAP_CLUSTER_MAX};
use std::path::Path;

/// The kernel under test.
pub type K = Kernel<Classic>;

/// Every list, in `enum lru_list` order.
pub const ALL_LRUS: [Lru; 5] = [
    Lru::InactiveAnon,
    Lru::ActiveAnon,
    Lru::InactiveFile,
    Lru::ActiveFile,
    Lru::Unevictable,
];

/// A kernel on a one-node machine of `pages` pages and `swap` swap pages, with read-ahead off so
/// that every read instantiates exactly the page asked for, the per-CPU `lru_add` batch off
/// (`lru_cache_disable`: each new folio is on its list when the operation returns) and the
/// invariant checker on.
pub fn kernel(pages: u64, swap: u64) -> K {
    kernel_with(MachineConfig::simple(pages, swap))
}

/// [`kernel`], and the kernel memory charged as the kernel charges it
/// ([`lrugen::mm::KmemConfig::kernel`]).
#[allow(dead_code)]
pub fn kernel_kmem(pages: u64, swap: u64) -> K {
    let mut cfg = MachineConfig::simple(pages, swap);
    cfg.kmem = lrugen::mm::KmemConfig::kernel();
    kernel_with(cfg)
}

fn kernel_with(mut cfg: MachineConfig) -> K {
    cfg.ra_pages = 0;
    let mut m = Machine::new(cfg);
    m.debug_checks = true;
    m.lru_cache_disabled = true;
    let p = Classic::new(&m);
    Kernel::new(m, p)
}

/// An MGLRU kernel of `profile` on a one-node machine of `pages` pages and `swap` swap pages,
/// read-ahead off, a memcg `/t` (limited to `limit` pages if given) and a task charged to it;
/// the `lru_add` batch and the invariant checker are left as `Machine::new` sets them.
pub fn mglru_setup(
    profile: lrugen::reclaim::mglru::Profile,
    pages: u64,
    swap: u64,
    limit: Option<u64>,
) -> (Kernel<lrugen::reclaim::mglru::Mglru>, MemcgId, u32) {
    use lrugen::reclaim::mglru::{Mglru, MglruConfig};
    let mut cfg = MachineConfig::simple(pages, swap);
    cfg.ra_pages = 0;
    let m = Machine::new(cfg);
    let p = Mglru::new(
        &m,
        MglruConfig {
            profile,
            ..MglruConfig::default()
        },
    );
    let mut k = Kernel::new(m, p);
    let t = k.create_memcg(ROOT_MEMCG, "t");
    if let Some(max) = limit {
        k.m.memcgs[t].max = max;
    }
    let task = k.create_mm(t);
    (k, t, task)
}

/// `k` with a memcg `/t` and a task charged to it (`Kernel::create_mm`, which also tells the policy).
pub fn with_task<P: Policy>(mut k: Kernel<P>) -> (Kernel<P>, MemcgId, u32) {
    let t = k.create_memcg(ROOT_MEMCG, "t");
    let task = k.create_mm(t);
    (k, t, task)
}

/// The classic LRU on machine `m`, with `/t` and its task ([`with_task`]).
pub fn classic_on(m: Machine) -> (Kernel<Classic>, MemcgId, u32) {
    let p = Classic::new(&m);
    with_task(Kernel::new(m, p))
}

/// MGLRU of `profile` on machine `m`, with `/t` and its task ([`with_task`]).
pub fn mglru_on(
    m: Machine,
    profile: lrugen::reclaim::mglru::Profile,
) -> (Kernel<lrugen::reclaim::mglru::Mglru>, MemcgId, u32) {
    use lrugen::reclaim::mglru::{Mglru, MglruConfig};
    let p = Mglru::new(
        &m,
        MglruConfig {
            profile,
            ..MglruConfig::default()
        },
    );
    with_task(Kernel::new(m, p))
}

/// A kernel, a memcg `/t` and a task (address space) charged to it.
pub fn setup(pages: u64, swap: u64) -> (K, MemcgId, u32) {
    let mut k = kernel(pages, swap);
    let t = k.create_memcg(ROOT_MEMCG, "t");
    let task = k.m.create_mm(t);
    (k, t, task)
}

/// Create a file of `pages` pages.
pub fn file(k: &mut K, name: &str, pages: u64) -> u32 {
    k.m.create_file(name, pages, Advice::Normal)
}

/// The folio caching page `index` of `file`; panics if it is not cached.
pub fn cached(k: &K, file: u32, index: u64) -> FolioId {
    match k.m.files[file as usize].slot(index) {
        Slot::Folio(id) => id,
        s => panic!("file {file} page {index} is not cached: {s:?}"),
    }
}

/// The folio mapped at `vpn` of `task`; panics if the PTE is not present.
pub fn mapped(k: &K, task: u32, vpn: u32) -> FolioId {
    let e = k.m.pte(task, vpn);
    assert!(
        e & lrugen::mm::vm::pte::PRESENT != 0,
        "task {task} vpn {vpn:#x} is not mapped ({e:#x})"
    );
    e & lrugen::mm::vm::pte::PFN_MASK
}

/// Which list of its lruvec folio `id` is on, found by walking the lists.
pub fn list_of(k: &K, id: FolioId) -> Option<Lru> {
    let f = k.m.folios[id];
    let lv = k.m.lruvec(f.memcg, f.node());
    let mut found = None;
    for lru in ALL_LRUS {
        k.m.folios
            .walk_list(&k.p.lruvecs[lv].lists[lru as usize], |x| {
                if x == id {
                    assert!(found.is_none(), "folio {id} is on two lists");
                    found = Some(lru);
                }
                Ok(())
            })
            .unwrap();
    }
    found
}

/// Assert folio `id` is on list `lru` by both its flags (`folio_lru_list`) and a list walk.
#[track_caller]
pub fn assert_on(k: &K, id: FolioId, lru: Lru) {
    assert!(k.m.folios[id].test(pg::LRU), "folio {id} lacks PG_lru");
    assert_eq!(Classic::folio_lru_list(&k.m, id), lru, "folio_lru_list of folio {id}");
    assert_eq!(list_of(k, id), Some(lru), "list holding folio {id}");
}

/// Length of list `lru` of lruvec (memcg, node 0).
pub fn list_len(k: &K, memcg: MemcgId, lru: Lru) -> u32 {
    k.p.lruvecs[k.m.lruvec(memcg, 0)].lists[lru as usize].len
}

/// A global (`/proc/vmstat`) counter.
pub fn vm(k: &K, s: Stat) -> i64 {
    k.m.vmstat().get(s)
}

/// A memcg's hierarchical counter (`memory.stat`).
pub fn mc(k: &K, memcg: MemcgId, s: Stat) -> i64 {
    k.m.memcg_stat(memcg).get(s)
}

/// Scan control of memcg limit reclaim on behalf of `memcg`, as `try_to_free_mem_cgroup_pages`
/// builds it.
pub fn sc_memcg(memcg: MemcgId) -> ScanControl {
    ScanControl::new(SWAP_CLUSTER_MAX, Reclaimer::Direct, Some(memcg), usize::MAX)
}

/// Scan control of kswapd (global reclaim).
pub fn sc_kswapd() -> ScanControl {
    ScanControl::new(SWAP_CLUSTER_MAX, Reclaimer::Kswapd, None, 0)
}

/// Free plus allocated frames, counted from the folio table and the zones, against the total.
pub fn frame_accounting(m: &Machine) -> (u64, u64, u64) {
    let allocated = (0..m.folios.len() as FolioId)
        .filter(|&id| m.folios[id].test(pg::ALLOCATED))
        .count() as u64;
    let free: u64 = m.nodes.iter().map(|n| n.free()).sum();
    (free, allocated, m.cfg.total_pages())
}

/// Pages charged to each memcg's subtree, counted from the folio table.
pub fn charged_per_memcg(m: &Machine) -> Vec<u64> {
    let mut local = vec![0u64; m.memcgs.len()];
    for id in 0..m.folios.len() as FolioId {
        let f = m.folios[id];
        if f.test(pg::ALLOCATED) && f.test(pg::CHARGED) {
            local[f.memcg as usize] += 1;
        }
    }
    for (c, kmem) in kmem_per_memcg(m).into_iter().enumerate() {
        local[c] += kmem;
    }
    (0..m.memcgs.len() as MemcgId)
        .map(|c| m.memcgs.subtree(c).iter().map(|&d| local[d as usize]).sum())
        .collect()
}

/// The kernel-memory pages charged locally to each memcg, recounted from what holds them
/// ([`lrugen::mm::KmemConfig`]): per live address space its PTE tables and fixed page tables
/// (the `KmemConfig` sizes, or those set for it), its other pages and its slab bytes; per file
/// its inode/dentry and xarray nodes, charged to the memcg that first cached it; slab bytes in
/// whole pages.
pub fn kmem_per_memcg(m: &Machine) -> Vec<u64> {
    let k = m.cfg.kmem;
    let mut pages = vec![0u64; m.memcgs.len()];
    let mut slab = vec![0u64; m.memcgs.len()];
    for mm in m.mms.iter().filter(|mm| mm.alive) {
        let c = mm.memcg as usize;
        if k.page_tables {
            let ptes = mm.pmds.iter().filter(|&&x| x != lrugen::mm::vm::PMD_NONE).count();
            pages[c] += mm.pgtables.iter().sum::<u64>() + ptes as u64;
        }
        pages[c] += k.mm_other_pages;
        slab[c] += k.mm_slab_bytes;
    }
    for f in &m.files {
        if let Some(c) = f.kmem_memcg {
            let nodes = if k.xa_nodes { f.xa_nodes() } else { 0 };
            // a block device's inode is made at boot, charged to no memcg
            let inode = if f.bdev_metadata { 0 } else { k.file_slab_bytes };
            slab[c as usize] += inode + nodes * lrugen::mm::XA_NODE_BYTES;
        }
    }
    pages
        .iter()
        .zip(&slab)
        .map(|(p, s)| p + s.div_ceil(lrugen::mm::PAGE_SIZE))
        .collect()
}

/// Assert the accounting identities the issue names, recounted here independently of the checker:
/// free + allocated = total, every memcg's usage = pages charged in its subtree, the LRU gauges
/// equal the list lengths, and the page cache counters equal the cached pages.
#[track_caller]
pub fn assert_accounting(k: &K) {
    let (free, allocated, total) = frame_accounting(&k.m);
    assert_eq!(
        free + allocated,
        total,
        "free {free} + allocated {allocated} != total {total}"
    );
    assert_eq!(k.m.vmstat().get(Stat::NrFreePages), free as i64);
    let charged = charged_per_memcg(&k.m);
    for c in k.m.memcgs.iter() {
        let stocked: u64 = k.m.memcgs.subtree(c.id).iter().map(|&d| k.m.memcgs.stocked(d)).sum();
        assert_eq!(c.usage, charged[c.id as usize] + stocked, "usage of memcg {}", c.path);
    }
    let v = k.m.vmstat();
    for (lru, s) in ALL_LRUS.into_iter().zip([
        Stat::NrInactiveAnon,
        Stat::NrActiveAnon,
        Stat::NrInactiveFile,
        Stat::NrActiveFile,
        Stat::NrUnevictable,
    ]) {
        let len: i64 = k.p.lruvecs.iter().map(|l| l.lists[lru as usize].len as i64).sum();
        assert_eq!(v.get(s), len, "{} against the list lengths", s.name());
    }
    let cached: u64 = k.m.files.iter().map(|f| f.nr_pages).sum();
    assert_eq!(v.get(Stat::NrFilePages), cached as i64, "nr_file_pages");
}

/// xorshift64*: a tiny deterministic generator for the hand-built workloads.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    /// A skewed index below `n`: half the time within the first eighth.
    pub fn skewed(&mut self, n: u64) -> u64 {
        if self.below(2) == 0 {
            self.below(n / 8)
        } else {
            self.below(n)
        }
    }
}

/// The hand-built mixed workload, for any policy: two tasks in a new memcg `/t` (limited to `max`
/// pages if given) doing buffered reads and writes of three files, loads through an executable and
/// a plain file mapping, and loads and stores to an anon region; skewed so that reclaim sees hot
/// and cold pages of every kind. With `writes` false the buffered writes become reads. Runs `steps`
/// operations, calling `after` after each (to stop at the first checker failure); an OOM kill is
/// expected, any other failed access panics. Returns `/t`.
pub fn mixed_workload<P: Policy>(
    k: &mut Kernel<P>,
    max: Option<u64>,
    writes: bool,
    steps: u32,
    mut after: impl FnMut(&Kernel<P>),
) -> MemcgId {
    let t = k.create_memcg(ROOT_MEMCG, "t");
    if let Some(max) = max {
        k.m.memcgs[t].max = max;
    }
    let (a, b) = (k.m.create_mm(t), k.m.create_mm(t));
    let files: Vec<u32> = (0..3)
        .map(|i| k.m.create_file(&format!("f{i}"), 512, Advice::Normal))
        .collect();
    let exe = k.m.create_file("exe", 64, Advice::Normal);
    let code = k.m.mmap(a, 64, vmf::EXEC, Some((exe, 0)));
    let data = k.m.mmap(b, 256, 0, Some((files[2], 0)));
    let heap = k.m.mmap(a, 512, vmf::WRITE, None);
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for _ in 0..steps {
        let r = match rng.below(10) {
            0..=2 => {
                let f = files[rng.below(3) as usize];
                let i = rng.skewed(512);
                k.read_page(b, f, i)
            }
            3 if writes => {
                let i = rng.skewed(512);
                k.write_page(b, files[1], i)
            }
            3 => {
                let i = rng.skewed(512);
                k.read_page(b, files[1], i)
            }
            4 => {
                let i = rng.skewed(64) as u32;
                k.access(a, code + i, false)
            }
            5 => {
                let i = rng.skewed(256) as u32;
                k.access(b, data + i, false)
            }
            6..=7 => {
                let i = rng.skewed(512) as u32;
                k.access(a, heap + i, false)
            }
            _ => {
                let i = rng.skewed(512) as u32;
                k.access(a, heap + i, true)
            }
        };
        match r {
            Ok(_) | Err(AccessError::Killed(_)) => {}
            Err(e) => panic!("unexpected failure: {e}"),
        }
        after(k);
    }
    t
}

/// Whether `LRUGEN_BLESS` asks for the golden files to be rewritten (set, not empty, not `0`).
pub fn blessing() -> bool {
    std::env::var_os("LRUGEN_BLESS").is_some_and(|v| !v.is_empty() && v != "0")
}

/// Compare `actual` with the golden file at `path`, or (re)write the file under `LRUGEN_BLESS=1`.
/// A difference panics with the differing lines and the command that regenerates the file
/// (`cargo test -p lrugen-core --test {test}`).
pub fn check_golden(path: &Path, actual: &str, test: &str) {
    if blessing() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, actual).unwrap_or_else(|e| panic!("writing {}: {e}", path.display()));
        eprintln!("blessed {}", path.display());
        return;
    }
    let expected = std::fs::read_to_string(path).unwrap_or_else(|e| {
        panic!(
            "cannot read golden file {}: {e}\n\
             generate it with: LRUGEN_BLESS=1 cargo test -p lrugen-core --test {test}",
            path.display()
        )
    });
    if expected == actual {
        return;
    }
    let mut diff = String::new();
    let (e, a): (Vec<_>, Vec<_>) = (expected.split('\n').collect(), actual.split('\n').collect());
    for i in 0..e.len().max(a.len()) {
        let (el, al) = (e.get(i).copied(), a.get(i).copied());
        if el != al {
            diff.push_str(&format!(
                "  line {}: expected {:?}, got {:?}\n",
                i + 1,
                el.unwrap_or("<none>"),
                al.unwrap_or("<none>")
            ));
        }
    }
    panic!(
        "{} differs from this run:\n{diff}\
         If the change is intended, regenerate with\n  \
         LRUGEN_BLESS=1 cargo test -p lrugen-core --test {test}\n\
         and review `git diff {}`.",
        path.display(),
        path.parent().unwrap().display()
    );
}

/// `mmap` of `pages` of writable anonymous memory at `vpn` (`MAP_FIXED_NOREPLACE`).
pub fn anon_mmap(task: u32, vpn: u32, pages: u32) -> lrugen::workload::Op {
    lrugen::workload::Op::Mmap {
        task,
        vpn,
        pages,
        file: lrugen::workload::ANON_FILE,
        pgoff: 0,
        flags: vmf::WRITE as u8,
        compressed_pct: 0,
    }
}

/// A node-level squeeze by anon memory with no memcg limit: 3,000 pages populated by stores, then
/// 6,000 uniform loads and stores (half stores) on `machine` under `policy` (the scheduler-slice
/// tests of `engine.rs` and `switch_effects.rs`), with the invariant checker on.
pub fn anon_squeeze(machine: MachineConfig, policy: lrugen::sim::PolicyKind) -> lrugen::sim::RunConfig {
    let mut cfg = lrugen::sim::RunConfig::new(
        machine,
        lrugen::sim::MemcgConfig::default(),
        lrugen::workload::WorkloadSpec::Anon {
            pages: 3_000,
            write_ratio: 0.5,
            dist: lrugen::workload::dist::Dist::Uniform,
            accesses: 6_000,
            compressed_pct: 0,
        },
        policy,
    );
    cfg.check = true;
    cfg
}

/// Anon loads and stores (30 % stores, Zipf 0.9) over 3,000 pages in a 1,024-page memcg with
/// swap: anon reclaimed (and swapped) under memcg reclaim only (the machine has room: kswapd
/// stays asleep). The invariant checker on.
pub fn anon_memcg_reclaim(policy: lrugen::sim::PolicyKind) -> lrugen::sim::RunConfig {
    let mut c = lrugen::sim::RunConfig::new(
        MachineConfig::simple(1_024 + 16_384, 8_192),
        lrugen::sim::MemcgConfig {
            max: Some(1_024),
            ..Default::default()
        },
        lrugen::workload::WorkloadSpec::Anon {
            compressed_pct: 0,
            pages: 3_000,
            write_ratio: 0.3,
            dist: "zipf:0.9".parse().expect("dist"),
            accesses: 20_000,
        },
        policy,
    );
    c.check = true;
    c
}

/// A file of `pages` pages read once, page by page, by a new task of the root memcg (kswapd
/// inline): the global-pressure workload of the zone tests, with no check failure on the way.
pub fn read_file_as_root<P: Policy>(k: &mut Kernel<P>, pages: u64) {
    let task = k.create_mm(ROOT_MEMCG);
    let f = k.m.create_file("f", pages, Advice::Normal);
    for i in 0..pages {
        k.read_page(task, f, i).unwrap();
    }
    assert!(k.m.check_failure.is_none(), "{:?}", k.m.check_failure);
}

/// 32 MiB as x86 lays it out (DMA 4,095 pages, DMA32 4,096), read-ahead off, DMA32 with 1,500
/// pages used at boot and 300 on its per-CPU list (`high` 400 between 60 and 512, batch 7),
/// DMA's list not used yet (`high: 0`, as 7.2 prints it): a machine as a guest's zones build it.
pub fn x86_with_pcp_lists() -> MachineConfig {
    use lrugen::mm::node::{PcpBoot, ZoneBoot};
    let mut cfg = MachineConfig::x86(8192, 0);
    cfg.ra_pages = 0;
    let list = |count, high, high_min, high_max, batch| {
        Some(PcpBoot {
            count,
            high,
            high_min,
            high_max,
            batch,
        })
    };
    cfg.zone_boot = vec![vec![
        ZoneBoot {
            used: 32,
            pcp: list(0, 0, 37, 480, 1),
            ..Default::default()
        },
        ZoneBoot {
            used: 1500,
            pcp: list(300, 400, 60, 512, 7),
            ..Default::default()
        },
    ]];
    cfg
}
