// SPDX-License-Identifier: GPL-2.0-only
//! Folios: the dense table of page frames and the page flags reclaim reads and writes.
//!
//! Every page frame of the simulated machine is one `Folio` record in a single `Vec`, addressed by a
//! `FolioId` (`u32`). Nothing is allocated per folio: free folios sit on per-zone free lists threaded
//! through the same `next` link that LRU lists use. A record is 24 bytes (see `folio_size` test), so
//! a resident file page costs 28 bytes with its page-cache entry (4 bytes, `pagecache::PageSlots`),
//! and a mapped anon page 28 with its PTE (4 bytes).
//!
//! Where the bytes go: `flags` (32 bits, every one used: the `pg::*` bits below), the two list
//! links, `mapping` and `index`, and `memcg` + `mapcount` (16 bits each) — six 32-bit words. The
//! kernel's third word, `folio->swap` (`private`), has no field of its own: only an anon folio in
//! the swap cache has a swap slot, and it keeps it in `mapping`, while the anon rmap root that
//! `mapping` holds otherwise moves into that slot's class (`Swap::cache_root`: the slot's owner,
//! root and zram size, interned in two bytes per slot, see `mm::swap`). So `mapping` means:
//!
//! | folio | `mapping` | `index` |
//! |---|---|---|
//! | page cache | file id | page index in the file |
//! | anon, not `PG_swapcache` | mm id of its rmap root (`anon_root`) | virtual page number |
//! | anon, `PG_swapcache` | swap slot (`folio->swap`); the root is in the slot's class | virtual page number |
//!
//! Read and set it through [`Folio::swap_slot`], `Machine::anon_root` and `Machine::set_anon_rmap`,
//! never as a raw field for an anon folio. The price is two array reads (the class code of the
//! slot the folio names, then the class) where the rmap of a swap-cache folio is walked; nothing on
//! the access path reads it. At most 2^30 address spaces are allowed, checked where an mm is
//! created (`Machine::new_mm`; the bound of the swap-cache entry that held the root before).
//!
//! A large folio (order > 0, `pg::HEAD`) is `2^order` contiguous frames, the first aligned to
//! its size. The head's record is the folio; as in the kernel, the first tail frame's record holds
//! what only a large folio needs: its order in `index` (`_folio_order`), and its `prev`/`next`
//! links are free for the deferred split queue (`_deferred_list`). Every tail record names its
//! head in `mapping` and is otherwise free-looking (no `pg::ALLOCATED`), so a large folio costs
//! no byte beyond its frames' records ([`Folios::prep_large`], docs/thp.md).
//!
//! The layout is an array of structs rather than a struct of arrays: reclaim touches most fields of
//! one folio at once (flags, links, mapping, memcg), so one cache line per folio beats five.
//!
//! Bits of `flags` mirror the kernel's `enum pageflags` where reclaim cares, plus the fields the
//! kernel keeps in the upper bits of `folio->flags`: node, zone, and MGLRU's gen and refs counters.

/// Index of a folio in the folio table.
pub type FolioId = u32;
/// "No folio": the null link of the intrusive lists.
pub const NIL: FolioId = u32::MAX;

