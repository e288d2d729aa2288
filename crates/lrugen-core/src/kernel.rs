// SPDX-License-Identifier: GPL-2.0-only
//! The kernel's entry points that workloads drive: buffered reads and writes through the page
//! cache (with read-ahead), loads and stores through the page tables (with anon, swap and file
//! page faults, and copy-on-write after fork), and the address-space system calls of
//! [`syscalls`] (mmap, munmap, madvise, fork). Each allocates and charges memory through the reclaim engine, and feeds the policy
//! the access events the kernel feeds it (`kernel-mglru.md` §3).
//!
//! [`Kernel`] pairs the machine with one policy, statically: every per-access hook is a direct call.

use crate::mm::folio::{pg, FolioId, NIL};
use crate::mm::memcg::MemcgId;
use crate::mm::pagecache::{Advice, Slot};
use crate::mm::vm::{pte, vmf};
use crate::mm::vmstat::Stat;
use crate::mm::Machine;
use crate::reclaim::alloc::{self, AllocError};
use crate::reclaim::mglru::debugfs::Errno;
use crate::reclaim::{check, tiering, AddCtx, Policy};

pub mod syscalls;

/// What one page access cost.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// The page was resident and mapped (load/store) or cached (read): no fault, no I/O.
    Hit,
    /// A fault served without I/O (first touch of anon memory, a page found in the page cache or
    /// swap cache).
    Minor,
    /// The page had to be read from storage or swap.
    Major,
}

/// Why an access failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AccessError {
    /// No memory could be had.
    Alloc(AllocError),
    /// The task was killed by the OOM killer.
    Killed(u32),
    /// An access outside every VMA, or past the end of a file.
    Fault(String),
}

impl std::fmt::Display for AccessError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AccessError::Alloc(e) => write!(f, "{e}"),
            AccessError::Killed(t) => write!(f, "task {t} was killed by the OOM killer"),
            AccessError::Fault(s) => write!(f, "{s}"),
        }
    }
}

impl From<AllocError> for AccessError {
    fn from(e: AllocError) -> Self {
        AccessError::Alloc(e)
    }
}

/// The simulated kernel: a machine and its reclaim policy.
pub struct Kernel<P: Policy> {
    /// The machine.
    pub m: Machine,
    /// The policy.
    pub p: P,
    /// Pages charged over `memory.high` since the last return to user space, and by whom.
    over_high: (u64, MemcgId),
}

impl<P: Policy> Kernel<P> {
    /// Pair a machine with a policy built for it.
    pub fn new(mut m: Machine, p: P) -> Self {
        m.apply_switches(p.switches());
        let mut k = Kernel {
            m,
            p,
            over_high: (0, 0),
        };
        k.populate_boot_shmem();
        k
    }

    /// Put the guest's boot shmem on the LRU ([`crate::mm::BootShmem`]): each page a frame of
    /// its zone, charged to the root memcg (which has no limit), an anon folio of the shmem's
    /// own address space, added as `folio_add_lru` adds a new folio.
    fn populate_boot_shmem(&mut self) {
        let pending = std::mem::take(&mut self.m.boot_shmem.pending);
        if pending.is_empty() {
            return;
        }
        let mm = self.m.boot_shmem_mm();
        let mut index = 0u32;
        for (node, zone, pages) in pending {
            for _ in 0..pages {
                let Some(id) = self.m.take_boot_frame(node, zone) else {
                    break;
                };
                let mut over = 0;
                if alloc::charge(&mut self.m, &mut self.p, id, crate::mm::memcg::ROOT_MEMCG, &mut over).is_err() {
                    self.m.free_frame(id);
                    break;
                }
                self.m.folios[id].set(pg::ANON | pg::SWAPBACKED);
                self.m.set_anon_rmap(id, mm, index);
                self.m
                    .mod_lruvec_state(crate::mm::memcg::ROOT_MEMCG, node, Stat::NrShmem, 1);
                index += 1;
                self.p.add_folio(&mut self.m, id);
            }
        }
    }

    /// Create a memcg below `parent`.
    pub fn create_memcg(&mut self, parent: MemcgId, name: &str) -> MemcgId {
        let id = self.m.create_memcg(parent, name);
        self.p.memcg_created(&self.m, id);
        id
    }

    /// Create a process address space in `memcg` (fork/exec: `lru_gen_add_mm`).
    pub fn create_mm(&mut self, memcg: MemcgId) -> u32 {
        let id = self.m.create_mm(memcg);
        self.p.mm_created(&self.m, id);
        self.reclaim_kmem_excess();
        id
    }

    /// `rmdir` of `memcg` (`cgroup_rmdir` → `mem_cgroup_css_offline`): refused with `EBUSY`
    /// while a task (live or not yet forked) is in it or below it, or a child is online
    /// (`cgroup_destroy_locked`), with `ENOENT` if it is removed already, and with `EBUSY` for
    /// the root. Then offline ([`Machine::memcg_offline`], [`Policy::memcg_offline`]): its
    /// folios stay charged to it and on its lruvecs, reclaim of its ancestors scrapes them, and
    /// it is freed once nothing pins it ([`Self::reap_memcgs`]).
    pub fn rmdir_memcg(&mut self, memcg: MemcgId) -> Result<(), Errno> {
        if memcg == crate::mm::memcg::ROOT_MEMCG {
            return Err(Errno::EBUSY);
        }
        if memcg as usize >= self.m.memcgs.len() || !self.m.memcgs[memcg].online() {
            return Err(Errno::ENOENT);
        }
        let populated = self
            .m
            .mms
            .iter()
            .any(|mm| (mm.alive || mm.unborn) && self.m.memcgs.is_descendant(mm.memcg, memcg));
        if populated || self.m.memcgs.has_online_children(memcg) {
            return Err(Errno::EBUSY);
        }
        self.m.memcg_offline(memcg);
        if self.p.switches().reparent_lru_folios {
            let parent = self.m.memcgs[memcg].parent.expect("not the root");
            // the batches hold folios off the lists; the kernel's name the objcg, repointed
            self.p.reparent_lru(&mut self.m, memcg, parent);
            self.m.reparent_folios(memcg);
        }
        self.p.memcg_offline(&mut self.m, memcg);
        self.reap_memcgs();
        Ok(())
    }

