// SPDX-License-Identifier: GPL-2.0-only
//! Users' own page-cache eviction policies, shaped like cache_ext's hooks (SOSP 2025: custom
//! eviction policies in eBPF on a modified 6.6 kernel; docs/cache-ext.md maps every point).
//!
//! A policy implements [`CacheExtOps`], the five members of cache_ext's `struct cache_ext_ops`:
//! [`init`](CacheExtOps::init), [`folio_added`](CacheExtOps::folio_added),
//! [`folio_accessed`](CacheExtOps::folio_accessed), [`folio_evicted`](CacheExtOps::folio_evicted)
//! and [`evict_folios`](CacheExtOps::evict_folios). It keeps page-cache folios on lists it owns,
//! through the list "kfuncs" of [`CacheExtCtx`] (`list_add`, `list_add_tail`, `list_move`,
//! `list_del`, `list_iterate`, `list_iterate_extended`, `list_sample`, `new_list`), named after
//! `bpf_cache_ext_*`. When reclaim needs file pages from the memcg the policy is attached to,
//! [`CacheExt`] asks the policy for candidates in an [`EvictionCtx`], validates each (a file folio
//! of this memcg and node, on the LRU, not isolated, evictable), isolates the valid ones from the
//! kernel's LRU and reclaims them through the machine's normal `shrink_folio_list`, so shadows,
//! refaults and the vmstat counters stay true. Invalid candidates are skipped and counted.
//!
//! As in cache_ext, the kernel's own LRU stays: [`CacheExt`] runs the [`Classic`] LRU for every
//! folio (its lists hold the bookkeeping, `nr_inactive_file` and the rest, and the invariant
//! checker walks them), reclaims anon folios and the memcgs the policy is not attached to with it,
//! and only the choice of which file folios of the attached memcg to evict is the policy's.
//!
//! The lists are an arena of intrusive links in dense arrays indexed by folio id: no hashing and
//! no allocation per access. [`CacheExt<P>`] is generic over the user's type, so the per-access
//! hook is a static call; `Box<dyn CacheExtOps>` is a [`CacheExtOps`] too, for policies chosen by
//! name ([`policies::Shipped`]).

pub mod policies;

use super::classic::Classic;
use super::mglru::{Profile, Switches};
use super::vmscan::{self, count_scan};
use super::{AddCtx, FolioRef, ListRef, Policy, ScanControl, SWAP_CLUSTER_MAX};
use crate::mm::folio::{pg, FolioId, FILE, NIL};
use crate::mm::memcg::MemcgId;
use crate::mm::pagecache::Slot;
use crate::mm::vmstat::Stat;
use crate::mm::{Lru, LruLockSite, Machine};

/// A list handle, as `bpf_cache_ext_ds_registry_new_list` returns it (never 0).
pub type ListId = u64;

/// The size of [`EvictionCtx::folios_to_evict`] (cache_ext's array of 32).
pub const CACHE_EXT_MAX_EVICT: usize = 32;
/// The most callbacks one [`CacheExtCtx::list_iterate`] makes before it gives up (cache_ext's
/// `max_iter` of 4096: it stops once the count is past it).
pub const CACHE_EXT_MAX_ITER: u64 = 4096;
/// The most folios one [`CacheExtCtx::list_sample`] may take (`MAX_SAMPLE_FOLIOS`).
pub const CACHE_EXT_MAX_SAMPLE: u64 = 2048;

/// What an iteration callback answers for one node (`enum cache_ext_iter_callback_ret`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IterAction {
    /// `CACHE_EXT_CONTINUE_ITER`: keep it, look at the next.
    Continue,
    /// `CACHE_EXT_STOP_ITER`: stop here.
    Stop,
    /// `CACHE_EXT_EVICT_NODE`: propose it for eviction.
    Evict,
}

/// How an iteration ended (`enum cache_ext_iter_ret`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IterRet {
    /// `CACHE_EXT_DONE_ITER`: the end of the list, or the callback said stop.
    Done,
    /// `CACHE_EXT_MAX_ITER_REACHED`.
    MaxIterReached,
    /// `CACHE_EXT_EVICT_ARRAY_FILLED`.
    EvictArrayFilled,
}

/// Where [`CacheExtCtx::list_iterate_extended`] puts a node after the callback's answer
/// (`enum cache_ext_iterate_mode`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum IterMode {
    /// `CACHE_EXT_ITERATE_SKIP`: leave it where it is.
    #[default]
    Skip,
    /// `CACHE_EXT_ITERATE_HEAD`: to the head of the target list.
    Head,
    /// `CACHE_EXT_ITERATE_TAIL`: to the tail of the target list.
    Tail,
}

/// Options of [`CacheExtCtx::list_iterate_extended`] (`struct cache_ext_iterate_opts`). A target
/// list of `None` is `CACHE_EXT_ITERATE_SELF`, the list iterated.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IterateOpts {
    /// Where `Continue` nodes go.
    pub continue_list: Option<ListId>,
    /// How.
    pub continue_mode: IterMode,
    /// Where `Evict` nodes go.
    pub evict_list: Option<ListId>,
    /// How.
    pub evict_mode: IterMode,
    /// Output: nodes answered `Continue`.
    pub nr_folios_continue: u64,
    /// Output: nodes answered `Evict`.
    pub nr_folios_evict: u64,
}

/// Options of [`CacheExtCtx::list_sample`] (`struct sampling_options`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SamplingOptions {
    /// One candidate (the lowest score) per this many folios taken from the head.
    pub sample_size: u32,
}

/// One eviction request (`struct cache_ext_eviction_ctx`): the kernel sets
/// `request_nr_folios_to_evict`; the policy fills `folios_to_evict` (and `scores`) and
/// `nr_folios_to_evict`, directly or through the list kfuncs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EvictionCtx {
    /// How many folios reclaim asks for (at most [`CACHE_EXT_MAX_EVICT`]).
    pub request_nr_folios_to_evict: u64,
    /// How many candidates the policy proposed.
    pub nr_folios_to_evict: u64,
    /// The candidates.
    pub folios_to_evict: [FolioId; CACHE_EXT_MAX_EVICT],
    /// Their scores, where `list_sample` chose them.
    pub scores: [i64; CACHE_EXT_MAX_EVICT],
}

impl EvictionCtx {
    /// A request for `nr` folios (at most [`CACHE_EXT_MAX_EVICT`]).
    pub fn new(nr: u64) -> Self {
        EvictionCtx {
            request_nr_folios_to_evict: nr.min(CACHE_EXT_MAX_EVICT as u64),
            nr_folios_to_evict: 0,
            folios_to_evict: [NIL; CACHE_EXT_MAX_EVICT],
            scores: [0; CACHE_EXT_MAX_EVICT],
        }
    }

    /// Propose `folio` with `score`; false when the array is full.
    pub fn push(&mut self, folio: FolioId, score: i64) -> bool {
        let i = self.nr_folios_to_evict as usize;
        if i >= CACHE_EXT_MAX_EVICT {
            return false;
        }
        self.folios_to_evict[i] = folio;
        self.scores[i] = score;
        self.nr_folios_to_evict += 1;
        true
    }