/// Page flags (`PG_*`), one bit each.
pub mod pg {
    /// On an LRU list (`PG_lru`). Clear while isolated or free.
    pub const LRU: u32 = 1 << 0;
    /// On the active list (`PG_active`); under MGLRU only a transient placement request.
    pub const ACTIVE: u32 = 1 << 1;
    /// `PG_referenced`: accessed once through a file descriptor, or seen young once.
    pub const REFERENCED: u32 = 1 << 2;
    /// `PG_workingset`: was part of the workingset (deactivated from active, or MGLRU top tier).
    pub const WORKINGSET: u32 = 1 << 3;
    /// `PG_dirty`.
    pub const DIRTY: u32 = 1 << 4;
    /// `PG_writeback`.
    pub const WRITEBACK: u32 = 1 << 5;
    /// `PG_reclaim`: rotate to the tail when writeback ends.
    pub const RECLAIM: u32 = 1 << 6;
    /// `PG_swapbacked`: anon or shmem; the LRU type is anon iff set.
    pub const SWAPBACKED: u32 = 1 << 7;
    /// `PG_swapcache`: has a swap slot ([`Folio::swap_slot`](crate::mm::folio::Folio::swap_slot),
    /// kept in `Folio::mapping`).
    pub const SWAPCACHE: u32 = 1 << 8;
    /// `PG_unevictable`: on the unevictable list.
    pub const UNEVICTABLE: u32 = 1 << 9;
    /// `PG_mlocked`.
    pub const MLOCKED: u32 = 1 << 10;
    /// `PG_readahead`: reaching this page triggers asynchronous read-ahead.
    pub const READAHEAD: u32 = 1 << 11;
    /// `PG_uptodate` is implied for every allocated folio; this bit marks "allocated" (not free).
    pub const ALLOCATED: u32 = 1 << 12;
    /// The mapping is anonymous (`PAGE_MAPPING_ANON`): `mapping` is an mm id, `index` a virtual page.
    pub const ANON: u32 = 1 << 13;
    /// Isolated from the LRU by reclaim (kernel: `!PG_lru` while on a private list).
    pub const ISOLATED: u32 = 1 << 14;
    /// Charged to `Folio::memcg` (`folio_memcg` is set).
    pub const CHARGED: u32 = 1 << 15;
    /// A page of the zram pool (zsmalloc): holds compressed swap data, on no LRU list.
    pub const ZSPAGE: u32 = 1 << 21;

    /// MGLRU gen counter (`LRU_GEN_MASK`): gen+1 while on an MGLRU list, 0 otherwise.
    pub const GEN_SHIFT: u32 = 16;
    /// Mask of the gen counter (3 bits).
    pub const GEN_MASK: u32 = 0x7 << GEN_SHIFT;
    /// MGLRU refs counter (`LRU_REFS_MASK`, 2 bits).
    pub const REFS_SHIFT: u32 = 19;
    /// Mask of the refs counter.
    pub const REFS_MASK: u32 = 0x3 << REFS_SHIFT;
    /// Zone index (2 bits).
    pub const ZONE_SHIFT: u32 = 22;
    /// Mask of the zone index.
    pub const ZONE_MASK: u32 = 0x3 << ZONE_SHIFT;
    /// Node id (5 bits: at most [`super::MAX_NUMNODES`] nodes).
    pub const NODE_SHIFT: u32 = 24;
    /// Mask of the node id.
    pub const NODE_MASK: u32 = 0x1f << NODE_SHIFT;
    /// `PG_head`: the first frame of a folio of more than one page (a large folio); its order is
    /// in the first tail frame's record ([`super::Folios::order`]).
    pub const HEAD: u32 = 1 << 29;

    /// MGLRU: the generation whose list the folio is physically on (2 bits). It differs from the
    /// gen counter after a lazy promotion, until `sort_folio` relinks the folio.
    pub const LIST_GEN_SHIFT: u32 = 30;
    /// Mask of the list generation.
    pub const LIST_GEN_MASK: u32 = 0x3 << LIST_GEN_SHIFT;

    /// Flags cleared when a folio is freed (everything but node and zone).
    pub const FREE_CLEAR: u32 = !(ZONE_MASK | NODE_MASK);
}

/// The most NUMA nodes a machine may have: the node field of [`Folio::flags`] has 5 bits.
pub const MAX_NUMNODES: usize = 32;

/// LRU type: anon (0) or file (1), as `LRU_GEN_ANON`/`LRU_GEN_FILE` and `LRU_INACTIVE_ANON`/`_FILE` order.
pub const ANON: usize = 0;
/// LRU type: file (page cache that is not swap-backed).
pub const FILE: usize = 1;