    /// Release and free every offline memcg that nothing pins any more (`css_release` once the
    /// last folio charged to it and the last swap entry recording its id are gone). The kernel
    /// does it from a work item after an RCU grace period; the model at the next return to user
    /// space or control action.
    pub fn reap_memcgs(&mut self) {
        self.m.memcgs.reap_pending = false;
        if self.m.memcgs.zombies == 0 {
            return;
        }
        for id in 0..self.m.memcgs.len() as MemcgId {
            if self.m.memcg_unpinned(id) {
                self.p.memcg_released(&self.m, id);
                self.m.memcg_free(id);
            }
        }
    }

    /// Write `task`'s id to `memcg`'s `cgroup.procs` (`cgroup_attach_task` →
    /// `mem_cgroup_attach`): its later charges go to `memcg`, what is charged already stays
    /// where it is (cgroup v2 moves no charge; `memory.move_charge_at_immigrate` is v1's), its
    /// kernel memory included; MGLRU moves its mm to the new memcg's mm list
    /// (`lru_gen_migrate_mm`). `ESRCH` if the task does not live, `ENODEV` if `memcg` was removed.
    pub fn move_task(&mut self, task: u32, memcg: MemcgId) -> Result<(), Errno> {
        let Some(mm) = self.m.mms.get(task as usize) else {
            return Err(Errno::ESRCH);
        };
        if !mm.alive {
            return Err(Errno::ESRCH);
        }
        if memcg as usize >= self.m.memcgs.len() || !self.m.memcgs[memcg].online() {
            return Err(Errno::ENODEV);
        }
        if mm.memcg == memcg {
            return Ok(());
        }
        self.m.mms[task as usize].memcg = memcg;
        // lru_gen_migrate_mm: lru_gen_del_mm + lru_gen_add_mm
        self.p.mm_created(&self.m, task);
        Ok(())
    }

    /// Run the invariant checker now.
    pub fn check(&self) -> Result<(), String> {
        if let Some(e) = &self.m.check_failure {
            return Err(e.clone());
        }
        check::check_invariants(&self.m, &self.p)
    }

    /// Allocate and charge a folio for `memcg` on `node`; it is "in flight" until added to an LRU.
    fn new_folio(&mut self, node: usize, memcg: MemcgId) -> Result<FolioId, AllocError> {
        let id = alloc::alloc_frame(&mut self.m, &mut self.p, node)?;
        self.m.in_flight = id;
        let mut over = 0;
        if let Err(e) = alloc::charge(&mut self.m, &mut self.p, id, memcg, &mut over) {
            self.m.in_flight = NIL;
            self.m.free_frame(id);
            return Err(e);
        }
        if over > 0 {
            self.over_high = (self.over_high.0 + over, memcg);
        }
        Ok(id)
    }

    /// `folio_add_lru` of the in-flight folio: into the `lru_add` batch, drained when full.
    fn add_lru(&mut self, id: FolioId, ctx: AddCtx) {
        self.m.in_flight = NIL;
        self.p.lru_add_prepare(&mut self.m, id, ctx);
        if self.m.lru_add.push(id) >= self.p.folio_batch_size() || self.m.lru_cache_disabled {
            crate::reclaim::lru_add_drain(&mut self.m, &mut self.p);
        }
    }

    /// `lru_add_drain` (the one CPU's batch).
    pub fn lru_add_drain(&mut self) {
        crate::reclaim::lru_add_drain(&mut self.m, &mut self.p);
    }

    /// Return to user space: reclaim what the last operation charged over `memory.high`, and
    /// what its kernel objects charged over `memory.max` ([`alloc::reclaim_kmem_excess`]).
    #[inline]
    pub fn return_to_user(&mut self) {
        self.reclaim_kmem_excess();
        if self.m.kswapd_pending {
            alloc::run_pending_kswapd(&mut self.m, &mut self.p);
        }
        if self.m.io_waited {
            // the task slept on a read: it gets the CPU back with a new slice
            self.m.io_waited = false;
            self.m.task_picked_ns = self.m.now_ns;
        }
        if self.m.memcgs.reap_pending {
            self.reap_memcgs();
        }
        let (nr, memcg) = self.over_high;
        if nr > 0 {
            self.over_high = (0, 0);
            alloc::reclaim_high(&mut self.m, &mut self.p, memcg, nr);
        }
    }

    // ---------------------------------------------------------------------------------------------
    // Page cache: buffered I/O and read-ahead (mm/filemap.c, mm/readahead.c)
    // ---------------------------------------------------------------------------------------------

    /// Instantiate page `index` of `file` in the page cache (`filemap_add_folio`): allocate, charge,
    /// look for a shadow (refault), add to the LRU. Counts the read I/O.
    fn page_cache_read(
        &mut self,
        task: u32,
        file: u32,
        index: u64,
        ctx: AddCtx,
        readahead_mark: bool,
    ) -> Result<FolioId, AllocError> {
        let id = self.page_cache_add(task, file, index, ctx, readahead_mark)?;
        self.m.count_vm_events(Stat::Pgpgin, 4);
        Ok(id)
    }

    /// Instantiate page `index` of `file` in the page cache without reading it (a write that
    /// covers the whole page, or the first half of [`Self::page_cache_read`]).
    fn page_cache_add(
        &mut self,
        task: u32,
        file: u32,
        index: u64,
        ctx: AddCtx,
        readahead_mark: bool,
    ) -> Result<FolioId, AllocError> {
        let memcg = self.m.mms[task as usize].memcg;
        let id = self.new_folio(tiering::local_node(&self.m), memcg)?;
        if readahead_mark {
            self.m.folios[id].set(pg::READAHEAD);
        }
        if let Some(shadow) = self.m.page_cache_insert(id, file, index) {
            self.p.refault(&mut self.m, id, shadow, ctx.in_fault);
        }
        self.add_lru(id, ctx);
        Ok(id)
    }

    /// Read pages `[start, start + nr)` of `file` that are not cached, marking page
    /// `start + nr - lookahead` with `PG_readahead` (`page_cache_ra_unbounded`). `fault_at`: the
    /// page a fault on a VMA with recency asked for (`current->in_lru_fault`), if in one.
    fn do_page_cache_ra(
        &mut self,
        task: u32,
        file: u32,
        start: u64,
        nr: u64,
        lookahead: u64,
        fault_at: Option<u64>,
    ) -> Result<(), AllocError> {
        let size = self.m.files[file as usize].size;
        let end = (start + nr).min(size);
        for i in start..end {
            if let Slot::Folio(_) = self.m.files[file as usize].slot(i) {
                continue;
            }
            let mark = lookahead > 0 && i == start + nr - lookahead;
            let ctx = AddCtx {
                in_fault: fault_at.is_some(),
                readahead: fault_at.is_some_and(|f| f != i),
            };
            self.page_cache_read(task, file, i, ctx, mark)?;
        }
        Ok(())
    }