    /// Whether the array is full.
    pub fn is_full(&self) -> bool {
        self.nr_folios_to_evict as usize >= CACHE_EXT_MAX_EVICT
    }

    /// The candidates proposed so far.
    pub fn candidates(&self) -> &[FolioId] {
        &self.folios_to_evict[..(self.nr_folios_to_evict as usize).min(CACHE_EXT_MAX_EVICT)]
    }
}

/// Why a list kfunc failed (cache_ext returns a negative number).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ListError {
    /// No such list (or a list of another memcg).
    NoList,
    /// The folio is not in the registry of valid folios (not a page-cache folio the policy was
    /// told of, or already evicted).
    NotValid,
    /// `list_add` of a folio already on a list, `list_del` of one on none.
    Busy,
    /// `list_sample`: more folios asked for than the list holds, or than
    /// [`CACHE_EXT_MAX_SAMPLE`].
    TooFew,
    /// `list_iterate_extended`: a target list with [`IterMode::Skip`].
    BadOpts,
}

impl std::fmt::Display for ListError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let s = match self {
            ListError::NoList => "no such list",
            ListError::NotValid => "folio not in the valid-folio registry",
            ListError::Busy => "folio already on a list (add) or on none (del)",
            ListError::TooFew => "too few folios on the list to sample",
            ListError::BadOpts => "invalid iterate options",
        };
        f.write_str(s)
    }
}

#[derive(Clone, Copy, Debug)]
struct ListMeta {
    head: FolioId,
    tail: FolioId,
    len: u64,
    memcg: MemcgId,
}

/// The policy-owned lists of every memcg and the registry of valid folios: intrusive links in
/// dense arrays indexed by folio id (`cache_ext_list_node` and the valid-folios set).
///
/// Every folio is on at most one list; a folio on a list is valid. Iteration goes from the head
/// (`list_add` inserts there, `list_add_tail` at the other end), as cache_ext's lists do.
#[derive(Clone, Debug, Default)]
pub struct ExtLists {
    next: Vec<FolioId>,
    prev: Vec<FolioId>,
    /// The list a folio is on (its id), or 0.
    on: Vec<ListId>,
    valid: Vec<bool>,
    nr_valid: u64,
    lists: Vec<ListMeta>,
    sample: Vec<FolioId>,
}

impl ExtLists {
    /// Lists for a machine of `nr_folios` frames.
    pub fn new(nr_folios: usize) -> Self {
        ExtLists {
            next: vec![NIL; nr_folios],
            prev: vec![NIL; nr_folios],
            on: vec![0; nr_folios],
            valid: vec![false; nr_folios],
            nr_valid: 0,
            lists: Vec::new(),
            sample: Vec::new(),
        }
    }

    /// `bpf_cache_ext_ds_registry_new_list`: a new empty list of `memcg`.
    pub fn new_list(&mut self, memcg: MemcgId) -> ListId {
        self.lists.push(ListMeta {
            head: NIL,
            tail: NIL,
            len: 0,
            memcg,
        });
        self.lists.len() as ListId
    }

    fn meta(&self, list: ListId) -> Result<usize, ListError> {
        if list == 0 || list as usize > self.lists.len() {
            return Err(ListError::NoList);
        }
        Ok(list as usize - 1)
    }

    /// The number of folios on `list` (0 for no list).
    pub fn len(&self, list: ListId) -> u64 {
        self.meta(list).map_or(0, |i| self.lists[i].len)
    }

    /// Whether `list` is empty (or no list).
    pub fn is_empty(&self, list: ListId) -> bool {
        self.len(list) == 0
    }

    /// The number of lists created.
    pub fn nr_lists(&self) -> usize {
        self.lists.len()
    }

    /// The first folio of `list` (its head), or `NIL`.
    pub fn first(&self, list: ListId) -> FolioId {
        self.meta(list).map_or(NIL, |i| self.lists[i].head)
    }

    /// The folio after `id` on its list, or `NIL`.
    pub fn next_of(&self, id: FolioId) -> FolioId {
        self.next.get(id as usize).copied().unwrap_or(NIL)
    }

    /// The list `id` is on, or `None`.
    pub fn list_of(&self, id: FolioId) -> Option<ListId> {
        match self.on.get(id as usize) {
            Some(&l) if l != 0 => Some(l),
            _ => None,
        }
    }

    /// Whether `id` is in the registry of valid folios.
    pub fn is_valid(&self, id: FolioId) -> bool {
        self.valid.get(id as usize).copied().unwrap_or(false)
    }

    /// Folios in the registry.
    pub fn nr_valid(&self) -> u64 {
        self.nr_valid
    }

    /// Make room for folio `id` (the machine's folio table grows with the frames handed out).
    fn grow(&mut self, id: FolioId) {
        let need = id as usize + 1;
        if need > self.valid.len() {
            let n = need.max(2 * self.valid.len());
            self.next.resize(n, NIL);
            self.prev.resize(n, NIL);
            self.on.resize(n, 0);
            self.valid.resize(n, false);
        }
    }

    /// Enter `id` in the registry (the kernel does this when a folio joins the page cache).
    pub fn register(&mut self, id: FolioId) {
        self.grow(id);
        let i = id as usize;
        if !self.valid[i] {
            self.valid[i] = true;
            self.nr_valid += 1;
        }
    }

    /// Take `id` off its list, if any, and out of the registry (the kernel does this after
    /// `folio_evicted`).
    pub fn unregister(&mut self, id: FolioId) {
        let i = id as usize;
        if i < self.valid.len() && self.valid[i] {
            if self.on[i] != 0 {
                self.unlink(id);
            }
            self.valid[i] = false;
            self.nr_valid -= 1;
        }
    }

    fn unlink(&mut self, id: FolioId) {
        let i = id as usize;
        let l = self.on[i] as usize - 1;
        let (p, n) = (self.prev[i], self.next[i]);
        if p == NIL {
            self.lists[l].head = n;
        } else {
            self.next[p as usize] = n;
        }
        if n == NIL {
            self.lists[l].tail = p;
        } else {
            self.prev[n as usize] = p;
        }
        self.lists[l].len -= 1;
        self.prev[i] = NIL;
        self.next[i] = NIL;
        self.on[i] = 0;
    }

    fn link(&mut self, list: ListId, id: FolioId, tail: bool) {
        let i = id as usize;
        let l = list as usize - 1;
        if tail {
            let old = self.lists[l].tail;
            self.prev[i] = old;
            self.next[i] = NIL;
            if old == NIL {
                self.lists[l].head = id;
            } else {
                self.next[old as usize] = id;
            }
            self.lists[l].tail = id;
        } else {
            let old = self.lists[l].head;
            self.next[i] = old;
            self.prev[i] = NIL;
            if old == NIL {
                self.lists[l].tail = id;
            } else {
                self.prev[old as usize] = id;
            }
            self.lists[l].head = id;
        }
        self.lists[l].len += 1;
        self.on[i] = list;
    }