/// One page frame. 24 bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C)]
pub struct Folio {
    /// Page flags, see [`pg`].
    pub flags: u32,
    /// LRU link toward the head (younger end); free-list link unused.
    pub prev: FolioId,
    /// LRU link toward the tail (older end); free-list link.
    pub next: FolioId,
    /// File id (page cache); for an anon folio the mm id of its rmap root, or, while
    /// `PG_swapcache`, its swap slot (`folio->swap`; the root is then in the slot's swap-cache
    /// entry). See the module documentation.
    pub mapping: u32,
    /// Page index in the file, or virtual page number for anon.
    pub index: u32,
    /// Charged memcg id.
    pub memcg: u16,
    /// Number of PTEs mapping this folio (`folio_mapcount`).
    pub mapcount: u16,
}

/// The first tail record's `prev` and `next` of a large folio that is on no deferred split queue.
const NO_DEFERRED: FolioId = NIL;

impl Folio {
    const FREE: Folio = Folio {
        flags: 0,
        prev: NIL,
        next: NIL,
        mapping: 0,
        index: 0,
        memcg: 0,
        mapcount: 0,
    };

    /// Whether `flag` (one or more `pg::*` bits, all required) is set.
    #[inline]
    pub fn test(&self, flag: u32) -> bool {
        self.flags & flag == flag
    }
    /// Set `flag`.
    #[inline]
    pub fn set(&mut self, flag: u32) {
        self.flags |= flag;
    }
    /// Clear `flag`.
    #[inline]
    pub fn clear(&mut self, flag: u32) {
        self.flags &= !flag;
    }
    /// Clear `flag` and report whether it was set (`folio_test_clear_*`).
    #[inline]
    pub fn test_clear(&mut self, flag: u32) -> bool {
        let was = self.flags & flag != 0;
        self.flags &= !flag;
        was
    }
    /// LRU type: [`ANON`] if swap-backed, else [`FILE`] (`folio_is_file_lru`).
    #[inline]
    pub fn lru_type(&self) -> usize {
        if self.flags & pg::SWAPBACKED != 0 {
            ANON
        } else {
            FILE
        }
    }
    /// Whether this is a file LRU folio.
    #[inline]
    pub fn is_file_lru(&self) -> bool {
        self.flags & pg::SWAPBACKED == 0
    }
    /// Whether the mapping is anonymous.
    #[inline]
    pub fn is_anon(&self) -> bool {
        self.flags & pg::ANON != 0
    }
    /// The swap slot of a folio in the swap cache (`folio->swap`), kept in `mapping`.
    #[inline]
    pub fn swap_slot(&self) -> u32 {
        debug_assert!(self.test(pg::SWAPCACHE), "swap_slot of a folio not in the swap cache");
        self.mapping
    }
    /// Node id.
    #[inline]
    pub fn node(&self) -> usize {
        ((self.flags & pg::NODE_MASK) >> pg::NODE_SHIFT) as usize
    }
    /// Zone index within the node.
    #[inline]
    pub fn zone(&self) -> usize {
        ((self.flags & pg::ZONE_MASK) >> pg::ZONE_SHIFT) as usize
    }
    /// Whether mapped by any PTE.
    #[inline]
    pub fn mapped(&self) -> bool {
        self.mapcount > 0
    }
    /// Whether the folio can be reclaimed at all (`folio_evictable`).
    #[inline]
    pub fn evictable(&self) -> bool {
        self.flags & pg::MLOCKED == 0
    }
    /// MGLRU gen counter value (gen+1, or 0 when not on an MGLRU list).
    #[inline]
    pub fn gen_counter(&self) -> u32 {
        (self.flags & pg::GEN_MASK) >> pg::GEN_SHIFT
    }
    /// Set the MGLRU gen counter (gen+1, or 0).
    #[inline]
    pub fn set_gen_counter(&mut self, v: u32) {
        self.flags = (self.flags & !pg::GEN_MASK) | ((v << pg::GEN_SHIFT) & pg::GEN_MASK);
    }
    /// MGLRU: the generation slot of the list the folio is on.
    #[inline]
    pub fn list_gen(&self) -> usize {
        ((self.flags & pg::LIST_GEN_MASK) >> pg::LIST_GEN_SHIFT) as usize
    }
    /// Record the generation slot of the list the folio is on.
    #[inline]
    pub fn set_list_gen(&mut self, g: usize) {
        self.flags = (self.flags & !pg::LIST_GEN_MASK) | (((g as u32) << pg::LIST_GEN_SHIFT) & pg::LIST_GEN_MASK);
    }
    /// MGLRU refs counter value (0..=3).
    #[inline]
    pub fn refs(&self) -> u32 {
        (self.flags & pg::REFS_MASK) >> pg::REFS_SHIFT
    }
    /// Set the MGLRU refs counter (0..=3).
    #[inline]
    pub fn set_refs(&mut self, v: u32) {
        self.flags = (self.flags & !pg::REFS_MASK) | ((v << pg::REFS_SHIFT) & pg::REFS_MASK);
    }
}