    /// `ondemand_readahead`: grow or start the read-ahead window for a read at `index`.
    /// `hit_marker`: called because a `PG_readahead` folio was reached (asynchronous read-ahead).
    fn ondemand_readahead(
        &mut self,
        task: u32,
        file: u32,
        index: u64,
        req: u64,
        hit_marker: bool,
    ) -> Result<(), AllocError> {
        let f = &self.m.files[file as usize];
        let max = if f.advice == Advice::Sequential {
            f.ra.ra_pages * 2
        } else {
            f.ra.ra_pages
        };
        let mut ra = f.ra;
        let init = |ra: &mut crate::mm::pagecache::RaState| {
            ra.start = index;
            ra.size = init_ra_size(req, max);
            ra.async_size = if ra.size > req { ra.size - req } else { ra.size };
        };
        if index == 0 {
            init(&mut ra);
        } else if index == ra.start + ra.size - ra.async_size || index == ra.start + ra.size {
            ra.start += ra.size;
            ra.size = next_ra_size(ra.size, max);
            ra.async_size = ra.size;
        } else if hit_marker {
            // A marker of an interleaved stream: find the next hole and continue from there.
            let mut start = index + 1;
            while start < f.size && start - index <= max && matches!(f.slot(start), Slot::Folio(_)) {
                start += 1;
            }
            if start - index > max {
                return Ok(());
            }
            ra.start = start;
            ra.size = next_ra_size(start - index + req, max);
            ra.async_size = ra.size;
        } else if req > max || (ra.prev_index != u64::MAX && index.wrapping_sub(ra.prev_index) <= 1) {
            // an oversize read, or a sequential one (same or next page as the previous read)
            init(&mut ra);
        } else {
            // Standalone, small random read: read as is, and leave the window alone.
            return self.do_page_cache_ra(task, file, index, req, 0, None);
        }
        // readit: a synchronous read that would hit its own marker merges the next window.
        if !hit_marker && index == ra.start && ra.size == ra.async_size {
            let add = next_ra_size(ra.size, max);
            if ra.size + add <= max {
                ra.async_size = add;
                ra.size += add;
            } else {
                ra.size = max;
                ra.async_size = max >> 1;
            }
        }
        self.m.files[file as usize].ra.start = ra.start;
        self.m.files[file as usize].ra.size = ra.size;
        self.m.files[file as usize].ra.async_size = ra.async_size;
        self.do_page_cache_ra(task, file, ra.start, ra.size, ra.async_size, None)
    }

    /// `page_cache_sync_ra`: a buffered read missed at `index`.
    fn page_cache_sync_ra(&mut self, task: u32, file: u32, index: u64, req: u64) -> Result<(), AllocError> {
        let f = &self.m.files[file as usize];
        if f.advice == Advice::Random || f.ra.ra_pages == 0 {
            // force_page_cache_ra / no read-ahead: just what was asked
            return self.do_page_cache_ra(task, file, index, req, 0, None);
        }
        self.ondemand_readahead(task, file, index, req, false)
    }

    /// Buffered read of one page (`filemap_read` for a 4 KiB `pread`). Returns whether the page was
    /// cached.
    pub fn read_page(&mut self, task: u32, file: u32, index: u64) -> Result<Access, AccessError> {
        self.check_file_io(task, file, index, "read")?;
        let mut access = Access::Hit;
        let id = match self.m.files[file as usize].slot(index) {
            Slot::Folio(id) => id,
            _ => {
                access = Access::Major;
                // the task sleeps until the page is read (asynchronous read-ahead does not wait)
                self.m.io_waited = true;
                self.page_cache_sync_ra(task, file, index, 1)?;
                match self.m.files[file as usize].slot(index) {
                    Slot::Folio(id) => id,
                    // The window moved past the page (filemap_create_folio): read it alone.
                    _ => self.page_cache_read(task, file, index, AddCtx::default(), false)?,
                }
            }
        };
        if self.m.folios[id].test(pg::READAHEAD) {
            self.m.folios[id].clear(pg::READAHEAD);
            self.ondemand_readahead(task, file, index, 1, true)?;
        }
        // Only the first of consecutive reads of the same folio marks it accessed.
        let f = &mut self.m.files[file as usize];
        let same = f.ra.prev_index == index;
        f.ra.prev_index = index;
        if !same {
            self.p.mark_accessed(&mut self.m, id);
        }
        self.return_to_user();
        Ok(access)
    }

    /// Buffered write of one whole page (`generic_perform_write`): an uncached page is
    /// instantiated without being read (the write covers it; a refault if a shadow was there) —
    /// a minor event, no I/O — then marked accessed (`FGP_ACCESSED`) and dirty.
    pub fn write_page(&mut self, task: u32, file: u32, index: u64) -> Result<Access, AccessError> {
        self.check_file_io(task, file, index, "write")?;
        let mut access = Access::Hit;
        let id = match self.m.files[file as usize].slot(index) {
            Slot::Folio(id) => id,
            _ => {
                access = Access::Minor;
                self.page_cache_add(task, file, index, AddCtx::default(), false)?
            }
        };
        self.p.mark_accessed(&mut self.m, id);
        if !self.m.folios[id].test(pg::DIRTY) {
            self.m.folio_mark_dirty(id);
            let memcg = self.m.folios[id].memcg;
            crate::reclaim::writeback::balance_dirty_pages(&mut self.m, &mut self.p, memcg);
        }
        self.return_to_user();
        Ok(access)
    }

    /// The checks of a buffered `what` (read, write) of page `index` of `file` by `task`: the
    /// task is alive and the file exists and is that long.
    /// (Inlined into every access, with the errors built out of line.)
    #[inline]
    fn check_file_io(&mut self, task: u32, file: u32, index: u64, what: &str) -> Result<(), AccessError> {
        self.check_alive(task)?;
        match self.m.files.get(file as usize) {
            Some(f) if index < f.size => Ok(()),
            f => Err(file_io_error(file, index, f.map(|f| f.size), what)),
        }
    }

    /// A context switch to `task`, if it is not the one running: `lru_gen_use_mm` marks its mm
    /// used on every node.
    #[inline]
    fn switch_to(&mut self, task: u32) {
        if self.m.current_task != Some(task) {
            self.m.current_task = Some(task);
            self.m.lru_gen_use_mm(task, "switch");
        }
    }