    fn add_impl(&mut self, list: ListId, id: FolioId, tail: bool) -> Result<(), ListError> {
        self.meta(list)?;
        if !self.is_valid(id) {
            return Err(ListError::NotValid);
        }
        if self.on[id as usize] != 0 {
            return Err(ListError::Busy);
        }
        self.link(list, id, tail);
        Ok(())
    }

    /// `bpf_cache_ext_list_add`: at the head; fails if `id` is on a list already.
    pub fn add(&mut self, list: ListId, id: FolioId) -> Result<(), ListError> {
        self.add_impl(list, id, false)
    }

    /// `bpf_cache_ext_list_add_tail`.
    pub fn add_tail(&mut self, list: ListId, id: FolioId) -> Result<(), ListError> {
        self.add_impl(list, id, true)
    }

    /// `bpf_cache_ext_list_move`: to the head (or tail) of `list`, from whatever list it is on.
    pub fn move_to(&mut self, list: ListId, id: FolioId, tail: bool) -> Result<(), ListError> {
        self.meta(list)?;
        if !self.is_valid(id) {
            return Err(ListError::NotValid);
        }
        if self.on[id as usize] != 0 {
            self.unlink(id);
        }
        self.link(list, id, tail);
        Ok(())
    }

    /// `bpf_cache_ext_list_del`: fails if `id` is on no list.
    pub fn del(&mut self, id: FolioId) -> Result<(), ListError> {
        if !self.is_valid(id) {
            return Err(ListError::NotValid);
        }
        if self.on[id as usize] == 0 {
            return Err(ListError::Busy);
        }
        self.unlink(id);
        Ok(())
    }

    /// Walk `list` from the head, checking links, owners and the count; the folios in order.
    pub fn walk(&self, list: ListId) -> Result<Vec<FolioId>, String> {
        let l = self.meta(list).map_err(|e| e.to_string())?;
        let meta = self.lists[l];
        let mut out = Vec::with_capacity(meta.len as usize);
        let (mut prev, mut cur) = (NIL, meta.head);
        while cur != NIL {
            let i = cur as usize;
            if self.on[i] != list {
                return Err(format!("folio {cur} on list {list} says it is on {}", self.on[i]));
            }
            if !self.valid[i] {
                return Err(format!("folio {cur} on list {list} is not valid"));
            }
            if self.prev[i] != prev {
                return Err(format!(
                    "folio {cur} on list {list}: prev {} but came from {prev}",
                    self.prev[i]
                ));
            }
            out.push(cur);
            if out.len() as u64 > meta.len {
                return Err(format!("list {list} holds more than its count {}", meta.len));
            }
            prev = cur;
            cur = self.next[i];
        }
        if meta.tail != prev {
            return Err(format!("list {list}: tail {} but the walk ended at {prev}", meta.tail));
        }
        if out.len() as u64 != meta.len {
            return Err(format!("list {list}: {} folios but count {}", out.len(), meta.len));
        }
        Ok(out)
    }

    /// Check every list and the registry: each folio on at most one list, counts right.
    pub fn check(&self) -> Result<(), String> {
        let mut on = 0u64;
        for l in 1..=self.lists.len() as ListId {
            on += self.walk(l)?.len() as u64;
        }
        let marked = self.on.iter().filter(|&&l| l != 0).count() as u64;
        if marked != on {
            return Err(format!("{marked} folios marked on a list but {on} found on the lists"));
        }
        let valid = self.valid.iter().filter(|&&v| v).count() as u64;
        if valid != self.nr_valid {
            return Err(format!("{valid} valid folios but the count says {}", self.nr_valid));
        }
        Ok(())
    }
}

/// Per-folio metadata in a dense array indexed by folio id, grown on first write: what a BPF hash
/// map keyed by folio pointer becomes (no hashing; an absent entry reads as `T::default()`).
#[derive(Clone, Debug, Default)]
pub struct FolioMap<T> {
    v: Vec<T>,
}

impl<T: Clone + Default> FolioMap<T> {
    /// An empty map with room for `n` folios.
    pub fn with_capacity(n: usize) -> Self {
        FolioMap {
            v: Vec::with_capacity(n),
        }
    }

    /// The entry of `id` (default if never written).
    #[inline]
    pub fn get(&self, id: FolioId) -> T {
        self.v.get(id as usize).cloned().unwrap_or_default()
    }

    /// The entry of `id`, to write.
    #[inline]
    pub fn get_mut(&mut self, id: FolioId) -> &mut T {
        let i = id as usize;
        if i >= self.v.len() {
            let n = (i + 1).max(2 * self.v.len());
            self.v.resize(n, T::default());
        }
        &mut self.v[i]
    }

    /// Set the entry of `id`.
    #[inline]
    pub fn set(&mut self, id: FolioId, value: T) {
        *self.get_mut(id) = value;
    }
}

/// A folio as a policy sees it (the fields cache_ext's programs read off `struct folio`).
#[derive(Clone, Copy)]
pub struct FolioView<'a> {
    m: &'a Machine,
    id: FolioId,
}

impl<'a> FolioView<'a> {
    /// Its id (cache_ext keys its maps by the `struct folio *`).
    pub fn id(&self) -> FolioId {
        self.id
    }
    /// `folio_test_uptodate`: I/O is synchronous in the model, so a page-cache folio always is.
    pub fn test_uptodate(&self) -> bool {
        self.m.folios[self.id].test(pg::ALLOCATED)
    }
    /// `folio_test_lru`.
    pub fn test_lru(&self) -> bool {
        self.m.folios[self.id].test(pg::LRU)
    }
    /// `folio_test_dirty`.
    pub fn test_dirty(&self) -> bool {
        self.m.folios[self.id].test(pg::DIRTY)
    }
    /// `folio_test_writeback`.
    pub fn test_writeback(&self) -> bool {
        self.m.folios[self.id].test(pg::WRITEBACK)
    }
    /// `folio_test_locked`: isolated by reclaim, in the model.
    pub fn test_locked(&self) -> bool {
        self.m.folios[self.id].test(pg::ISOLATED)
    }
    /// `folio->mapping->host->i_ino`: the file id.
    pub fn ino(&self) -> u32 {
        self.m.folio_mapping(self.id)
    }
    /// `folio_index`.
    pub fn index(&self) -> u64 {
        u64::from(self.m.folios[self.id].index)
    }
    /// `i_size_read(inode)` in pages.
    pub fn file_pages(&self) -> u64 {
        self.m.files.get(self.ino() as usize).map_or(0, |f| f.size)
    }
    /// Whether it holds the last page of its file (LevelDB keeps an SST's index there).
    pub fn is_last_page_in_file(&self) -> bool {
        let n = self.file_pages();
        n > 0 && self.index() == n - 1
    }
}

/// What a hook can call: the list kfuncs, the folio fields, `current`, the clock.
pub struct CacheExtCtx<'a> {
    m: &'a Machine,
    lists: &'a mut ExtLists,
}