/// A doubly linked list of folios threaded through `Folio::prev`/`next`.
///
/// `head` is the young end (where `list_add` inserts), `tail` the old end (where reclaim takes from,
/// as `lru_to_folio`). `len` counts folios; page counts are the same while every folio is one page.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ListHead {
    /// Youngest folio, or [`NIL`].
    pub head: FolioId,
    /// Oldest folio, or [`NIL`].
    pub tail: FolioId,
    /// Number of folios on the list.
    pub len: u32,
}

impl Default for ListHead {
    fn default() -> Self {
        ListHead {
            head: NIL,
            tail: NIL,
            len: 0,
        }
    }
}

impl ListHead {
    /// Whether the list is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// The folio table: every page frame of the machine, and the per-zone free lists.
#[derive(Clone, Debug)]
pub struct Folios {
    table: Vec<Folio>,
}

impl Folios {
    /// A table with room for `capacity` folios (reserved up front, so the hot path never reallocates).
    pub fn with_capacity(capacity: usize) -> Self {
        Folios {
            table: Vec::with_capacity(capacity),
        }
    }

    /// Ask the CPU to bring folio `id`'s record into cache (a hint; nothing for an id past the
    /// table).
    #[inline]
    pub fn prefetch(&self, id: FolioId) {
        if let Some(f) = self.table.get(id as usize) {
            super::prefetch(f);
        }
    }

    /// Append a new free folio on `node`/`zone`, returning its id. Used while building zones.
    pub fn push_free(&mut self, node: usize, zone: usize) -> FolioId {
        let id = self.table.len() as FolioId;
        let mut f = Folio::FREE;
        f.flags = ((node as u32) << pg::NODE_SHIFT) | ((zone as u32) << pg::ZONE_SHIFT);
        self.table.push(f);
        id
    }

    /// Make frames `head .. head + 2^order` one large folio (`prep_compound_page`): `head` gets
    /// `pg::HEAD`, the first tail record the order, every tail record the head's id. The frames
    /// are allocated and their records created by the caller; `order` is at least 1.
    pub fn prep_large(&mut self, head: FolioId, order: u32) {
        debug_assert!(order >= 1 && head % (1 << order) == 0);
        self.table[head as usize].flags |= pg::HEAD;
        for t in head + 1..head + (1 << order) {
            let f = &mut self.table[t as usize];
            debug_assert!(f.flags & (pg::ALLOCATED | pg::HEAD) == 0, "tail {t} in use");
            f.mapping = head;
            f.prev = NIL;
            f.next = NIL;
        }
        let t1 = &mut self.table[head as usize + 1];
        t1.index = order;
        t1.prev = NO_DEFERRED;
        t1.next = NO_DEFERRED;
    }

    /// Undo [`Self::prep_large`]: `head` and its tails become `2^order` order-0 frames, the tails
    /// free-looking records the caller makes folios of (`__split_huge_page` hands each tail its
    /// own folio) or frees. Returns the order it had.
    pub fn clear_large(&mut self, head: FolioId) -> u32 {
        let order = self.order(head);
        self.table[head as usize].flags &= !pg::HEAD;
        for t in head + 1..head + (1 << order) {
            let f = &mut self.table[t as usize];
            f.mapping = 0;
            f.index = 0;
            f.prev = NIL;
            f.next = NIL;
        }
        order
    }