    #[inline]
    fn check_alive(&mut self, task: u32) -> Result<(), AccessError> {
        match self.m.mms.get(task as usize) {
            Some(mm) if !mm.unborn && mm.alive => {}
            mm => return Err(task_error(task, mm.map(|mm| mm.unborn))),
        }
        self.switch_to(task);
        // `task_tick_numa`: NUMA balancing's scan, when one may be due (never without it)
        if self.m.now_ns >= self.m.numa_next_scan_ns {
            tiering::task_numa_work(&mut self.m, task);
        }
        Ok(())
    }

    /// Advance the virtual clock by what an access of kind `a` costs (`MachineConfig::clock`); a
    /// major access is a swap-in if it read swap.
    fn tick(&mut self, a: &Result<Access, AccessError>, swapped_in: bool) {
        let c = self.m.cfg.clock;
        self.m.now_ns += c.access_ns
            + match a {
                Ok(Access::Minor) => c.minor_fault_ns,
                Ok(Access::Major) if swapped_in => c.swap_in_ns,
                Ok(Access::Major) => c.read_io_ns,
                _ => 0,
            };
    }

    /// Run one operation of a workload.
    pub fn step(&mut self, op: crate::workload::Op) -> Result<Access, AccessError> {
        let swapins = self.m.events.get(Stat::Pswpin);
        let r = self.exec(op);
        let swapped_in = self.m.events.get(Stat::Pswpin) != swapins;
        self.tick(&r, swapped_in);
        r
    }

    /// The first stage of prefetching for an operation some steps ahead (16 in `sim::run_kernel`):
    /// the page-cache slot a buffered read or write of a file page will look up, or the PTE of a
    /// load or store ([`crate::mm::prefetch`]). Changes nothing.
    #[inline]
    pub fn prefetch_slot(&self, op: &crate::workload::Op) {
        use crate::workload::Op;
        match *op {
            Op::Read { file, index, .. } | Op::Write { file, index, .. } => {
                if let Some(f) = self.m.files.get(file as usize) {
                    f.slots.prefetch(index);
                }
            }
            // the PTE a load or store will find (or fault on)
            Op::Load { task, vpn } | Op::Store { task, vpn } => self.m.prefetch_pte(task, vpn),
            _ => {}
        }
    }

    /// The first of three stages of [`crate::sim::run_kernel`]'s prefetching, farthest ahead:
    /// the page-cache leaf record a buffered read or write will look its slot up in, or the PTE
    /// of a load or store. Changes nothing.
    #[inline]
    pub fn prefetch_leaf(&self, op: &crate::workload::Op) {
        use crate::workload::Op;
        match *op {
            Op::Read { file, index, .. } | Op::Write { file, index, .. } => {
                if let Some(f) = self.m.files.get(file as usize) {
                    f.slots.prefetch_leaf(index);
                }
            }
            Op::Load { task, vpn } | Op::Store { task, vpn } => self.m.prefetch_pte(task, vpn),
            _ => {}
        }
    }

    /// The second of those three stages: the page-cache entry of a buffered read or write, found
    /// through its leaf record (which the first stage brought in). Changes nothing.
    #[inline]
    pub fn prefetch_entry(&self, op: &crate::workload::Op) {
        use crate::workload::Op;
        if let Op::Read { file, index, .. } | Op::Write { file, index, .. } = *op {
            if let Some(f) = self.m.files.get(file as usize) {
                f.slots.prefetch(index);
            }
        }
    }

    /// The third stage, closer to the operation: the folio now in that slot or mapped by that
    /// PTE, if any, or the value of the shadow entry in that slot.
    #[inline]
    pub fn prefetch_folio(&self, op: &crate::workload::Op) {
        use crate::workload::Op;
        match *op {
            Op::Read { file, index, .. } | Op::Write { file, index, .. } => {
                if let Some(f) = self.m.files.get(file as usize) {
                    if let Some(id) = f.slots.prefetch_shadow_or_folio(index) {
                        self.m.folios.prefetch(id);
                    }
                }
            }
            Op::Load { task, vpn } | Op::Store { task, vpn } => {
                let e = self.m.pte_or_none(task, vpn);
                if e & pte::PRESENT != 0 {
                    self.m.folios.prefetch(e & pte::PFN_MASK);
                }
            }
            _ => {}
        }
    }

    /// Run one operation without advancing the clock (the virtual-time engine prices it).
    pub fn exec(&mut self, op: crate::workload::Op) -> Result<Access, AccessError> {
        use crate::workload::Op;
        // the flusher's periodic wakeup, when due
        crate::reclaim::writeback::periodic(&mut self.m, &mut self.p);
        // the memcg statistics flush worker, when due
        self.m.flush_stats_periodic();
        if self.m.kswapd_pending && self.m.kswapd_due_ns.is_some() {
            // a kswapd waiting for the task's scheduler slice: the tick that ends the slice
            // preempts the task wherever it is, in user space too (`run_pending_kswapd` checks
            // the time)
            alloc::run_pending_kswapd(&mut self.m, &mut self.p);
        }
        if matches!(op, Op::Exit { .. } | Op::Munmap { .. } | Op::Madvise { .. }) {
            // exit_mmap, unmap_region and madvise drain the local lru_add batch first
            self.lru_add_drain();
        }
        let r = match op {
            Op::Read { task, file, index } => self.read_page(task, file, index),
            Op::Write { task, file, index } => self.write_page(task, file, index),
            Op::Load { task, vpn } => self.access(task, vpn, false),
            Op::Store { task, vpn } => self.access(task, vpn, true),
            Op::Exit { task } => {
                self.exit(task);
                Ok(Access::Hit)
            }
            Op::Mmap {
                task,
                vpn,
                pages,
                file,
                pgoff,
                flags,
                compressed_pct,
            } => {
                let file = (file != crate::workload::ANON_FILE).then_some((file, pgoff));
                self.mmap(task, vpn, pages, flags as u32, file, compressed_pct)
            }
            Op::Munmap { task, vpn, pages } => self.munmap(task, vpn, pages),
            Op::Madvise {
                task,
                vpn,
                pages,
                advice,
            } => self.madvise(task, vpn, pages, advice),
            Op::Mbind { task, vpn, pages, node } => self.mbind(task, vpn, pages, node),
            Op::Fork { task, child } => self.fork(task, child),
            // no kernel work: the engine delays the task, a replay ignores it
            Op::Think { .. } => Ok(Access::Hit),
        };
        if let (Ok(Access::Major), Some(t)) = (&r, self.m.current_task) {
            self.m.lru_gen_use_mm(t, "major_fault");
        }
        // mmap, fork and failed operations do not return through `return_to_user`
        self.reclaim_kmem_excess();
        r
    }