impl<'a> CacheExtCtx<'a> {
    /// A context over machine `m` and `lists` (for tests of policies outside reclaim).
    pub fn new(m: &'a Machine, lists: &'a mut ExtLists) -> Self {
        CacheExtCtx { m, lists }
    }

    /// The lists, read-only.
    pub fn lists(&self) -> &ExtLists {
        self.lists
    }

    /// `bpf_cache_ext_ds_registry_new_list(memcg)`.
    pub fn new_list(&mut self, memcg: MemcgId) -> ListId {
        self.lists.new_list(memcg)
    }

    /// `bpf_cache_ext_list_add`.
    pub fn list_add(&mut self, list: ListId, folio: FolioId) -> Result<(), ListError> {
        self.lists.add(list, folio)
    }

    /// `bpf_cache_ext_list_add_tail`.
    pub fn list_add_tail(&mut self, list: ListId, folio: FolioId) -> Result<(), ListError> {
        self.lists.add_tail(list, folio)
    }

    /// `bpf_cache_ext_list_move`.
    pub fn list_move(&mut self, list: ListId, folio: FolioId, tail: bool) -> Result<(), ListError> {
        self.lists.move_to(list, folio, tail)
    }

    /// `bpf_cache_ext_list_del`.
    pub fn list_del(&mut self, folio: FolioId) -> Result<(), ListError> {
        self.lists.del(folio)
    }