    /// `folio_order`: 0 for an order-0 folio, else what the first tail record holds.
    #[inline]
    pub fn order(&self, id: FolioId) -> u32 {
        if self.table[id as usize].flags & pg::HEAD == 0 {
            0
        } else {
            self.table[id as usize + 1].index
        }
    }

    /// `folio_nr_pages`: the pages of folio `id` (1 unless large).
    #[inline]
    pub fn nr_pages(&self, id: FolioId) -> u32 {
        1 << self.order(id)
    }

    /// Whether frame `id` is a tail of a large folio whose head is `head` (`compound_head`).
    #[inline]
    pub fn is_tail_of(&self, id: FolioId, head: FolioId) -> bool {
        let h = &self.table[head as usize];
        h.flags & pg::HEAD != 0 && id > head && id - head < (1 << self.order(head))
    }

    /// Create the record of frame `id` (and of any lower id not created yet) as a free folio of
    /// `node`/`zone`.
    #[inline]
    pub fn materialize(&mut self, id: FolioId, node: usize, zone: usize) {
        if id as usize >= self.table.len() {
            self.table.resize(id as usize + 1, Folio::FREE);
        }
        let f = &mut self.table[id as usize];
        f.flags = (f.flags & pg::FREE_CLEAR & !(pg::NODE_MASK | pg::ZONE_MASK))
            | ((node as u32) << pg::NODE_SHIFT)
            | ((zone as u32) << pg::ZONE_SHIFT);
    }

    /// Number of folio records created so far (free or allocated).
    pub fn len(&self) -> usize {
        self.table.len()
    }

    /// Whether the table is empty.
    pub fn is_empty(&self) -> bool {
        self.table.is_empty()
    }

    /// Reset a folio to the free state (keeping node and zone).
    pub fn reset(&mut self, id: FolioId) {
        let f = &mut self.table[id as usize];
        let keep = f.flags & !pg::FREE_CLEAR;
        *f = Folio::FREE;
        f.flags = keep;
    }

    /// Add at the head (young end), as `list_add`.
    #[inline]
    pub fn list_add(&mut self, list: &mut ListHead, id: FolioId) {
        let old = list.head;
        {
            let f = &mut self.table[id as usize];
            f.prev = NIL;
            f.next = old;
        }
        if old != NIL {
            self.table[old as usize].prev = id;
        } else {
            list.tail = id;
        }
        list.head = id;
        list.len += 1;
    }

    /// Add at the tail (old end), as `list_add_tail`.
    #[inline]
    pub fn list_add_tail(&mut self, list: &mut ListHead, id: FolioId) {
        let old = list.tail;
        {
            let f = &mut self.table[id as usize];
            f.next = NIL;
            f.prev = old;
        }
        if old != NIL {
            self.table[old as usize].next = id;
        } else {
            list.head = id;
        }
        list.tail = id;
        list.len += 1;
    }

    /// Insert `id` right before `at` (a folio on `list`) toward the head (young end), as
    /// `list_add_tail(&id->lru, &at->lru)` does.
    #[inline]
    pub fn list_add_before(&mut self, list: &mut ListHead, at: FolioId, id: FolioId) {
        let prev = self.table[at as usize].prev;
        {
            let f = &mut self.table[id as usize];
            f.prev = prev;
            f.next = at;
        }
        if prev != NIL {
            self.table[prev as usize].next = id;
        } else {
            list.head = id;
        }
        self.table[at as usize].prev = id;
        list.len += 1;
    }