    /// [`crate::workload::Step::alloc_page_first`]: the page the task of `op` allocates and frees
    /// before it (`mincore()`'s buffer), on the local node; nothing for a task that is not
    /// alive (the operation itself says why not).
    #[cold]
    pub fn alloc_page_and_free(&mut self, op: &crate::workload::Op) -> Result<(), AccessError> {
        let task = op.task();
        if !self.m.mms.get(task as usize).is_some_and(|mm| mm.alive && !mm.unborn) {
            return Ok(());
        }
        // the task is the one running the system call: its reclaim and any OOM kill are its
        self.switch_to(task);
        let node = tiering::local_node(&self.m);
        alloc::alloc_user_page_and_free(&mut self.m, &mut self.p, node)?;
        Ok(())
    }

    /// [`alloc::reclaim_kmem_excess`] when kernel memory was charged over a limit. Twice per
    /// access (here and in [`Kernel::return_to_user`]): always inlined, since it was a call of
    /// about 17 instructions for one test.
    #[inline(always)]
    fn reclaim_kmem_excess(&mut self) {
        if self.m.kmem_over {
            alloc::reclaim_kmem_excess(&mut self.m, &mut self.p);
        }
    }

    // ---------------------------------------------------------------------------------------------
    // Page faults (mm/memory.c)
    // ---------------------------------------------------------------------------------------------

    /// A load (`write` false) or store by `task` at virtual page `vpn`: the MMU sets the accessed
    /// (and dirty) bits of a present PTE; otherwise the fault handler runs.
    pub fn access(&mut self, task: u32, vpn: u32, write: bool) -> Result<Access, AccessError> {
        self.check_alive(task)?;
        let e = {
            let mm = &self.m.mms[task as usize];
            let pi = crate::mm::vm::MmStruct::pmd_index_checked(mm, vpn);
            match pi {
                Some(_) => self.m.pte(task, vpn),
                None => {
                    return Err(AccessError::Fault(format!(
                        "task {task}: access to unmapped page {vpn:#x}"
                    )))
                }
            }
        };
        if e & pte::PRESENT != 0 {
            if e & pte::PROTNONE != 0 {
                // made PROT_NONE by NUMA balancing's scan: a hint fault, and the access retried
                let r = self.numa_hint_fault(task, vpn, write);
                self.m.pmd_mkyoung(task, vpn);
                return Ok(r);
            }
            if write && self.cow_needed(e & pte::PFN_MASK) {
                // a write-protected PTE of a folio shared since fork: copy on write, and the
                // store retried
                let r = self.wp_page_copy(task, vpn, e & pte::PFN_MASK, true);
                if r.is_ok() {
                    self.m.pmd_mkyoung(task, vpn);
                }
                return r;
            }
            // hardware: accessed bit, dirty bit on store, non-leaf PMD accessed bit
            let p = self.m.pte_mut_walked(task, vpn);
            *p |= pte::YOUNG | if write { pte::DIRTY } else { 0 };
            return Ok(Access::Hit);
        }
        if e & pte::ZERO != 0 && !write {
            let p = self.m.pte_mut_walked(task, vpn);
            *p |= pte::YOUNG;
            return Ok(Access::Hit);
        }
        let memcg = self.m.mms[task as usize].memcg;
        self.m.count_events(memcg, Stat::Pgfault, 1);
        let Some(vi) = self.m.mms[task as usize].find_vma(vpn) else {
            return Err(AccessError::Fault(format!(
                "task {task}: access to unmapped page {vpn:#x}"
            )));
        };
        let vma = self.m.mms[task as usize].vmas[vi];
        let ctx = AddCtx {
            in_fault: vma.has_recency(),
            readahead: false,
        };
        let r = if vma.is_anon() {
            if e & pte::SWAP != 0 {
                self.do_swap_page(task, vi, vpn, e & pte::PFN_MASK, write, ctx)
            } else if let Some(r) = self.do_huge_pmd_anonymous_page(task, &vma, vpn, write, e, ctx) {
                r
            } else {
                self.do_anonymous_page(task, vpn, write, e & pte::ZERO != 0, ctx)
            }
        } else {
            self.filemap_fault(task, vpn, &vma, write, ctx)
        };
        if r.is_ok() && vma.flags & vmf::LOCKED != 0 {
            self.mlock_vpn(task, vpn);
        }
        if r.is_ok() {
            // the faulting access is retried, and the MMU walks the table to the new PTE
            self.m.pmd_mkyoung(task, vpn);
        }
        self.return_to_user();
        match r {
            Ok(a) => {
                if a == Access::Major {
                    self.m.count_events(memcg, Stat::Pgmajfault, 1);
                }
                Ok(a)
            }
            Err(e) => Err(e),
        }
    }

    /// A hint fault (`handle_mm_fault` → `do_numa_page`): a minor fault that makes the PTE
    /// accessible again and may promote the folio ([`tiering::do_numa_page`]).
    #[cold]
    fn numa_hint_fault(&mut self, task: u32, vpn: u32, write: bool) -> Access {
        let memcg = self.m.mms[task as usize].memcg;
        self.m.count_events(memcg, Stat::Pgfault, 1);
        tiering::do_numa_page(&mut self.m, &mut self.p, task, vpn, write);
        self.return_to_user();
        Access::Minor
    }

    fn mlock_vpn(&mut self, task: u32, vpn: u32) {
        let e = self.m.pte(task, vpn);
        if e & pte::PRESENT == 0 {
            return;
        }
        let id = e & pte::PFN_MASK;
        if self.m.folios[id].test(pg::MLOCKED) {
            return;
        }
        self.m.folios[id].set(pg::MLOCKED);
        if self.m.folios[id].test(pg::LRU) {
            self.p.del_folio(&mut self.m, id);
            self.p.add_folio(&mut self.m, id);
        }
    }