    /// The folio `id`.
    pub fn folio(&self, id: FolioId) -> FolioView<'a> {
        FolioView { m: self.m, id }
    }

    /// `bpf_get_current_pid_tgid`: the task (mm id) running, if any.
    pub fn current_task(&self) -> Option<u32> {
        self.m.current_task
    }

    /// `memory.max` of `memcg` in pages, at most the machine's memory (what cache_ext's loaders
    /// read off the cgroup, e.g. S3-FIFO's `cache_size`).
    pub fn memcg_pages(&self, memcg: MemcgId) -> u64 {
        let max = if (memcg as usize) < self.m.memcgs.len() {
            self.m.memcgs[memcg].max
        } else {
            u64::MAX
        };
        max.min(self.m.cfg.total_pages())
    }

    /// `bpf_ktime_get_ns`: the machine's clock.
    pub fn ktime_ns(&self) -> u64 {
        self.m.now_ns
    }

    /// Frames of the machine: the most folio ids a per-folio array ([`FolioMap`], what a BPF
    /// hash map keyed by folio pointer becomes) will hold.
    pub fn nr_folios(&self) -> usize {
        self.m.cfg.total_pages() as usize
    }

    fn check_memcg(&self, memcg: MemcgId, list: ListId) -> Result<usize, ListError> {
        let l = self.lists.meta(list)?;
        if self.lists.lists[l].memcg != memcg {
            return Err(ListError::NoList);
        }
        Ok(l)
    }

    /// `bpf_cache_ext_list_iterate`: call `iter_fn(idx, folio)` on the folios of `list` from the
    /// head; `Evict` answers fill `ctx` until its array is full. Nodes stay where they are.
    pub fn list_iterate(
        &mut self,
        memcg: MemcgId,
        list: ListId,
        iter_fn: impl FnMut(u64, FolioView<'_>) -> IterAction,
        ctx: &mut EvictionCtx,
    ) -> Result<IterRet, ListError> {
        let mut opts = IterateOpts::default();
        self.list_iterate_extended(memcg, list, iter_fn, &mut opts, ctx)
    }

    /// `bpf_cache_ext_list_iterate_extended`: [`list_iterate`](Self::list_iterate), moving each
    /// node after the callback's answer as `opts` says (to the head or tail of this list or
    /// another), counting the answers in `opts`.
    pub fn list_iterate_extended(
        &mut self,
        memcg: MemcgId,
        list: ListId,
        mut iter_fn: impl FnMut(u64, FolioView<'_>) -> IterAction,
        opts: &mut IterateOpts,
        ctx: &mut EvictionCtx,
    ) -> Result<IterRet, ListError> {
        if (opts.continue_list.is_some() && opts.continue_mode == IterMode::Skip)
            || (opts.evict_list.is_some() && opts.evict_mode == IterMode::Skip)
        {
            return Err(ListError::BadOpts);
        }
        if ctx.is_full() {
            return Ok(IterRet::EvictArrayFilled);
        }
        self.check_memcg(memcg, list)?;
        let continue_list = match opts.continue_list {
            Some(l) => {
                self.check_memcg(memcg, l)?;
                l
            }
            None => list,
        };
        let evict_list = match opts.evict_list {
            Some(l) => {
                self.check_memcg(memcg, l)?;
                l
            }
            None => list,
        };
        let mut ret = IterRet::Done;
        let mut iter = 0u64;
        let mut cur = self.lists.first(list);
        while cur != NIL {
            if iter > CACHE_EXT_MAX_ITER {
                ret = IterRet::MaxIterReached;
                break;
            }
            // list_for_each_entry_safe: the next node is read before this one moves
            let next = self.lists.next_of(cur);
            let action = iter_fn(iter, FolioView { m: self.m, id: cur });
            iter += 1;
            match action {
                IterAction::Continue => {
                    self.place(continue_list, opts.continue_mode, cur);
                    opts.nr_folios_continue += 1;
                }
                IterAction::Stop => break,
                IterAction::Evict => {
                    ctx.push(cur, 0);
                    self.place(evict_list, opts.evict_mode, cur);
                    opts.nr_folios_evict += 1;
                    if ctx.is_full() {
                        ret = IterRet::EvictArrayFilled;
                        break;
                    }
                }
            }
            cur = next;
        }
        Ok(ret)
    }

    fn place(&mut self, list: ListId, mode: IterMode, id: FolioId) {
        let tail = match mode {
            IterMode::Skip => return,
            IterMode::Head => false,
            IterMode::Tail => true,
        };
        self.lists.unlink(id);
        self.lists.link(list, id, tail);
    }

    /// `bpf_cache_ext_list_sample`: take `request × sample_size` folios from the head of `list`,
    /// propose the lowest `score_fn` of each `sample_size` in turn (filling `ctx` from the
    /// start, as cache_ext does), and put every folio taken back at the tail, in order. Fails,
    /// leaving the list as it was, when the list holds fewer folios than that.
    pub fn list_sample(
        &mut self,
        memcg: MemcgId,
        list: ListId,
        mut score_fn: impl FnMut(FolioView<'_>) -> i64,
        opts: &SamplingOptions,
        ctx: &mut EvictionCtx,
    ) -> Result<(), ListError> {
        let sample_size = u64::from(opts.sample_size.max(1));
        let want = ctx.request_nr_folios_to_evict.min(CACHE_EXT_MAX_EVICT as u64) * sample_size;
        if want > CACHE_EXT_MAX_SAMPLE {
            return Err(ListError::TooFew);
        }
        self.check_memcg(memcg, list)?;
        if self.lists.len(list) < want {
            return Err(ListError::TooFew);
        }
        let mut taken = std::mem::take(&mut self.lists.sample);
        taken.clear();
        for _ in 0..want {
            let id = self.lists.first(list);
            self.lists.unlink(id);
            taken.push(id);
        }
        ctx.nr_folios_to_evict = 0;
        for group in taken.chunks(sample_size as usize) {
            let mut best = (
                group[0],
                score_fn(FolioView {
                    m: self.m,
                    id: group[0],
                }),
            );
            for &id in &group[1..] {
                let s = score_fn(FolioView { m: self.m, id });
                if s < best.1 {
                    best = (id, s);
                }
            }
            ctx.push(best.0, best.1);
        }
        for &id in &taken {
            self.lists.link(list, id, true);
        }
        self.lists.sample = taken;
        Ok(())
    }
}

/// A cache_ext-shaped policy: the members of `struct cache_ext_ops`.
///
/// Each hook gets a [`CacheExtCtx`] for the list kfuncs and the folio fields. The policy's own
/// state (BPF maps and globals in cache_ext) is the implementing type's fields; per-folio
/// metadata is a dense array indexed by folio id ([`CacheExtCtx::nr_folios`]).
pub trait CacheExtOps {
    /// The policy's name, for reports (`cache_ext:<name>`).
    fn name(&self) -> &str;

    /// `init(memcg)`: create the lists (`new_list`) and set up state. An `Err` refuses the
    /// attachment (cache_ext: a non-zero return); the run then fails.
    fn init(&mut self, ctx: &mut CacheExtCtx<'_>, memcg: MemcgId) -> Result<(), String>;

    /// `folio_added`: a folio joined the page cache of the attached memcg (it is already in the
    /// registry of valid folios, on no list).
    /// (Optional, as every member but `evict_folios` is in cache_ext.)
    fn folio_added(&mut self, _ctx: &mut CacheExtCtx<'_>, _folio: FolioId) {}

    /// `folio_accessed`: `folio_mark_accessed` on a valid folio (a buffered read or write; the
    /// first of consecutive reads of one folio only, as the kernel marks it).
    fn folio_accessed(&mut self, _ctx: &mut CacheExtCtx<'_>, _folio: FolioId) {}

    /// `folio_evicted`: the folio is leaving the page cache; after the hook, the kernel takes it
    /// off its list and out of the registry.
    fn folio_evicted(&mut self, _ctx: &mut CacheExtCtx<'_>, _folio: FolioId) {}

    /// `evict_folios(eviction_ctx, memcg)`: propose up to `request_nr_folios_to_evict`
    /// candidates in `eviction_ctx`.
    fn evict_folios(&mut self, ctx: &mut CacheExtCtx<'_>, eviction_ctx: &mut EvictionCtx, memcg: MemcgId);
}

impl<T: CacheExtOps + ?Sized> CacheExtOps for Box<T> {
    fn name(&self) -> &str {
        (**self).name()
    }
    fn init(&mut self, ctx: &mut CacheExtCtx<'_>, memcg: MemcgId) -> Result<(), String> {
        (**self).init(ctx, memcg)
    }
    fn folio_added(&mut self, ctx: &mut CacheExtCtx<'_>, folio: FolioId) {
        (**self).folio_added(ctx, folio)
    }
    fn folio_accessed(&mut self, ctx: &mut CacheExtCtx<'_>, folio: FolioId) {
        (**self).folio_accessed(ctx, folio)
    }
    fn folio_evicted(&mut self, ctx: &mut CacheExtCtx<'_>, folio: FolioId) {
        (**self).folio_evicted(ctx, folio)
    }
    fn evict_folios(&mut self, ctx: &mut CacheExtCtx<'_>, eviction_ctx: &mut EvictionCtx, memcg: MemcgId) {
        (**self).evict_folios(ctx, eviction_ctx, memcg)
    }
}

/// What the kernel side counted (not kernel counters: cache_ext's own bookkeeping).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct CacheExtStats {
    /// `folio_added` calls.
    pub added: u64,
    /// `folio_accessed` calls.
    pub accessed: u64,
    /// `folio_evicted` calls.
    pub evicted: u64,
    /// `evict_folios` calls.
    pub evict_calls: u64,
    /// Folios asked for.
    pub requested: u64,
    /// Candidates proposed.
    pub proposed: u64,
    /// Candidates skipped as invalid (not a valid file folio of this memcg and node, not on the
    /// LRU, isolated, unevictable, or proposed twice).
    pub invalid: u64,
    /// Candidates isolated and handed to `shrink_folio_list`.
    pub isolated: u64,
    /// Of which reclaimed (freed).
    pub reclaimed: u64,
    /// Folios scanned by the classic inactive-file scan when the policy proposed no valid
    /// candidate (so that reclaim progresses).
    pub fallback_scanned: u64,
    /// Of which reclaimed.
    pub fallback_reclaimed: u64,
}

/// `Policy::name` is `&'static str`: a policy's report name is kept once per distinct name for the
/// life of the process (a sweep of many runs does not grow it).
fn intern(name: String) -> &'static str {
    static NAMES: std::sync::Mutex<Vec<&'static str>> = std::sync::Mutex::new(Vec::new());
    let mut names = NAMES.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(&n) = names.iter().find(|&&n| n == name) {
        return n;
    }
    let n: &'static str = Box::leak(name.into_boxed_str());
    names.push(n);
    n
}

/// The kernel LRU with a cache_ext policy attached to one memcg: see the module documentation.
pub struct CacheExt<P: CacheExtOps> {
    classic: Classic,
    ops: P,
    lists: ExtLists,
    memcg: MemcgId,
    stats: CacheExtStats,
    name: &'static str,
    isolated: Vec<FolioId>,
}

impl<P: CacheExtOps> CacheExt<P> {
    /// Attach `ops` to `memcg` of machine `m`, over the classic LRU of `profile`; runs `init`.
    pub fn new(m: &Machine, memcg: MemcgId, profile: Profile, mut ops: P) -> Result<Self, String> {
        let mut lists = ExtLists::new(m.folios.len());
        ops.init(&mut CacheExtCtx::new(m, &mut lists), memcg)
            .map_err(|e| format!("cache_ext policy {}: init failed: {e}", ops.name()))?;
        let name = intern(format!("cache_ext:{}", ops.name()));
        Ok(CacheExt {
            classic: Classic::with_profile(m, profile),
            ops,
            lists,
            memcg,
            stats: CacheExtStats::default(),
            name,
            isolated: Vec::with_capacity(CACHE_EXT_MAX_EVICT),
        })
    }

    /// The policy.
    pub fn ops(&self) -> &P {
        &self.ops
    }

    /// The policy's lists and registry.
    pub fn lists(&self) -> &ExtLists {
        &self.lists
    }

    /// What the kernel side counted.
    pub fn stats(&self) -> CacheExtStats {
        self.stats
    }

    /// The memcg the policy is attached to.
    pub fn memcg(&self) -> MemcgId {
        self.memcg
    }

    /// The classic LRU underneath.
    pub fn classic(&self) -> &Classic {
        &self.classic
    }

    #[inline]
    fn governs(&self, m: &Machine, id: FolioId) -> bool {
        let f = m.folios[id];
        f.memcg == self.memcg && f.is_file_lru() && !f.is_anon() && !f.test(pg::SWAPCACHE)
    }

    /// The kernel's check of a candidate before it isolates it.
    fn candidate_ok(&self, m: &Machine, id: FolioId, node: usize) -> bool {
        if id as usize >= m.folios.len() || !self.lists.is_valid(id) {
            return false;
        }
        let f = m.folios[id];
        f.test(pg::ALLOCATED)
            && f.memcg == self.memcg
            && f.node() == node
            && f.is_file_lru()
            && f.test(pg::LRU)
            && !f.test(pg::ISOLATED)
            && !f.test(pg::UNEVICTABLE)
            && f.evictable()
    }

    /// Ask the policy for up to `nr` file folios of lruvec (memcg, node) and reclaim the valid
    /// ones. Returns (scanned, reclaimed); scanned 0 when the policy proposed nothing valid.
    fn evict_batch(&mut self, m: &mut Machine, node: usize, nr: u64, sc: &mut ScanControl) -> (u64, u64) {
        let memcg = self.memcg;
        let mut ectx = EvictionCtx::new(nr);
        self.stats.evict_calls += 1;
        self.stats.requested += ectx.request_nr_folios_to_evict;
        self.ops
            .evict_folios(&mut CacheExtCtx::new(m, &mut self.lists), &mut ectx, memcg);
        let mut list = std::mem::take(&mut self.isolated);
        list.clear();
        for &id in ectx.candidates() {
            self.stats.proposed += 1;
            if !self.candidate_ok(m, id, node) {
                self.stats.invalid += 1;
                continue;
            }
            self.classic.lruvec_del(m, id);
            vmscan::mark_isolated(m, id);
            list.push(id);
        }
        let r = self.reclaim_isolated(m, node, &mut list, sc);
        self.isolated = list;
        self.stats.isolated += r.0;
        self.stats.reclaimed += r.1;
        r
    }

    /// The kernel's own choice when the policy proposed nothing valid: up to `nr` folios from
    /// the tail of the inactive file list (the active one's when it is empty), reclaimed the same
    /// way. Returns (scanned, reclaimed).
    fn fallback_batch(&mut self, m: &mut Machine, node: usize, nr: u64, sc: &mut ScanControl) -> (u64, u64) {
        let lv = m.lruvec(self.memcg, node);
        let mut list = std::mem::take(&mut self.isolated);
        list.clear();
        for lru in [Lru::InactiveFile, Lru::ActiveFile] {
            let mut id = self.classic.lruvecs[lv].lists[lru as usize].tail;
            while id != NIL && (list.len() as u64) < nr {
                let prev = m.folios[id].prev;
                if self.candidate_ok(m, id, node) {
                    list.push(id);
                }
                id = prev;
            }
            if !list.is_empty() {
                break;
            }
        }
        for &id in &list {
            self.classic.lruvec_del(m, id);
            vmscan::mark_isolated(m, id);
        }
        let r = self.reclaim_isolated(m, node, &mut list, sc);
        self.isolated = list;
        self.stats.fallback_scanned += r.0;
        self.stats.fallback_reclaimed += r.1;
        r
    }

    /// `shrink_folio_list` on isolated file folios of the attached memcg, with this policy (so
    /// `folio_evicted` runs), the survivors put back; `pgscan`/`pgsteal` counted.
    fn reclaim_isolated(
        &mut self,
        m: &mut Machine,
        node: usize,
        list: &mut Vec<FolioId>,
        sc: &mut ScanControl,
    ) -> (u64, u64) {
        let memcg = self.memcg;
        let nr_taken = list.len() as u64;
        if nr_taken == 0 {
            return (0, 0);
        }
        let lv = m.lruvec(memcg, node);
        m.lru_lock_held(lv, LruLockSite::Isolate, nr_taken);
        let sw = self.classic.switches();
        let (scan_ev, steal_ev) = vmscan::scan_event(sc.reclaimer, sw.proactive_reclaim_stats);
        let node_stats = sw.node_reclaim_stats;
        count_scan(m, memcg, sc, scan_ev, Stat::PgscanFile, nr_taken, node_stats);
        let nr_reclaimed = vmscan::shrink_folio_list(m, self, list, sc, false);
        m.lru_lock_held(lv, LruLockSite::Putback, list.len() as u64);
        self.classic.move_folios_to_lru(m, list);
        count_scan(m, memcg, sc, steal_ev, Stat::PgstealFile, nr_reclaimed, node_stats);
        (nr_taken, nr_reclaimed)
    }

    fn ctx<'a>(m: &'a Machine, lists: &'a mut ExtLists) -> CacheExtCtx<'a> {
        CacheExtCtx::new(m, lists)
    }
}

impl<P: CacheExtOps> Policy for CacheExt<P> {
    fn name(&self) -> &'static str {
        self.name
    }

    fn memcg_created(&mut self, m: &Machine, memcg: MemcgId) {
        self.classic.memcg_created(m, memcg);
    }

    fn memcg_offline(&mut self, m: &mut Machine, memcg: MemcgId) {
        self.classic.memcg_offline(m, memcg);
    }

    fn reparent_lru(&mut self, m: &mut Machine, child: MemcgId, parent: MemcgId) {
        self.classic.reparent_lru(m, child, parent);
    }

    fn memcg_released(&mut self, m: &Machine, memcg: MemcgId) {
        self.classic.memcg_released(m, memcg);
    }

    fn add_folio(&mut self, m: &mut Machine, id: FolioId) {
        self.classic.add_folio(m, id);
    }

    fn lru_add_prepare(&mut self, m: &mut Machine, id: FolioId, ctx: AddCtx) {
        self.classic.lru_add_prepare(m, id, ctx);
        // filemap_add_folio: a folio joining the page cache enters the registry, then the hook
        if self.governs(m, id) && !self.lists.is_valid(id) {
            self.lists.register(id);
            self.stats.added += 1;
            self.ops.folio_added(&mut Self::ctx(m, &mut self.lists), id);
        }
    }

    fn folio_batch_size(&self) -> usize {
        self.classic.folio_batch_size()
    }

    fn add_split_tail(&mut self, m: &mut Machine, head: FolioId, tail: FolioId) {
        // only anon folios are large, and cache_ext governs the page cache
        self.classic.add_split_tail(m, head, tail);
    }

    fn del_folio(&mut self, m: &mut Machine, id: FolioId) {
        // off the LRU, still in the page cache (mlock, MADV_PAGEOUT's isolation): the policy's
        // node stays, as cache_ext's does until the folio leaves the page cache
        self.classic.del_folio(m, id);
    }

    fn mark_accessed(&mut self, m: &mut Machine, id: FolioId) {
        self.classic.mark_accessed(m, id);
        if self.lists.is_valid(id) {
            self.stats.accessed += 1;
            self.ops.folio_accessed(&mut Self::ctx(m, &mut self.lists), id);
        }
    }

    fn lru_activate(&mut self, m: &mut Machine, id: FolioId) {
        self.classic.lru_activate(m, id);
    }

    fn deactivate(&mut self, m: &mut Machine, id: FolioId) {
        self.classic.deactivate(m, id);
    }

    fn switches(&self) -> &Switches {
        self.classic.switches()
    }

    fn prepare_node(&mut self, m: &mut Machine, node: usize, sc: &mut ScanControl) {
        self.classic.prepare_node(m, node, sc);
    }

    fn shrink_lruvec(&mut self, m: &mut Machine, memcg: MemcgId, node: usize, sc: &mut ScanControl) {
        if memcg != self.memcg {
            self.classic.shrink_lruvec(m, memcg, node, sc);
            return;
        }
        // get_scan_count as the classic LRU has it: anon through the classic lists, the file
        // share through the policy
        let (nr, _) = self.classic.get_scan_count(m, memcg, node, sc);
        let mut anon = nr[Lru::InactiveAnon as usize];
        let mut anon_active = nr[Lru::ActiveAnon as usize];
        let mut file = nr[Lru::InactiveFile as usize] + nr[Lru::ActiveFile as usize];
        let mut nr_reclaimed = 0;
        let proportional_reclaim =
            !sc.cgroup_reclaim() && sc.reclaimer != super::Reclaimer::Kswapd && sc.priority == super::DEF_PRIORITY;
        while anon > 0 || file > 0 || anon_active > 0 {
            if anon_active > 0 {
                let n = anon_active.min(SWAP_CLUSTER_MAX);
                anon_active -= n;
                self.classic.shrink_list(m, memcg, node, Lru::ActiveAnon, n, sc);
            }
            if anon > 0 {
                let n = anon.min(SWAP_CLUSTER_MAX);
                anon -= n;
                nr_reclaimed += self.classic.shrink_list(m, memcg, node, Lru::InactiveAnon, n, sc);
            }
            if file > 0 {
                let n = file.min(SWAP_CLUSTER_MAX);
                file -= n;
                let (scanned, freed) = self.evict_batch(m, node, n, sc);
                nr_reclaimed += freed;
                if scanned == 0 {
                    // nothing valid proposed: the kernel's own choice keeps reclaim going
                    // (counted apart)
                    nr_reclaimed += self.fallback_batch(m, node, n, sc).1;
                }
            }
            // the classic loop's stop, without its proportional nudge: global direct reclaim at
            // DEF_PRIORITY scans its whole target, the others stop once nr_to_reclaim is met
            if nr_reclaimed >= sc.nr_to_reclaim && !proportional_reclaim {
                break;
            }
        }
        sc.nr_reclaimed += nr_reclaimed;
        if m.swap.nr_slots > 0 && Classic::inactive_is_low(m, memcg, node, false) {
            self.classic
                .shrink_active_list(m, memcg, node, Lru::ActiveAnon, SWAP_CLUSTER_MAX, sc);
        }
    }

    fn memcg_lru_zone_sizes(&self) -> bool {
        self.classic.memcg_lru_zone_sizes()
    }

    fn age_node(&mut self, m: &mut Machine, node: usize, sc: &mut ScanControl) {
        self.classic.age_node(m, node, sc);
    }

    fn snapshot_refaults(&mut self, m: &Machine, target: MemcgId, node: usize) {
        self.classic.snapshot_refaults(m, target, node);
    }

    fn check_references(&mut self, m: &mut Machine, id: FolioId, sc: &ScanControl) -> FolioRef {
        self.classic.check_references(m, id, sc)
    }

    fn eviction_shadow(&mut self, m: &mut Machine, id: FolioId, target: Option<MemcgId>) -> u64 {
        // __remove_mapping of a page-cache folio: the folio_evicted hook, then the registry
        if self.lists.is_valid(id) && m.folios[id].lru_type() == FILE {
            self.stats.evicted += 1;
            self.ops.folio_evicted(&mut Self::ctx(m, &mut self.lists), id);
            self.lists.unregister(id);
        }
        self.classic.eviction_shadow(m, id, target)
    }

    fn refault(&mut self, m: &mut Machine, id: FolioId, shadow: u64, in_fault: bool) {
        self.classic.refault(m, id, shadow, in_fault);
    }

    fn rotate_reclaimable(&mut self, m: &mut Machine, id: FolioId) {
        self.classic.rotate_reclaimable(m, id);
    }

    fn lru_gen_caps(&self) -> u32 {
        self.classic.lru_gen_caps()
    }

    fn set_lru_gen_caps(&mut self, m: &mut Machine, caps: u32) -> Result<(), String> {
        self.classic.set_lru_gen_caps(m, caps)
    }

    fn min_ttl_jiffies(&self) -> u64 {
        self.classic.min_ttl_jiffies()
    }

    fn set_min_ttl_jiffies(&mut self, jiffies: u64) -> Result<(), String> {
        self.classic.set_min_ttl_jiffies(jiffies)
    }

    fn lists(&self) -> Vec<ListRef<'_>> {
        self.classic.lists()
    }

    fn check(&self, m: &Machine) -> Result<(), String> {
        self.classic.check(m)?;
        self.lists.check().map_err(|e| format!("cache_ext lists: {e}"))?;
        // the registry holds exactly the page-cache folios of the attached memcg
        let mut nr = 0u64;
        for id in 0..m.folios.len() as FolioId {
            let f = m.folios[id];
            let in_cache = f.test(pg::ALLOCATED)
                && f.memcg == self.memcg
                && f.is_file_lru()
                && !f.is_anon()
                && !f.test(pg::SWAPCACHE)
                && m.files
                    .get(f.mapping as usize)
                    .is_some_and(|file| file.slot(u64::from(f.index)) == Slot::Folio(id));
            if in_cache != self.lists.is_valid(id) {
                return Err(format!(
                    "cache_ext: folio {id} (flags {:#x}, memcg {}) is {} the page cache of memcg {} but {} the registry",
                    f.flags,
                    f.memcg,
                    if in_cache { "in" } else { "not in" },
                    self.memcg,
                    if in_cache { "not in" } else { "in" }
                ));
            }
            nr += u64::from(in_cache);
        }
        debug_assert_eq!(nr, self.lists.nr_valid());
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[derive(Clone, Debug)]
    enum ListOp {
        Register(FolioId),
        Unregister(FolioId),
        Add(u8, FolioId),
        AddTail(u8, FolioId),
        Move(u8, FolioId, bool),
        Del(FolioId),
    }

    fn op() -> impl Strategy<Value = ListOp> {
        let id = 0u32..24;
        let l = 0u8..4; // list 0 does not exist
        prop_oneof![
            id.clone().prop_map(ListOp::Register),
            id.clone().prop_map(ListOp::Unregister),
            (l.clone(), id.clone()).prop_map(|(l, i)| ListOp::Add(l, i)),
            (l.clone(), id.clone()).prop_map(|(l, i)| ListOp::AddTail(l, i)),
            (l, id.clone(), any::<bool>()).prop_map(|(l, i, t)| ListOp::Move(l, i, t)),
            id.prop_map(ListOp::Del),
        ]
    }

    proptest! {
        /// Random list operations against a model (a Vec per list): every folio on at most one
        /// list, in the model's order, counts equal, errors where cache_ext returns them.
        #[test]
        fn lists_match_a_model(ops in proptest::collection::vec(op(), 0..200)) {
            let mut l = ExtLists::new(4);
            for _ in 0..3 {
                l.new_list(1);
            }
            let mut model: Vec<Vec<FolioId>> = vec![Vec::new(); 4];
            let mut valid = [false; 24];
            let on = |model: &Vec<Vec<FolioId>>, id| model.iter().position(|v: &Vec<FolioId>| v.contains(&id));
            for o in ops {
                match o {
                    ListOp::Register(i) => {
                        l.register(i);
                        valid[i as usize] = true;
                    }
                    ListOp::Unregister(i) => {
                        l.unregister(i);
                        if let Some(k) = on(&model, i) {
                            model[k].retain(|&x| x != i);
                        }
                        valid[i as usize] = false;
                    }
                    ListOp::Add(k, i) | ListOp::AddTail(k, i) => {
                        let tail = matches!(o, ListOp::AddTail(..));
                        let r = if tail { l.add_tail(k as ListId, i) } else { l.add(k as ListId, i) };
                        let want = if k == 0 {
                            Err(ListError::NoList)
                        } else if !valid[i as usize] {
                            Err(ListError::NotValid)
                        } else if on(&model, i).is_some() {
                            Err(ListError::Busy)
                        } else {
                            if tail { model[k as usize].push(i) } else { model[k as usize].insert(0, i) }
                            Ok(())
                        };
                        prop_assert_eq!(r, want);
                    }
                    ListOp::Move(k, i, tail) => {
                        let r = l.move_to(k as ListId, i, tail);
                        let want = if k == 0 {
                            Err(ListError::NoList)
                        } else if !valid[i as usize] {
                            Err(ListError::NotValid)
                        } else {
                            if let Some(j) = on(&model, i) {
                                model[j].retain(|&x| x != i);
                            }
                            if tail { model[k as usize].push(i) } else { model[k as usize].insert(0, i) }
                            Ok(())
                        };
                        prop_assert_eq!(r, want);
                    }
                    ListOp::Del(i) => {
                        let r = l.del(i);
                        let want = if !valid[i as usize] {
                            Err(ListError::NotValid)
                        } else if let Some(j) = on(&model, i) {
                            model[j].retain(|&x| x != i);
                            Ok(())
                        } else {
                            Err(ListError::Busy)
                        };
                        prop_assert_eq!(r, want);
                    }
                }
                prop_assert!(l.check().is_ok(), "{:?}", l.check());
                for k in 1..4u64 {
                    prop_assert_eq!(l.walk(k).unwrap(), model[k as usize].clone());
                    prop_assert_eq!(l.len(k), model[k as usize].len() as u64);
                }
                prop_assert_eq!(l.nr_valid(), valid.iter().filter(|&&v| v).count() as u64);
            }
        }
    }

    /// A machine with `n` page-cache folios of file 0 in memcg 1, each in the registry, on list
    /// 1 in id order.
    fn machine_with(n: u32) -> (crate::kernel::Kernel<Classic>, ExtLists, ListId) {
        let mut cfg = crate::mm::MachineConfig::simple(256, 0);
        cfg.ra_pages = 0;
        let mut m = Machine::new(cfg);
        m.lru_cache_disabled = true;
        let p = Classic::new(&m);
        let mut k = crate::kernel::Kernel::new(m, p);
        let t = k.create_memcg(crate::mm::memcg::ROOT_MEMCG, "t");
        let task = k.m.create_mm(t);
        let file = k.m.create_file("f", u64::from(n), crate::mm::pagecache::Advice::Normal);
        let mut lists = ExtLists::new(0);
        let list = lists.new_list(t);
        for i in 0..u64::from(n) {
            k.read_page(task, file, i).unwrap();
            let Slot::Folio(id) = k.m.files[file as usize].slot(i) else {
                panic!("page {i} not cached")
            };
            lists.register(id);
            lists.add_tail(list, id).unwrap();
        }
        (k, lists, list)
    }

    #[test]
    fn iterate_fills_the_array_and_moves_as_told() {
        let (k, mut lists, list) = machine_with(40);
        let order = lists.walk(list).unwrap();
        let t = lists.lists[0].memcg;
        let mut ctx = CacheExtCtx::new(&k.m, &mut lists);
        // every other folio evicted, continues moved to the tail: the array fills at 32
        let mut e = EvictionCtx::new(32);
        let mut opts = IterateOpts {
            continue_mode: IterMode::Tail,
            ..Default::default()
        };
        let r = ctx
            .list_iterate_extended(
                t,
                list,
                |i, _| {
                    if i % 2 == 0 {
                        IterAction::Evict
                    } else {
                        IterAction::Continue
                    }
                },
                &mut opts,
                &mut e,
            )
            .unwrap();
        assert_eq!(r, IterRet::EvictArrayFilled);
        assert_eq!(e.nr_folios_to_evict, 32);
        assert_eq!(opts.nr_folios_evict, 32);
        // 40 folios: 20 evens then the continues (odds, moved to the tail) come round again
        assert_eq!(
            &e.candidates()[..20],
            &order.iter().step_by(2).copied().collect::<Vec<_>>()[..]
        );
        assert_eq!(ctx.lists().len(list), 40);
        ctx.lists().check().unwrap();
        // a list of another memcg is refused
        assert_eq!(
            ctx.list_iterate(t + 1, list, |_, _| IterAction::Evict, &mut EvictionCtx::new(1)),
            Err(ListError::NoList)
        );
    }

    #[test]
    fn sample_picks_the_lowest_of_each_group_and_puts_all_back() {
        let (k, mut lists, list) = machine_with(40);
        let order = lists.walk(list).unwrap();
        let t = lists.lists[0].memcg;
        let mut ctx = CacheExtCtx::new(&k.m, &mut lists);
        let mut e = EvictionCtx::new(4);
        // score: the folio's page index reversed, so the last of each group of 5 wins
        ctx.list_sample(
            t,
            list,
            |f| -(f.index() as i64),
            &SamplingOptions { sample_size: 5 },
            &mut e,
        )
        .unwrap();
        let want: Vec<FolioId> = (0..4).map(|g| order[g * 5 + 4]).collect();
        assert_eq!(e.candidates(), &want[..]);
        // the 20 sampled went to the tail, in order
        let now = ctx.lists().walk(list).unwrap();
        assert_eq!(&now[..20], &order[20..]);
        assert_eq!(&now[20..], &order[..20]);
        // more than the list holds: refused, the list unchanged
        let mut e = EvictionCtx::new(32);
        assert_eq!(
            ctx.list_sample(t, list, |_| 0, &SamplingOptions { sample_size: 2 }, &mut e),
            Err(ListError::TooFew)
        );
        assert_eq!(ctx.lists().walk(list).unwrap(), now);
    }
}