    /// Unlink from `list`, as `list_del`.
    #[inline]
    pub fn list_del(&mut self, list: &mut ListHead, id: FolioId) {
        let (prev, next) = {
            let f = &self.table[id as usize];
            (f.prev, f.next)
        };
        if prev != NIL {
            self.table[prev as usize].next = next;
        } else {
            list.head = next;
        }
        if next != NIL {
            self.table[next as usize].prev = prev;
        } else {
            list.tail = prev;
        }
        let f = &mut self.table[id as usize];
        f.prev = NIL;
        f.next = NIL;
        list.len -= 1;
    }

    /// Move every folio of `from` to the tail (old end) of `to`, emptying `from`
    /// (`list_splice_tail_init`).
    pub fn list_splice_tail(&mut self, from: &mut ListHead, to: &mut ListHead) {
        if from.len == 0 {
            return;
        }
        if to.tail != NIL {
            self.table[to.tail as usize].next = from.head;
            self.table[from.head as usize].prev = to.tail;
        } else {
            to.head = from.head;
        }
        to.tail = from.tail;
        to.len += from.len;
        *from = ListHead::default();
    }

    /// Move a folio already on `list` to its head (`list_move`).
    #[inline]
    pub fn list_move(&mut self, list: &mut ListHead, id: FolioId) {
        self.list_del(list, id);
        self.list_add(list, id);
    }