    /// `__handle_mm_fault`'s `create_huge_pmd` → `do_huge_pmd_anonymous_page` for an anon fault
    /// where no PTE table is (`pmd_none`) and THP is allowed (`mm::thp::fault_allows_pmd`): a
    /// write fault allocates and charges a PMD-sized folio (`alloc_anon_thp`), maps it by one huge
    /// PMD, counts `thp_fault_alloc` and adds it to the LRU as one folio. `None`: the fault goes
    /// the order-0 way (`VM_FAULT_FALLBACK`: THP not allowed here, or no block or no charge,
    /// counted `thp_fault_fallback`). A read fault keeps the order-0 zero page: the kernel maps
    /// the huge zero page, which 6.1 and 6.12 split on the first write into order-0 pages, as
    /// the model's zero-page PTE ends (7.2 allocates a THP there, `do_huge_zero_wp_pmd`: not
    /// modelled; docs/thp.md).
    fn do_huge_pmd_anonymous_page(
        &mut self,
        task: u32,
        vma: &crate::mm::vm::Vma,
        vpn: u32,
        write: bool,
        e: u32,
        ctx: AddCtx,
    ) -> Option<Result<Access, AccessError>> {
        let thp = self.m.cfg.thp;
        if thp.is_never() || !write || e != pte::NONE {
            return None;
        }
        let mm = &self.m.mms[task as usize];
        if mm.pmds[crate::mm::vm::MmStruct::pmd_index(vpn)] != crate::mm::vm::PMD_NONE
            || !crate::mm::thp::fault_allows_pmd(thp, vma, vpn)
        {
            return None;
        }
        let memcg = mm.memcg;
        if vma.flags & crate::mm::vm::vmf::HUGEPAGE != 0 {
            // `defrag` `madvise` (the default): a MADV_HUGEPAGE VMA's fault asks for
            // GFP_TRANSHUGE (`vma_thp_gfp_mask`), whose charge may reclaim from the memcg
            crate::reclaim::alloc::reclaim_for_thp_charge(&mut self.m, &mut self.p, memcg);
        }
        let node = tiering::fault_node(&self.m, task, vpn);
        let head = crate::mm::thp::alloc_anon_thp(&mut self.m, node, memcg).ok()?;
        let haddr = vpn & !(crate::mm::thp::HPAGE_PMD_NR - 1);
        self.m.map_folio_pmd(task, haddr, head, true);
        self.m.count_events(memcg, Stat::ThpFaultAlloc, 1);
        if !self.m.memcgs.over_high(memcg).is_empty() {
            self.over_high = (self.over_high.0 + u64::from(crate::mm::thp::HPAGE_PMD_NR), memcg);
        }
        self.add_lru(head, ctx);
        Some(Ok(Access::Minor))
    }

    /// `do_anonymous_page`: a read fault maps the shared zero page; a write allocates.
    fn do_anonymous_page(
        &mut self,
        task: u32,
        vpn: u32,
        write: bool,
        had_zero: bool,
        ctx: AddCtx,
    ) -> Result<Access, AccessError> {
        if !write {
            *self.m.pte_mut(task, vpn) = pte::ZERO | pte::YOUNG;
            return Ok(Access::Minor);
        }
        let _ = had_zero;
        let memcg = self.m.mms[task as usize].memcg;
        let id = self.new_folio(tiering::fault_node(&self.m, task, vpn), memcg)?;
        {
            let root = self.m.mms[task as usize].anon_root;
            self.m.folios[id].set(pg::ANON | pg::SWAPBACKED);
            self.m.set_anon_rmap(id, root, vpn);
        }
        if !self.m.mms[task as usize].alive {
            // killed by the OOM killer while we reclaimed for it
            self.m.in_flight = NIL;
            self.m.uncharge(id);
            self.m.free_frame(id);
            return Err(AccessError::Killed(task));
        }
        *self.m.pte_mut(task, vpn) = pte::NONE;
        self.m.map_folio(task, vpn, id, true);
        self.add_lru(id, ctx);
        Ok(Access::Minor)
    }

    /// `do_swap_page`: fault in a swapped-out anon page through the swap cache, reading ahead
    /// around it ([`Self::swapin_readahead`]) unless the device is `SWP_SYNCHRONOUS_IO` and the
    /// page is read around the swap cache.
    fn do_swap_page(
        &mut self,
        task: u32,
        vi: usize,
        vpn: u32,
        slot: u32,
        write: bool,
        ctx: AddCtx,
    ) -> Result<Access, AccessError> {
        // zram (or a RAM disk) is `SWP_SYNCHRONOUS_IO`: a page only this PTE references is read
        // around the swap cache, with no read-ahead, and its slot freed at once ("skip
        // swapcache"), so the next reclaim of the page writes it again; 7.2 frees the slot of
        // every zram swap fault once no entry holds it
        let sync_io = self.m.swap_synchronous();
        let skip_swapcache = sync_io && self.m.swap.count(slot) == 1;
        let (id, access) = match self.m.swap.cache_slot(slot) {
            Slot::Folio(id) => {
                self.swap_cache_hit(task, vi, vpn, id);
                (id, Access::Minor)
            }
            _ => {
                // 7.2: no synchronous device reads ahead, shared slot or not
                let no_readahead = skip_swapcache || (sync_io && self.p.switches().sync_io_skips_readahead);
                if !no_readahead {
                    self.swapin_readahead(task, vi, vpn, slot, ctx);
                }
                let id = match self.m.swap.cache_slot(slot) {
                    // read with its window
                    Slot::Folio(id) => id,
                    _ => self.swap_read_folio(task, vpn, slot, ctx)?,
                };
                if !self.m.mms[task as usize].alive {
                    // killed by the OOM killer while a read-ahead page reclaimed for it: what
                    // was read stays in the swap cache
                    return Err(AccessError::Killed(task));
                }
                (id, Access::Major)
            }
        };
        if self.m.folios[id].mapcount == 0 {
            // folio_add_new_anon_rmap: a folio read ahead by swap offset learns its page here
            // (in the swap cache: the root goes to the slot's entry, see `mm::folio`)
            let root = self.m.mms[task as usize].anon_root;
            self.m.set_anon_rmap(id, root, vpn);
        }
        // Replace the swap entry by the page.
        self.m.swap.put(slot);
        self.m.mms[task as usize].swap_ents -= 1;
        *self.m.pte_mut(task, vpn) = pte::NONE;
        // A folio that another PTE maps, or whose slot another swap entry (a forked sibling)
        // still holds, is mapped read-only and a store copies it (do_wp_page).
        let shared = self.m.folios[id].mapcount > 0 || self.m.swap.count(slot) > 0;
        self.m.map_folio(task, vpn, id, write && !shared);
        // should_try_to_free_swap: a write fault (or a full swap device) drops the swap copy.
        let skipped = if self.p.switches().sync_io_always_frees_swap {
            sync_io
        } else {
            skip_swapcache && access == Access::Major
        };
        if skipped || write || self.m.swap.is_full() || self.m.folios[id].test(pg::MLOCKED) {
            // folio_free_swap leaves the folio dirty: its only copy is in memory now
            self.m.folio_free_swap(id);
        }
        if write && shared && self.cow_needed(id) {
            self.wp_page_copy(task, vpn, id, false)?;
        }
        Ok(access)
    }

    /// The charge target of a swap-in of `slot` (`mem_cgroup_swapin_charge_folio`): the memcg
    /// the entry records, or the faulting task's once that memcg is offline.
    fn swapin_memcg(&self, task: u32, slot: u32) -> MemcgId {
        let owner = self.m.swap.owner(slot);
        if self.m.memcgs[owner].online() {
            owner
        } else {
            self.m.mms[task as usize].memcg
        }
    }

    /// Read `slot` into a new folio in the swap cache (`__read_swap_cache_async` +
    /// `swap_read_folio`): allocate and charge it, take the shadow its eviction left
    /// (`workingset_refault`), add it to the LRU (`folio_add_lru` with `ctx`), count the read.
    /// `vpn`: the page that holds the entry, if known (a page read ahead by swap offset learns
    /// it when it is mapped).
    fn swap_read_folio(&mut self, task: u32, vpn: u32, slot: u32, ctx: AddCtx) -> Result<FolioId, AccessError> {
        let memcg = self.swapin_memcg(task, slot);
        let id = self.new_folio(tiering::local_node(&self.m), memcg)?;
        if !self.m.mms[task as usize].alive {
            self.m.in_flight = NIL;
            self.m.uncharge(id);
            self.m.free_frame(id);
            return Err(AccessError::Killed(task));
        }
        {
            let root = self.m.mms[task as usize].anon_root;
            self.m.folios[id].set(pg::ANON | pg::SWAPBACKED);
            self.m.set_anon_rmap(id, root, vpn);
        }
        let shadow = self.m.swap_cache_add(id, slot);
        if let Some(s) = shadow {
            self.p.refault(&mut self.m, id, s, ctx.in_fault);
        }
        if ctx.readahead {
            // folio_set_readahead, before the folio is visible on the LRU
            self.m.folios[id].set(pg::READAHEAD);
            self.m.count_vm_events(Stat::SwapRa, 1);
        }
        self.add_lru(id, ctx);
        // swap_read_folio: the folio is charged before the read, which counts for its memcg too
        let charged = self.m.folios[id].memcg;
        self.m.count_events(charged, Stat::Pswpin, 1);
        if self.m.swap_io_counts_pgpg() {
            self.m.count_vm_events(Stat::Pgpgin, 4);
        }
        if !self.m.swap_synchronous() {
            self.m.io_waited = true;
        }
        Ok(id)
    }

    /// A fault found its page in the swap cache (`swap_cache_get_folio`, 7.2's
    /// `swap_update_readahead`): a read-ahead folio loses `PG_readahead` and counts
    /// `swap_ra_hit`, and a hit of the VMA's read-ahead or of the machine's; the VMA remembers the
    /// page as its last fault either way.
    fn swap_cache_hit(&mut self, task: u32, vi: usize, vpn: u32, id: FolioId) {
        let readahead = self.m.folios[id].test_clear(pg::READAHEAD);
        let vma_ra = self.m.swap_vma_readahead();
        if vma_ra {
            let ra = &mut self.m.mms[task as usize].vmas[vi].swap_ra;
            if readahead {
                ra.hits = (ra.hits + 1).min(crate::mm::swap::SWAP_RA_HITS_MAX);
            }
            ra.vpn = vpn;
        }
        if readahead {
            self.m.count_vm_events(Stat::SwapRaHit, 1);
            if !vma_ra {
                self.m.swap.ra.hits += 1;
            }
        }
    }

    /// `swapin_readahead`: read the fault's page with a window of neighbours into the swap cache,
    /// by virtual address (`swap_vma_readahead`, the VMA's window) or, with a rotational swap
    /// device, by swap offset (`swap_cluster_readahead`, the machine's window), then drain the
    /// LRU add batch. A window of one page reads nothing here (the caller reads the page). A page
    /// that cannot be had is skipped, as the kernel skips it; the fault's own read reports the
    /// failure.
    fn swapin_readahead(&mut self, task: u32, vi: usize, vpn: u32, slot: u32, ctx: AddCtx) {
        use crate::mm::swap::{swapin_nr_pages, SWAP_RA_ORDER_CEILING};
        let page_cluster = self.m.cfg.page_cluster;
        let ra_ctx = AddCtx {
            in_fault: ctx.in_fault,
            readahead: true,
        };
        if self.m.swap_vma_readahead() {
            // swap_vma_ra_win
            let max_win = 1u32 << page_cluster.min(SWAP_RA_ORDER_CEILING);
            if max_win == 1 {
                return;
            }
            let vma = self.m.mms[task as usize].vmas[vi];
            let prev = vma.swap_ra;
            let win = swapin_nr_pages(
                u64::from(prev.vpn),
                u64::from(vpn),
                u32::from(prev.hits),
                max_win,
                u32::from(prev.win),
            );
            self.m.mms[task as usize].vmas[vi].swap_ra = crate::mm::swap::VmaRa {
                vpn,
                win: win as u8,
                hits: 0,
            };
            if win == 1 {
                return;
            }
            // forward from the fault after a fault on the page before, backward after one on
            // the page after, else centred; within the VMA and the fault's page table
            let (v, p, w) = (i64::from(vpn), i64::from(prev.vpn), i64::from(win));
            let left = if v == p + 1 {
                v
            } else if p == v + 1 {
                v - w + 1
            } else {
                v - (w - 1) / 2
            };
            let pmd = i64::from(vpn & !(crate::mm::vm::PTRS_PER_PTE as u32 - 1));
            let start = left.max(i64::from(vma.start)).max(pmd) as u32;
            let end = (left + w)
                .min(i64::from(vma.end))
                .min(pmd + crate::mm::vm::PTRS_PER_PTE as i64) as u32;
            for a in start..end {
                let e = self.m.pte(task, a);
                if e & pte::SWAP == 0 {
                    continue;
                }
                let s = e & pte::PFN_MASK;
                let c = if a == vpn { ctx } else { ra_ctx };
                if !self.swap_ra_read(task, a, s, c) {
                    break;
                }
            }
        } else {
            // swapin_nr_pages on the offset (the model's slot s is offset s + 1: offset 0 holds
            // the swap header)
            let max_pages = 1u64 << page_cluster;
            if max_pages <= 1 {
                return;
            }
            let offset = u64::from(slot) + 1;
            let ra = self.m.swap.ra;
            let pages = swapin_nr_pages(
                ra.prev_offset,
                offset,
                ra.hits,
                max_pages.min(u64::from(u32::MAX)) as u32,
                ra.last_pages,
            );
            self.m.swap.ra.hits = 0;
            if ra.hits == 0 {
                self.m.swap.ra.prev_offset = offset;
            }
            self.m.swap.ra.last_pages = pages;
            let mask = u64::from(pages) - 1;
            if mask == 0 {
                return;
            }
            // an aligned cluster of offsets around the fault's, past the header, within the device
            let start = (offset & !mask).max(1);
            let end = (offset | mask).min(self.m.swap.nr_slots);
            for off in start..=end {
                let s = (off - 1) as u32;
                let c = if off == offset { ctx } else { ra_ctx };
                if !self.swap_ra_read(task, vpn, s, c) {
                    break;
                }
            }
        }
        // lru_add_drain: push the new folios onto the LRU now
        crate::reclaim::lru_add_drain(&mut self.m, &mut self.p);
    }