    /// Walk `list` from head to tail, checking link consistency and length; calls `f` on each folio.
    pub fn walk_list(&self, list: &ListHead, mut f: impl FnMut(FolioId) -> Result<(), String>) -> Result<(), String> {
        let mut n = 0u32;
        let mut prev = NIL;
        let mut cur = list.head;
        while cur != NIL {
            if cur as usize >= self.table.len() {
                return Err(format!("list link to folio {cur} out of range"));
            }
            if self.table[cur as usize].prev != prev {
                return Err(format!(
                    "folio {cur}: prev link {} != {prev}",
                    self.table[cur as usize].prev
                ));
            }
            n += 1;
            if n > list.len {
                return Err(format!("list longer than its length {}", list.len));
            }
            f(cur)?;
            prev = cur;
            cur = self.table[cur as usize].next;
        }
        if prev != list.tail {
            return Err(format!("list tail {} but last folio {prev}", list.tail));
        }
        if n != list.len {
            return Err(format!("list has {n} folios but length {}", list.len));
        }
        Ok(())
    }
}

impl std::ops::Index<FolioId> for Folios {
    type Output = Folio;
    #[inline]
    fn index(&self, id: FolioId) -> &Folio {
        &self.table[id as usize]
    }
}

impl std::ops::IndexMut<FolioId> for Folios {
    #[inline]
    fn index_mut(&mut self, id: FolioId) -> &mut Folio {
        &mut self.table[id as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn folio_size() {
        // six 32-bit words: 28 bytes per resident file page with its 4-byte page-cache entry
        assert_eq!(std::mem::size_of::<Folio>(), 24);
        assert_eq!(std::mem::align_of::<Folio>(), 4);
    }

    #[test]
    fn flag_fields_do_not_overlap() {
        let mut f = Folio::FREE;
        f.set_gen_counter(4);
        f.set_refs(3);
        f.flags |= (5 << pg::NODE_SHIFT) | (2 << pg::ZONE_SHIFT);
        assert_eq!(f.gen_counter(), 4);
        assert_eq!(f.refs(), 3);
        assert_eq!(f.node(), 5);
        assert_eq!(f.zone(), 2);
        f.set_gen_counter(0);
        assert_eq!(f.refs(), 3);
        assert_eq!(f.node(), 5);
        assert_eq!(f.flags & 0xffff, 0);
    }

    #[test]
    fn head_bit_is_outside_every_field() {
        let mut f = Folio::FREE;
        f.flags = (31 << pg::NODE_SHIFT) | pg::ZONE_MASK | pg::GEN_MASK | pg::REFS_MASK | pg::LIST_GEN_MASK;
        assert_eq!(f.flags & pg::HEAD, 0);
        assert_eq!(f.node(), MAX_NUMNODES - 1);
        f.set(pg::HEAD);
        assert_eq!(f.node(), MAX_NUMNODES - 1);
        assert_eq!(f.flags & !pg::FREE_CLEAR, pg::ZONE_MASK | pg::NODE_MASK);
    }

    #[test]
    fn large_folio_order_lives_in_the_first_tail() {
        let mut t = Folios::with_capacity(1024);
        for _ in 0..1024 {
            t.push_free(3, 1);
        }
        assert_eq!((t.order(512), t.nr_pages(512)), (0, 1));
        t[512].set(pg::ALLOCATED);
        t.prep_large(512, 9);
        assert_eq!((t.order(512), t.nr_pages(512)), (9, 512));
        assert!(t[512].test(pg::HEAD) && !t[513].test(pg::HEAD));
        assert!(t.is_tail_of(513, 512) && t.is_tail_of(1023, 512));
        assert!(!t.is_tail_of(512, 512) && !t.is_tail_of(511, 512));
        // tails keep node and zone, and look free
        assert!((513..1024).all(|i| t[i].node() == 3 && t[i].zone() == 1 && !t[i].test(pg::ALLOCATED)));
        // the head's own fields are untouched
        assert_eq!(
            (t[512].mapping, t[512].index, t[512].prev, t[512].next),
            (0, 0, NIL, NIL)
        );
        // a small one next to it
        t[0].set(pg::ALLOCATED);
        t.prep_large(0, 2);
        assert_eq!(t.nr_pages(0), 4);
        assert!(t.is_tail_of(3, 0) && !t.is_tail_of(4, 0));
        assert_eq!(t.nr_pages(512), 512);
        assert_eq!(t.clear_large(512), 9);
        assert_eq!(t.nr_pages(512), 1);
        assert!((513..1024).all(|i| t[i] == t[1000] && t[i].mapping == 0 && t[i].index == 0));
        assert_eq!(t.nr_pages(0), 4);
    }

    #[derive(Debug, Clone)]
    enum ListOp {
        Add(u8),
        AddTail(u8),
        Del(u8),
        Move(u8),
        Before(u8, u8),
    }

    proptest! {
        /// The intrusive list behaves as a VecDeque model under any sequence of operations.
        #[test]
        fn list_matches_model(ops in proptest::collection::vec(
            prop_oneof![
                (0u8..16).prop_map(ListOp::Add),
                (0u8..16).prop_map(ListOp::AddTail),
                (0u8..16).prop_map(ListOp::Del),
                (0u8..16).prop_map(ListOp::Move),
                (0u8..16, 0u8..16).prop_map(|(a, b)| ListOp::Before(a, b)),
            ], 0..200)) {
            let mut t = Folios::with_capacity(16);
            for _ in 0..16 { t.push_free(0, 0); }
            let mut l = ListHead::default();
            let mut model: std::collections::VecDeque<u32> = Default::default();
            for op in ops {
                match op {
                    ListOp::Add(i) => if !model.contains(&(i as u32)) { t.list_add(&mut l, i as u32); model.push_front(i as u32); },
                    ListOp::AddTail(i) => if !model.contains(&(i as u32)) { t.list_add_tail(&mut l, i as u32); model.push_back(i as u32); },
                    ListOp::Del(i) => if let Some(p) = model.iter().position(|&x| x == i as u32) { t.list_del(&mut l, i as u32); model.remove(p); },
                    ListOp::Move(i) => if let Some(p) = model.iter().position(|&x| x == i as u32) { t.list_move(&mut l, i as u32); model.remove(p); model.push_front(i as u32); },
                    ListOp::Before(at, i) => if !model.contains(&(i as u32)) { if let Some(p) = model.iter().position(|&x| x == at as u32) { t.list_add_before(&mut l, at as u32, i as u32); model.insert(p, i as u32); } },
                }
                let mut seen = Vec::new();
                t.walk_list(&l, |f| { seen.push(f); Ok(()) }).unwrap();
                prop_assert_eq!(seen, model.iter().copied().collect::<Vec<_>>());
            }
        }
    }
}