    /// One page of a read-ahead window: read `slot` unless it is cached already or no entry holds
    /// it (`swap_swapcount` 0: "skip read ahead for unused swap slot"). False once the task was
    /// killed (the window stops).
    fn swap_ra_read(&mut self, task: u32, vpn: u32, slot: u32, ctx: AddCtx) -> bool {
        if self.m.swap.count(slot) == 0 || self.m.swap.cached(slot) {
            return true;
        }
        match self.swap_read_folio(task, vpn, slot, ctx) {
            Ok(_) => true,
            Err(AccessError::Killed(_)) => false,
            Err(_) => self.m.mms[task as usize].alive,
        }
    }

    /// `filemap_fault` for a file mapping: map the cached page, or read it (with read-around).
    fn filemap_fault(
        &mut self,
        task: u32,
        vpn: u32,
        vma: &crate::mm::vm::Vma,
        write: bool,
        ctx: AddCtx,
    ) -> Result<Access, AccessError> {
        let file = vma.file;
        let index = (vpn - vma.start + vma.pgoff) as u64;
        let size = self.m.files[file as usize].size;
        if index >= size {
            return Err(AccessError::Fault(format!(
                "task {task}: fault past the end of file {file}"
            )));
        }
        let mut access = Access::Minor;
        let id = match self.m.files[file as usize].slot(index) {
            Slot::Folio(id) => {
                // do_async_mmap_readahead
                let ra = &mut self.m.files[file as usize].ra;
                ra.mmap_miss = ra.mmap_miss.saturating_sub(1);
                if self.m.folios[id].test(pg::READAHEAD) && vma.flags & vmf::RAND_READ == 0 {
                    self.m.folios[id].clear(pg::READAHEAD);
                    self.ondemand_readahead(task, file, index, 1, true)?;
                }
                id
            }
            _ => {
                access = Access::Major;
                self.m.io_waited = true;
                self.do_sync_mmap_readahead(task, file, index, vma, ctx)?;
                match self.m.files[file as usize].slot(index) {
                    Slot::Folio(id) => id,
                    _ => self.page_cache_read(task, file, index, ctx, false)?,
                }
            }
        };
        if !self.m.mms[task as usize].alive {
            return Err(AccessError::Killed(task));
        }
        self.m.map_folio(task, vpn, id, write);
        Ok(access)
    }

    /// `do_sync_mmap_readahead`: `VM_RAND_READ` reads one page, `VM_SEQ_READ` a sequential
    /// window, otherwise read-around of `ra_pages` centred on the fault unless mmap misses
    /// dominate (`MMAP_LOTSAMISS`).
    fn do_sync_mmap_readahead(
        &mut self,
        task: u32,
        file: u32,
        index: u64,
        vma: &crate::mm::vm::Vma,
        ctx: AddCtx,
    ) -> Result<(), AllocError> {
        let ra = self.m.files[file as usize].ra;
        if vma.flags & vmf::RAND_READ != 0 || ra.ra_pages == 0 {
            return self.do_page_cache_ra(task, file, index, 1, 0, ctx.in_fault.then_some(index));
        }
        if vma.flags & vmf::SEQ_READ != 0 {
            return self.ondemand_readahead(task, file, index, ra.ra_pages, false);
        }
        let miss = ra.mmap_miss + 1;
        self.m.files[file as usize].ra.mmap_miss = miss;
        if miss > 100 {
            return self.do_page_cache_ra(task, file, index, 1, 0, ctx.in_fault.then_some(index));
        }
        let start = index.saturating_sub(ra.ra_pages / 2);
        let fr = &mut self.m.files[file as usize].ra;
        fr.start = start;
        fr.size = ra.ra_pages;
        fr.async_size = ra.ra_pages / 4;
        self.do_page_cache_ra(
            task,
            file,
            start,
            ra.ra_pages,
            ra.ra_pages / 4,
            ctx.in_fault.then_some(index),
        )
    }

    /// Process exit (`exit_mmap`).
    pub fn exit(&mut self, task: u32) {
        if self.m.mms.get(task as usize).is_some_and(|mm| mm.alive) {
            alloc::release_mm(&mut self.m, &mut self.p, task);
        }
    }
}

/// `get_init_ra_size`.
pub fn init_ra_size(size: u64, max: u64) -> u64 {
    let newsize = size.next_power_of_two();
    if newsize <= max / 32 {
        newsize * 4
    } else if newsize <= max / 4 {
        newsize * 2
    } else {
        max
    }
}

/// `get_next_ra_size`.
pub fn next_ra_size(cur: u64, max: u64) -> u64 {
    if cur < max / 16 {
        4 * cur
    } else if cur <= max / 2 {
        2 * cur
    } else {
        max
    }
}

/// The error of [`Kernel::check_file_io`]: file `file` does not exist (`size` `None`) or is
/// `size` pages long, not past `index`.
#[cold]
#[inline(never)]
fn file_io_error(file: u32, index: u64, size: Option<u64>, what: &str) -> AccessError {
    match size {
        None => AccessError::Fault(format!("{what} of file {file}, which does not exist")),
        Some(size) => AccessError::Fault(format!("{what} past the end of file {file} ({index} >= {size} pages)")),
    }
}

/// The error of [`Kernel::check_alive`]: task `task` does not exist (`unborn` `None`), has not
/// been forked yet, or was killed.
#[cold]
#[inline(never)]
fn task_error(task: u32, unborn: Option<bool>) -> AccessError {
    match unborn {
        None => AccessError::Fault(format!("task {task} does not exist")),
        Some(true) => AccessError::Fault(format!("task {task} has not been forked yet")),
        Some(false) => AccessError::Killed(task),
    }
}
