// SPDX-License-Identifier: GPL-2.0-only
//! The page cache: one sparse slot table per file (the kernel's xarray in `address_space->i_pages`).
//!
//! A slot holds nothing, a resident folio, or a shadow entry left when the folio was evicted
//! (`workingset_eviction`); a later fault on a slot with a shadow is a refault. A leaf that holds
//! only shadows goes on its memcg's shadow-node list ([`ShadowLru`], `workingset_update_node`),
//! from which the shadow shrinker (`reclaim::shrinker`) deletes the oldest when a memcg has more
//! than its LRU and slab pages allow; it runs on the leaves charged to memcgs
//! ([`crate::mm::KmemConfig::xa_nodes`]), and without that charge every shadow stays until its
//! slot is reused or the file is truncated.
//!
//! Like the xarray, a file's [`PageSlots`] allocates its nodes on first touch, so its memory
//! follows the pages a run touches, not the size of the file: a top array of one `u32` per
//! directory block's span (grown up to the highest index touched) points to directory blocks of
//! leaf numbers (one per 64 indices; a block covers the whole file up to 128 MiB of it, so 256
//! bytes for a 16 MiB file, 2 KiB per 128 MiB region touched of a larger one), which point to
//! leaves of 64 slots; a leaf whose slots all become empty again is freed for reuse. A leaf keeps
//! only its slots in use: a bit each in a 64-bit map and a 4-byte entry each (a folio id, or the
//! place of a shadow's 8-byte value), packed in one arena, so that a resident page costs 4 bytes
//! of page cache however sparse its leaf is (issue #15). A lookup is four array reads and a bit
//! count, no hashing.

use super::folio::FolioId;

/// A page-cache or swap-cache slot.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Slot {
    /// Nothing cached and no shadow.
    #[default]
    Empty,
    /// A resident folio.
    Folio(FolioId),
    /// A shadow entry (policy-defined bits, at most 62).
    Shadow(u64),
}

const TAG_FOLIO: u64 = 1 << 63;
const TAG_SHADOW: u64 = 1 << 62;
/// Largest shadow value a slot can hold.
pub const SHADOW_MASK: u64 = TAG_SHADOW - 1;

/// Largest value a folio entry carries beside its folio id ([`PackedSlot::pack_folio_with`]): 30
/// bits, below both tags.
pub const FOLIO_EXTRA_MAX: u32 = (1 << 30) - 1;

/// A packed slot, 8 bytes (the swap cache's entry per swap slot until 2026-12-06, when the swap
/// cache became a [`PageSlots`] by slot; kept for [`Radix`]'s tests).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PackedSlot(u64);

impl PackedSlot {
    /// Pack.
    #[inline]
    pub fn pack(s: Slot) -> Self {
        PackedSlot(match s {
            Slot::Empty => 0,
            Slot::Folio(f) => TAG_FOLIO | f as u64,
            Slot::Shadow(v) => TAG_SHADOW | (v & SHADOW_MASK),
        })
    }
    /// Pack a folio with `extra` (at most [`FOLIO_EXTRA_MAX`]) in the bits a folio entry leaves
    /// free; [`PackedSlot::get`] reads the same `Slot::Folio` as without it. (The swap cache kept
    /// an anon folio's rmap root there before its slots' classes did.)
    #[inline]
    pub fn pack_folio_with(f: FolioId, extra: u32) -> Self {
        debug_assert!(extra <= FOLIO_EXTRA_MAX);
        PackedSlot(TAG_FOLIO | (u64::from(extra & FOLIO_EXTRA_MAX) << 32) | u64::from(f))
    }
    /// The `extra` of a folio entry packed by [`PackedSlot::pack_folio_with`] (0 for any other).
    #[inline]
    pub fn folio_extra(self) -> u32 {
        if self.0 & TAG_FOLIO != 0 {
            (self.0 >> 32) as u32 & FOLIO_EXTRA_MAX
        } else {
            0
        }
    }
    /// Whether it holds a shadow entry.
    #[inline]
    pub fn is_shadow(self) -> bool {
        self.0 & TAG_SHADOW != 0
    }
    /// Unpack.
    #[inline]
    pub fn get(self) -> Slot {
        if self.0 & TAG_FOLIO != 0 {
            Slot::Folio(self.0 as u32)
        } else if self.0 & TAG_SHADOW != 0 {
            Slot::Shadow(self.0 & SHADOW_MASK)
        } else {
            Slot::Empty
        }
    }
}

/// Read-ahead state (`struct file_ra_state`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RaState {
    /// Start of the current window.
    pub start: u64,
    /// Window size in pages.
    pub size: u64,
    /// Pages left when the asynchronous read-ahead is triggered.
    pub async_size: u64,
    /// Maximum window (`ra_pages`, default 32 = 128 KiB).
    pub ra_pages: u64,
    /// Index of the previous read (`prev_pos >> PAGE_SHIFT`), or `u64::MAX`.
    pub prev_index: u64,
    /// `mmap_miss` heuristic counter.
    pub mmap_miss: u32,
}

/// How a file was opened / advised (`FMODE_RANDOM` from `POSIX_FADV_RANDOM`, or normal).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Advice {
    /// Normal: on-demand read-ahead.
    #[default]
    Normal,
    /// `POSIX_FADV_RANDOM`: read only what is asked.
    Random,
    /// `POSIX_FADV_SEQUENTIAL`: doubled read-ahead window.
    Sequential,
}

/// A file and its cached pages.
#[derive(Clone, Debug)]
pub struct File {
    /// Name, for reports.
    pub name: String,
    /// Size in pages.
    pub size: u64,
    /// Its slots: a 4-byte entry per page cached or with a shadow entry, in leaves of 64 slots
    /// allocated on first touch ([`PageSlots`]).
    pub slots: PageSlots,
    /// Read-ahead state.
    pub ra: RaState,
    /// Access advice.
    pub advice: Advice,
    /// Mappings of this file: (mm id, first virtual page of the VMA) — the `i_mmap` tree. Keyed by
    /// start rather than VMA index, as inserting or removing VMAs shifts indices; whoever moves a
    /// VMA's start (munmap, split) updates its entry.
    pub mappings: Vec<(u32, u32)>,
    /// Resident pages.
    pub nr_pages: u64,
    /// Dirty pages (the inode is dirty while this is non-zero).
    pub nr_dirty: u64,
    /// When it went from clean to dirty (`inode->dirtied_when`), ns.
    pub dirtied_when: u64,
    /// The memcg whose writeback domain owns it (`inode_attach_wb`: the first dirtier's).
    pub wb_memcg: crate::mm::memcg::MemcgId,
    /// Where the next writeback of it starts (`mapping->writeback_index`).
    pub writeback_index: u64,
    /// The xarray's nodes above its leaves (the leaves are the slot table's chunks).
    pub xa: XaUpper,
    /// The memcg its kernel objects (inode, dentry, xarray nodes) are charged to: the first
    /// that cached a page of it ([`crate::mm::KmemConfig`]).
    pub kmem_memcg: Option<crate::mm::memcg::MemcgId>,
    /// A block device's page cache of filesystem metadata (the data disk's ext4 blocks): its
    /// inode is the device's, made at boot and charged to no memcg (no inode or dentry charge at
    /// its first page), and its folios carry buffer heads (`PG_private`), so reclaim must release
    /// them (`filemap_release_folio`) before it can free the folio.
    pub bdev_metadata: bool,
    /// The buffer heads of this metadata file's folios are in a CPU's buffer-head LRU
    /// (`fs/buffer.c`: `__find_get_block` installs each buffer it looks up in the per-CPU
    /// `bh_lrus`, 16 entries, with a reference of its own), so `try_to_free_buffers` finds them
    /// busy (`buffer_busy`: `b_count`) and reclaim activates the folio (`activate_locked`)
    /// instead of freeing it. Nothing else looks buffers up while a replay reads one file, so
    /// they stay until an `lru_add_drain_all` invalidates every CPU's LRU
    /// ([`crate::reclaim::lru_add_drain_all`]); from then on reclaim frees the folio as any clean
    /// page-cache folio. Only with [`File::bdev_metadata`].
    pub buffers_in_bh_lru: bool,
    /// Per leaf (chunk of `slots`, by chunk number): its shadow entries, and its place on the
    /// shadow-node list while it holds nothing else ([`ShadowLru`]).
    pub leaves: Vec<Leaf>,
}

impl File {
    /// Its shadow entries (pages not resident whose eviction the page cache remembers: the
    /// leaves' `nr_values` summed) and the bytes of its page cache kept for them: each leaf in
    /// use (its block of 4-byte entries with its header, its [`LeafSlots`] and its [`Leaf`]
    /// record) shared equally among its live entries, the shadow entries' share (rounded down
    /// per leaf); the arena's garbage and unused room shared the same way over the whole file;
    /// and the shadow values' store ([`ShadowStore`]: 8 bytes per value, its free ones and
    /// unused room) whole.
    pub fn shadow_state(&self) -> (u64, u64) {
        let (mut entries, mut live_all, mut bytes) = (0, 0, 0);
        for (c, live) in self.slots.chunks_live() {
            let values = self.leaves.get(c).map_or(0, |l| l.values) as u64;
            let leaf_bytes = self.slots.leaf_bytes(c) + std::mem::size_of::<Leaf>() as u64;
            entries += values;
            live_all += live as u64;
            bytes += leaf_bytes * values / live as u64;
        }
        // the arena's garbage and room, shared by count as the leaves are
        let overhead = self.slots.arena_overhead() * entries / live_all.max(1);
        (entries, bytes + overhead + self.slots.shadows.bytes())
    }
}

/// What the page cache keeps per xarray leaf besides its slots (`xa_node`'s `nr_values`,
/// `private_list` and the node its memory is on).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Leaf {
    /// Shadow entries among its slots (`nr_values`).
    pub values: u8,
    /// The node of the memory it is allocated on: that of the folio whose insertion allocated it.
    pub nid: u8,
    /// Its entry on the shadow-node list, or [`NOT_LISTED`].
    pub lru: u32,
}

/// [`Leaf::lru`] of a leaf that is not on the shadow-node list.
pub const NOT_LISTED: u32 = u32::MAX;

impl Default for Leaf {
    fn default() -> Self {
        Leaf {
            values: 0,
            nid: 0,
            lru: NOT_LISTED,
        }
    }
}

/// What [`File::set_slot`] did to the file's xarray.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SlotChange {
    /// By how many nodes the xarray grew or shrank ([`File::xa_nodes`]).
    pub nodes: i64,
    /// The leaf of the slot (chunk number).
    pub leaf: u32,
    /// The leaf was allocated by this change.
    pub born: bool,
    /// `Some(true)`: the leaf came to hold only shadow entries (`workingset_update_node` puts it
    /// on the shadow-node list); `Some(false)`: it held only shadows and no longer does (a folio
    /// came in, or its last entry went and the leaf with it); `None`: neither.
    pub shadow_only: Option<bool>,
    /// The entry the change replaced (empty when the slot had no leaf).
    pub old: Slot,
}

/// Levels of xarray nodes above the leaves that [`XaUpper`] counts: enough for 2^42 indices.
const XA_UPPER_LEVELS: usize = 6;

/// The interior nodes of a file's xarray (`struct xa_node`, 64 slots), counted from its leaves:
/// a node at level `l` (leaves are level 0) exists while a leaf below it does and the tree is
/// tall enough to have that level, which its highest index ever stored decides (`xas_expand`;
/// the kernel's shrinking of a tree whose top node has only slot 0 is not modelled).
#[derive(Clone, Debug, Default)]
pub struct XaUpper {
    /// Per level `1..`, live children of each node of the level.
    children: Vec<Radix<u16>>,
    /// Per level `1..`, its nodes.
    nodes: [u64; XA_UPPER_LEVELS],
    /// Highest index ever stored.
    max_index: u64,
}

impl XaUpper {
    /// Leaf `leaf` (index >> 6) came to hold an entry (`born`) or lost its last one.
    fn leaf_changed(&mut self, leaf: u64, born: bool) {
        if self.children.is_empty() {
            self.children = (0..XA_UPPER_LEVELS).map(|_| Radix::default()).collect();
        }
        for l in 0..XA_UPPER_LEVELS {
            let g = leaf >> (CHUNK_SHIFT as usize * (l + 1));
            let c = self.children[l].get(g);
            let n = if born { c + 1 } else { c - 1 };
            self.children[l].set(g, n);
            // the node lives on (or already lived): the levels above do not change
            if (born && c > 0) || (!born && n > 0) {
                return;
            }
            if born {
                self.nodes[l] += 1;
            } else {
                self.nodes[l] -= 1;
            }
        }
    }

    /// Interior nodes of a tree whose leaves are as counted.
    fn nodes(&self) -> u64 {
        (0..XA_UPPER_LEVELS)
            .take_while(|&l| self.max_index >> (CHUNK_SHIFT as usize * (l + 1)) > 0)
            .map(|l| self.nodes[l])
            .sum()
    }
}

impl File {
    /// A new, uncached file of `size` pages.
    pub fn new(name: impl Into<String>, size: u64, ra_pages: u64, advice: Advice) -> Self {
        File {
            name: name.into(),
            size,
            slots: PageSlots::for_pages(size),
            ra: RaState {
                ra_pages,
                prev_index: u64::MAX,
                ..Default::default()
            },
            advice,
            mappings: vec![],
            nr_pages: 0,
            nr_dirty: 0,
            dirtied_when: 0,
            wb_memcg: 0,
            writeback_index: 0,
            xa: XaUpper::default(),
            kmem_memcg: None,
            bdev_metadata: false,
            buffers_in_bh_lru: false,
            leaves: Vec::new(),
        }
    }
    /// Slot at `index`.
    #[inline(always)]
    pub fn slot(&self, index: u64) -> Slot {
        debug_assert!(
            index < self.size,
            "slot {index} past the end of {} ({} pages)",
            self.name,
            self.size
        );
        self.slots.get(index)
    }
    /// Replace the slot at `index`: what that did to the xarray's nodes and to the leaf's place
    /// on the shadow-node list.
    #[inline(always)]
    pub fn set_slot(&mut self, index: u64, s: Slot) -> SlotChange {
        debug_assert!(
            index < self.size,
            "slot {index} past the end of {} ({} pages)",
            self.name,
            self.size
        );
        let r = self.slots.replace(index, s);
        if r.chunk == NO_CHUNK {
            return SlotChange::default();
        }
        let c = r.chunk as usize;
        if r.chunks > 0 {
            self.leaf_born(c);
        }
        let (was, is) = (r.old != Slot::Empty, s != Slot::Empty);
        let live_before = r.live + u8::from(was) - u8::from(is);
        let leaf = &mut self.leaves[c];
        let only_before = live_before != 0 && live_before == leaf.values;
        let shadow = |s: Slot| u8::from(matches!(s, Slot::Shadow(_)));
        leaf.values = leaf.values + shadow(s) - shadow(r.old);
        let only_after = r.live != 0 && r.live == leaf.values;
        SlotChange {
            nodes: match r.chunks {
                0 => 0,
                leaves => self.xa_changed(index, leaves),
            },
            leaf: r.chunk,
            born: r.chunks > 0,
            shadow_only: (only_before != only_after).then_some(only_after),
            old: r.old,
        }
    }

    /// Leaf `c` (a chunk number) was allocated: its [`Leaf`] starts afresh.
    #[cold]
    fn leaf_born(&mut self, c: usize) {
        if self.leaves.len() <= c {
            self.leaves.resize(c + 1, Leaf::default());
        }
        self.leaves[c] = Leaf::default();
    }

    /// Delete leaf `leaf` (index >> 6), which holds only shadow entries, with them
    /// (`xa_delete_node` from `shadow_lru_isolate`); its [`Leaf`] must be off the list already.
    /// Returns by how many nodes the xarray shrank (the leaf and any interior node it was the
    /// last child of).
    pub fn delete_shadow_leaf(&mut self, leaf: u64) -> i64 {
        let mut nodes = 0;
        for index in leaf << CHUNK_SHIFT..(leaf + 1) << CHUNK_SHIFT {
            let r = self.slots.replace(index, Slot::Empty);
            if r.chunk == NO_CHUNK {
                break;
            }
            debug_assert!(
                matches!(r.old, Slot::Shadow(_) | Slot::Empty),
                "a shadow-only leaf holds a folio"
            );
            if matches!(r.old, Slot::Shadow(_)) {
                self.leaves[r.chunk as usize].values -= 1;
            }
            if r.chunks < 0 {
                debug_assert_eq!(self.leaves[r.chunk as usize].lru, NOT_LISTED);
                nodes += self.xa_changed(index, r.chunks);
                break;
            }
        }
        nodes
    }

    /// The slot table gained (`leaves` 1) or lost (-1) the leaf of `index`: the leaf and the
    /// interior nodes that came or went with it.
    #[cold]
    fn xa_changed(&mut self, index: u64, leaves: i64) -> i64 {
        let before = self.xa.nodes();
        if leaves > 0 {
            self.xa.max_index = self.xa.max_index.max(index);
        }
        self.xa.leaf_changed(index >> CHUNK_SHIFT, leaves > 0);
        leaves + self.xa.nodes() as i64 - before as i64
    }

    /// Nodes of the file's xarray (`i_pages`): its leaves, one per 64 slots holding a page or a
    /// shadow entry, and the interior nodes above them ([`XaUpper`]). A file whose only entry is
    /// at index 0 counts one node, where the kernel keeps that entry in the tree's head.
    pub fn xa_nodes(&self) -> u64 {
        self.slots.nr_chunks() as u64 + self.xa.nodes()
    }
}

/// The shadow-node list (`workingset.c`'s `shadow_nodes`, a memcg- and NUMA-aware `list_lru`):
/// per lruvec (the memcg a leaf is charged to × the node of its memory), the xarray leaves that
/// hold only shadow entries, oldest first (`workingset_update_node` adds at the tail, the
/// shrinker's walk takes from the head), and the shadow shrinker's deferred work
/// (`nr_deferred`). The shrinker is `reclaim::shrinker`.
#[derive(Clone, Debug, Default)]
pub struct ShadowLru {
    entries: Vec<ShadowEntry>,
    free: Vec<u32>,
    lists: Vec<ShadowList>,
    /// Per lruvec, the shadow shrinker's `nr_deferred`.
    pub deferred: Vec<i64>,
}

/// A leaf on the shadow-node list.
#[derive(Clone, Copy, Debug)]
struct ShadowEntry {
    file: u32,
    leaf: u32,
    chunk: u32,
    list: u32,
    prev: u32,
    next: u32,
}

/// One list's ends and length.
#[derive(Clone, Copy, Debug)]
struct ShadowList {
    head: u32,
    tail: u32,
    len: u64,
}

impl Default for ShadowList {
    fn default() -> Self {
        ShadowList {
            head: NOT_LISTED,
            tail: NOT_LISTED,
            len: 0,
        }
    }
}

/// A leaf taken off the shadow-node list: its file, index >> 6 and chunk number.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ShadowLeaf {
    /// The file.
    pub file: u32,
    /// The leaf's first index >> 6.
    pub leaf: u64,
    /// Its chunk number in the file's slot table.
    pub chunk: u32,
}

impl ShadowLru {
    /// Make room for `lruvecs` lists.
    #[inline]
    pub fn ensure(&mut self, lruvecs: usize) {
        if self.lists.len() < lruvecs {
            self.grow(lruvecs);
        }
    }

    #[cold]
    fn grow(&mut self, lruvecs: usize) {
        self.lists.resize(lruvecs, ShadowList::default());
        self.deferred.resize(lruvecs, 0);
    }

    /// Leaves on lruvec `lv`'s list (`list_lru_shrink_count`).
    #[inline]
    pub fn len(&self, lv: usize) -> u64 {
        self.lists.get(lv).map_or(0, |l| l.len)
    }

    /// Leaves on every list.
    pub fn total(&self) -> u64 {
        self.lists.iter().map(|l| l.len).sum()
    }

    /// Add a leaf at the tail of lruvec `lv`'s list (`list_lru_add_obj`); returns its entry.
    pub fn add(&mut self, lv: usize, l: ShadowLeaf) -> u32 {
        let tail = self.lists[lv].tail;
        let e = ShadowEntry {
            file: l.file,
            leaf: l.leaf as u32,
            chunk: l.chunk,
            list: lv as u32,
            prev: tail,
            next: NOT_LISTED,
        };
        let h = match self.free.pop() {
            Some(h) => {
                self.entries[h as usize] = e;
                h
            }
            None => {
                self.entries.push(e);
                (self.entries.len() - 1) as u32
            }
        };
        let list = &mut self.lists[lv];
        if tail == NOT_LISTED {
            list.head = h;
        } else {
            self.entries[tail as usize].next = h;
        }
        list.tail = h;
        list.len += 1;
        h
    }

    /// Take entry `h` off its list (`list_lru_del_obj`, `list_lru_isolate`); returns its lruvec.
    pub fn del(&mut self, h: u32) -> usize {
        let e = self.entries[h as usize];
        let list = &mut self.lists[e.list as usize];
        if e.prev == NOT_LISTED {
            list.head = e.next;
        } else {
            self.entries[e.prev as usize].next = e.next;
        }
        if e.next == NOT_LISTED {
            list.tail = e.prev;
        } else {
            self.entries[e.next as usize].prev = e.prev;
        }
        list.len -= 1;
        self.free.push(h);
        e.list as usize
    }

    /// The oldest leaf on lruvec `lv`'s list and its entry, if any.
    pub fn oldest(&self, lv: usize) -> Option<(u32, ShadowLeaf)> {
        let h = self.lists.get(lv)?.head;
        (h != NOT_LISTED).then(|| {
            let e = self.entries[h as usize];
            (
                h,
                ShadowLeaf {
                    file: e.file,
                    leaf: e.leaf as u64,
                    chunk: e.chunk,
                },
            )
        })
    }

    /// Bytes held.
    pub fn bytes(&self) -> u64 {
        (self.entries.capacity() * std::mem::size_of::<ShadowEntry>()
            + self.free.capacity() * 4
            + self.lists.capacity() * std::mem::size_of::<ShadowList>()
            + self.deferred.capacity() * 8) as u64
    }
}

/// Entries per chunk (leaf) of a [`Radix`] (log2): 64, as in an xarray node.
pub const CHUNK_SHIFT: u32 = 6;
/// Entries per chunk of a [`Radix`].
pub const CHUNK_SLOTS: usize = 1 << CHUNK_SHIFT;
/// Chunks per directory block of a [`Radix`] (log2).
pub const DIR_SHIFT: u32 = 9;
/// Chunks per directory block of a [`Radix`]: a block covers 32,768 indices (128 MiB of file).
pub const DIR_SLOTS: usize = 1 << DIR_SHIFT;
const NO_CHUNK: u32 = u32::MAX;

/// A sparse array indexed by page (a three-level radix tree: a top array, directory blocks of
/// 512 chunk numbers, and chunks of 64 entries, the lower two allocated on first touch), whose
/// absent entries read as `T::default()`: any table keyed by page that must not grow with the key
/// space (the xarray's interior node counts, [`XaUpper`]; a workload's dense renumbering of its
/// keys). The page cache's own slots are [`PageSlots`], whose leaves keep only their entries in use.
///
/// Reading never allocates; writing a non-default value allocates its chunk (and directory block)
/// if needed, the growth point counted in [`Radix::bytes`]; writing the last non-default value of
/// a chunk back to the default frees the chunk for reuse (directory blocks stay). A lookup is
/// three array reads, no hashing.
#[derive(Clone, Debug)]
pub struct Radix<T> {
    /// Per 32,768 indices: the directory block covering them, or `NO_CHUNK`.
    top: Vec<u32>,
    /// Directory blocks: per 64 indices, the chunk holding them, or `NO_CHUNK`.
    dirs: Vec<[u32; DIR_SLOTS]>,
    /// The chunks.
    chunks: Vec<[T; CHUNK_SLOTS]>,
    /// Non-default entries per chunk.
    live: Vec<u8>,
    /// Chunks freed for reuse.
    free: Vec<u32>,
}

/// What [`Radix::replace`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Replaced<T> {
    /// Chunks allocated (1) or freed (-1).
    pub chunks: i64,
    /// The chunk of the entry (freed if its live entries are 0); `u32::MAX` if there was none
    /// and the entry stayed empty.
    pub chunk: u32,
    /// Non-default entries of the chunk after the change.
    pub live: u8,
    /// The entry replaced.
    pub old: T,
}

impl<T> Default for Radix<T> {
    fn default() -> Self {
        Radix {
            top: Vec::new(),
            dirs: Vec::new(),
            chunks: Vec::new(),
            live: Vec::new(),
            free: Vec::new(),
        }
    }
}

impl<T: Copy + Default + PartialEq> Radix<T> {
    /// (top, directory, chunk) positions of `index`.
    #[inline]
    fn split(index: u64) -> (usize, usize, usize) {
        (
            (index >> (CHUNK_SHIFT + DIR_SHIFT)) as usize,
            (index >> CHUNK_SHIFT) as usize & (DIR_SLOTS - 1),
            index as usize & (CHUNK_SLOTS - 1),
        )
    }

    /// The chunk holding `(t, d)`, if any.
    #[inline]
    fn chunk(&self, t: usize, d: usize) -> Option<u32> {
        match self.top.get(t) {
            Some(&b) if b != NO_CHUNK => Some(self.dirs[b as usize][d]).filter(|&c| c != NO_CHUNK),
            _ => None,
        }
    }

    /// The entry at `index`.
    #[inline]
    pub fn get(&self, index: u64) -> T {
        let (t, d, i) = Self::split(index);
        match self.chunk(t, d) {
            Some(c) => self.chunks[c as usize][i],
            None => T::default(),
        }
    }

    /// Ask the CPU to bring the entry at `index` into cache, without waiting for it (a hint with
    /// no effect on any value; nothing when the entry has no chunk).
    #[inline]
    pub fn prefetch(&self, index: u64) {
        let (t, d, i) = Self::split(index);
        if let Some(c) = self.chunk(t, d) {
            if let Some(chunk) = self.chunks.get(c as usize) {
                crate::mm::prefetch(&chunk[i]);
            }
        }
    }

    /// Replace the entry at `index`; returns by how many chunks the table grew (1: the entry's
    /// chunk was allocated) or shrank (-1: its last entry was cleared and the chunk freed).
    #[inline]
    pub fn set(&mut self, index: u64, v: T) -> i64 {
        self.replace(index, v).chunks
    }

    /// [`Radix::set`], telling also the chunk the entry is in, its live entries after the change
    /// and the entry it replaced.
    #[inline(always)]
    pub fn replace(&mut self, index: u64, v: T) -> Replaced<T> {
        let (t, d, i) = Self::split(index);
        let empty = T::default();
        let (c, mut chunks) = match self.chunk(t, d) {
            Some(c) => (c, 0),
            None if v == empty => {
                return Replaced {
                    chunks: 0,
                    chunk: NO_CHUNK,
                    live: 0,
                    old: empty,
                }
            }
            None => (self.alloc_chunk(t, d), 1),
        };
        let e = &mut self.chunks[c as usize][i];
        let old = *e;
        let (was, is) = (old != empty, v != empty);
        *e = v;
        let live = &mut self.live[c as usize];
        if was != is {
            if is {
                *live += 1;
            } else {
                *live -= 1;
                if *live == 0 {
                    let b = self.top[t];
                    self.dirs[b as usize][d] = NO_CHUNK;
                    self.free.push(c);
                    chunks -= 1;
                }
            }
        }
        Replaced {
            chunks,
            chunk: c,
            live: *live,
            old,
        }
    }

    #[cold]
    fn alloc_chunk(&mut self, t: usize, d: usize) -> u32 {
        if self.top.len() <= t {
            self.top.resize(t + 1, NO_CHUNK);
        }
        if self.top[t] == NO_CHUNK {
            self.dirs.push([NO_CHUNK; DIR_SLOTS]);
            self.top[t] = (self.dirs.len() - 1) as u32;
        }
        let c = match self.free.pop() {
            Some(c) => c,
            None => {
                self.chunks.push([T::default(); CHUNK_SLOTS]);
                self.live.push(0);
                (self.chunks.len() - 1) as u32
            }
        };
        self.dirs[self.top[t] as usize][d] = c;
        c
    }

    /// Every non-default entry, by index.
    pub fn iter(&self) -> impl Iterator<Item = (u64, T)> + '_ {
        let empty = T::default();
        self.top
            .iter()
            .enumerate()
            .filter(|(_, &b)| b != NO_CHUNK)
            .flat_map(move |(t, &b)| {
                self.dirs[b as usize]
                    .iter()
                    .enumerate()
                    .filter(|(_, &c)| c != NO_CHUNK)
                    .map(move |(d, &c)| ((t << DIR_SHIFT) + d, c))
            })
            .flat_map(move |(base, c)| {
                self.chunks[c as usize]
                    .iter()
                    .enumerate()
                    .filter(move |(_, &e)| e != empty)
                    .map(move |(i, &e)| (((base << CHUNK_SHIFT) + i) as u64, e))
            })
    }

    /// The chunks in use, by chunk number, with their non-default entries: `(chunk, live)`.
    pub fn chunks_live(&self) -> impl Iterator<Item = (usize, u8)> + '_ {
        // a freed chunk has no live entry left: that is when it is freed
        self.live.iter().copied().enumerate().filter(|&(_, l)| l > 0)
    }

    /// Bytes of one chunk with its count of live entries, as [`Radix::bytes`] counts them.
    pub const CHUNK_BYTES: u64 = (std::mem::size_of::<[T; CHUNK_SLOTS]>() + 1) as u64;

    /// Chunks in use (allocated and not freed).
    pub fn nr_chunks(&self) -> usize {
        self.chunks.len() - self.free.len()
    }

    /// Bytes held (top array, directory blocks, chunks and their counts, in use or free for reuse).
    pub fn bytes(&self) -> u64 {
        (self.top.capacity() * 4
            + self.dirs.capacity() * DIR_SLOTS * 4
            + self.chunks.capacity() * std::mem::size_of::<[T; CHUNK_SLOTS]>()
            + self.live.capacity()
            + self.free.capacity() * 4) as u64
    }
}

/// Folio ids a [`PageSlots`] entry can hold: below this bit, which marks a shadow entry's index
/// in the file's [`ShadowStore`]. A frame id has at most 27 bits (`budget::FRAME_LIMIT`).
const ENTRY_SHADOW: u32 = 1 << 31;
/// The header of a block of the arena that no leaf owns any more: its capacity in the low bits.
const BLOCK_GARBAGE: u32 = 1 << 31;
/// A leaf's block grows by this many entries at a time (16 bytes).
const BLOCK_STEP: u16 = 4;
/// A leaf's block of this many entries is dense: entry `i` is slot `i`'s, read without counting.
const DENSE: u16 = CHUNK_SLOTS as u16;
/// A packed leaf that would hold more entries than this becomes dense.
const DENSE_ABOVE: u16 = 48;
/// A dense leaf left with fewer entries than this is packed again.
const PACKED_BELOW: u16 = 32;

/// Where a leaf of a [`PageSlots`] keeps its entries: which of its 64 slots are in use (`occ`, a
/// bit per slot) and their 4-byte entries in its block of the arena (`off`: the first entry;
/// `cap`: the block's room): packed in slot order (a slot's entry found by counting the map's
/// bits below it) while it has at most `DENSE_ABOVE` entries, or, once it has more, dense, one
/// entry per slot (`cap` 64) until it falls below `PACKED_BELOW`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LeafSlots {
    /// Slots in use, a bit each.
    pub occ: u64,
    /// First entry of its block in the arena.
    pub off: u32,
    /// Entries its block has room for (64: dense).
    pub cap: u16,
    /// Slots in use (`occ`'s bits).
    pub n: u16,
}

impl LeafSlots {
    /// Where slot `i`'s entry is (or would go), as an offset in the arena.
    #[inline(always)]
    fn at(&self, i: u32) -> usize {
        if self.cap == DENSE {
            self.off as usize + i as usize
        } else {
            self.off as usize + (self.occ & ((1u64 << i) - 1)).count_ones() as usize
        }
    }
}

/// The shadow entries' values of a file's page cache, 8 bytes each, in one array that grows by a
/// sixteenth at a time as the high-water mark of shadows grows; a freed value is reused first (its
/// place holds the next free one: no list of its own).
#[derive(Clone, Debug)]
pub struct ShadowStore {
    values: Vec<u64>,
    /// The first free value, or `NO_CHUNK`.
    free: u32,
    /// Values in use.
    used: u32,
}

impl Default for ShadowStore {
    fn default() -> Self {
        ShadowStore {
            values: Vec::new(),
            free: NO_CHUNK,
            used: 0,
        }
    }
}

impl ShadowStore {
    /// The value at `i`.
    #[inline(always)]
    pub fn get(&self, i: u32) -> u64 {
        self.values[i as usize]
    }
    /// Keep `v`; returns its place.
    #[inline(always)]
    fn alloc(&mut self, v: u64) -> u32 {
        self.used += 1;
        if self.free != NO_CHUNK {
            let i = self.free;
            let e = &mut self.values[i as usize];
            self.free = *e as u32;
            *e = v;
            i
        } else {
            self.push(v)
        }
    }
    #[cold]
    fn push(&mut self, v: u64) -> u32 {
        if self.values.len() == self.values.capacity() {
            self.values.reserve_exact((self.values.len() / 16).max(512));
        }
        self.values.push(v);
        (self.values.len() - 1) as u32
    }
    /// Give back the value at `i`.
    #[inline(always)]
    fn free(&mut self, i: u32) {
        self.used -= 1;
        self.values[i as usize] = u64::from(self.free);
        self.free = i;
    }
    /// Values in use.
    pub fn len(&self) -> u64 {
        u64::from(self.used)
    }
    /// Whether it holds no value.
    pub fn is_empty(&self) -> bool {
        self.used == 0
    }
    /// Bytes held (the array, its values in use or free, and its unused room).
    pub fn bytes(&self) -> u64 {
        (self.values.capacity() * 8) as u64
    }
}

/// What [`PageSlots::replace`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SlotsReplaced {
    /// Leaves allocated (1) or freed (-1).
    pub chunks: i64,
    /// The leaf (its number in the table) of the slot, freed if its live entries are 0;
    /// `u32::MAX` if there was none and the slot stayed empty.
    pub chunk: u32,
    /// Entries in use in the leaf after the change.
    pub live: u8,
    /// The slot replaced.
    pub old: Slot,
}

/// The slots of a file's page cache: a sparse table by page index, like [`Radix`] (a top array,
/// directory blocks, leaves of 64 slots allocated on first touch and freed when emptied; no
/// hashing), whose leaves hold only their slots in use: a 64-bit map of them and a 4-byte entry
/// each (a folio id, or the place of a shadow entry's 8-byte value in the file's
/// [`ShadowStore`]), packed in slot order in a block of one arena, found by counting the map's
/// bits below the slot. A resident page costs its 4-byte entry (and its leaf's share of the map
/// and block rounding), whatever the leaf's other slots hold; a shadow entry 4 + 8.
///
/// A packed leaf whose block is full moves to a block 16 bytes larger at the arena's end (in place
/// when it is the last), and past 48 entries to a dense block of 64, where a slot's entry is read
/// without counting ([`LeafSlots`]); the blocks left behind are garbage, reused by leaves that
/// need a block of their size, until the arena is compacted, in place and in order, once they are
/// an eighth of it. The arena grows by a sixteenth at a time. Directory
/// blocks are sized to the file (64 indices per leaf number, up to 512 per block: a 16 MiB file
/// has one block of 64).
#[derive(Clone, Debug)]
pub struct PageSlots {
    /// Leaves per directory block (log2).
    dir_shift: u32,
    /// `index >> top_shift` is an index's place in `top` (`CHUNK_SHIFT + dir_shift`).
    top_shift: u32,
    /// Mask of a leaf's place in its directory block.
    dir_mask: usize,
    /// Per directory block's worth of indices: its first leaf number in `dirs`, or `NO_CHUNK`.
    top: Vec<u32>,
    /// Directory blocks, one after the other: per 64 indices, the leaf, or `NO_CHUNK`.
    dirs: Vec<u32>,
    /// The leaves, by number.
    leaves: Vec<LeafSlots>,
    /// Leaf numbers freed for reuse.
    free: Vec<u32>,
    /// Blocks of entries, each a header (its leaf's number, or `BLOCK_GARBAGE` with its
    /// capacity) then its entries.
    arena: Vec<u32>,
    /// Words of the arena in garbage blocks.
    garbage: usize,
    /// Per block size (`cap / BLOCK_STEP`), the first garbage block of that size, its entries'
    /// offset (the next one's in its first entry), or `NO_CHUNK`: reused before the arena grows.
    spare: [u32; CHUNK_SLOTS / BLOCK_STEP as usize + 1],
    /// Shadow entries' values.
    pub shadows: ShadowStore,
}

impl Default for PageSlots {
    fn default() -> Self {
        PageSlots::for_pages(1 << (CHUNK_SHIFT + DIR_SHIFT))
    }
}

impl PageSlots {
    /// A table for a file of `pages` pages (it may grow past them; only the directory blocks'
    /// size is chosen from it).
    pub fn for_pages(pages: u64) -> Self {
        let leaves = pages.div_ceil(CHUNK_SLOTS as u64).max(1);
        let dir_shift = (64 - (leaves - 1).leading_zeros()).min(DIR_SHIFT);
        PageSlots {
            dir_shift,
            top_shift: CHUNK_SHIFT + dir_shift,
            dir_mask: (1 << dir_shift) - 1,
            top: Vec::new(),
            dirs: Vec::new(),
            leaves: Vec::new(),
            free: Vec::new(),
            arena: Vec::new(),
            garbage: 0,
            spare: [NO_CHUNK; CHUNK_SLOTS / BLOCK_STEP as usize + 1],
            shadows: ShadowStore::default(),
        }
    }

    /// (top, directory, slot) positions of `index`.
    #[inline(always)]
    fn split(&self, index: u64) -> (usize, usize, u32) {
        (
            (index >> self.top_shift) as usize,
            (index >> CHUNK_SHIFT) as usize & self.dir_mask,
            index as u32 & (CHUNK_SLOTS as u32 - 1),
        )
    }

    /// The leaf holding `(t, d)`, if any.
    #[inline(always)]
    fn leaf(&self, t: usize, d: usize) -> Option<u32> {
        match self.top.get(t) {
            Some(&b) if b != NO_CHUNK => Some(self.dirs[b as usize + d]).filter(|&c| c != NO_CHUNK),
            _ => None,
        }
    }

    #[inline(always)]
    fn decode(&self, e: u32) -> Slot {
        if e & ENTRY_SHADOW == 0 {
            Slot::Folio(e)
        } else {
            Slot::Shadow(self.shadows.get(e & !ENTRY_SHADOW))
        }
    }

    /// The slot at `index`.
    #[inline(always)]
    pub fn get(&self, index: u64) -> Slot {
        let (t, d, i) = self.split(index);
        let Some(l) = self.leaf(t, d) else {
            return Slot::Empty;
        };
        let leaf = &self.leaves[l as usize];
        if leaf.occ & (1u64 << i) == 0 {
            return Slot::Empty;
        }
        self.decode(self.arena[leaf.at(i)])
    }

    /// Ask the CPU to bring the entry of `index` into cache, without waiting for it (a hint with
    /// no effect on any value; nothing when the slot is empty).
    #[inline]
    pub fn prefetch(&self, index: u64) {
        let (t, d, i) = self.split(index);
        if let Some(l) = self.leaf(t, d) {
            if let Some(l) = self.leaves.get(l as usize) {
                if l.occ & (1u64 << i) != 0 {
                    if let Some(e) = self.arena.get(l.at(i)) {
                        crate::mm::prefetch(e);
                    }
                }
            }
        }
    }

    /// The third prefetching stage, after [`PageSlots::prefetch`]: the folio the slot of `index`
    /// holds, for the caller to prefetch; when it holds a shadow entry instead, its value is
    /// brought into cache here (a refault reads it). Changes nothing.
    #[inline]
    pub fn prefetch_shadow_or_folio(&self, index: u64) -> Option<u32> {
        let (t, d, i) = self.split(index);
        let l = self.leaves.get(self.leaf(t, d)? as usize)?;
        if l.occ & (1u64 << i) == 0 {
            return None;
        }
        let e = *self.arena.get(l.at(i))?;
        if e & ENTRY_SHADOW == 0 {
            return Some(e);
        }
        if let Some(v) = self.shadows.values.get((e & !ENTRY_SHADOW) as usize) {
            crate::mm::prefetch(v);
        }
        None
    }

    /// Ask the CPU to bring the record of the leaf of `index` into cache (the first of two
    /// prefetching stages: [`PageSlots::prefetch`] then reads it to find the entry).
    #[inline]
    pub fn prefetch_leaf(&self, index: u64) {
        let (t, d, _) = self.split(index);
        if let Some(l) = self.leaf(t, d) {
            if let Some(l) = self.leaves.get(l as usize) {
                crate::mm::prefetch(l);
            }
        }
    }

    /// Replace the slot at `index` with `s`: what that did (see [`SlotsReplaced`]).
    #[inline(always)]
    pub fn replace(&mut self, index: u64, s: Slot) -> SlotsReplaced {
        let (t, d, i) = self.split(index);
        let (l, mut chunks) = match self.leaf(t, d) {
            Some(l) => (l, 0),
            None if s == Slot::Empty => {
                return SlotsReplaced {
                    chunks: 0,
                    chunk: NO_CHUNK,
                    live: 0,
                    old: Slot::Empty,
                }
            }
            None => (self.alloc_leaf(t, d), 1),
        };
        let leaf = self.leaves[l as usize];
        let bit = 1u64 << i;
        let at = leaf.at(i);
        let old = if leaf.occ & bit != 0 {
            let e = self.arena[at];
            if e & ENTRY_SHADOW != 0 {
                let v = self.shadows.get(e & !ENTRY_SHADOW);
                if let Slot::Shadow(n) = s {
                    // a shadow over a shadow keeps its place in the store
                    self.shadows.values[(e & !ENTRY_SHADOW) as usize] = n;
                    return SlotsReplaced {
                        chunks,
                        chunk: l,
                        live: leaf.n as u8,
                        old: Slot::Shadow(v),
                    };
                }
                self.shadows.free(e & !ENTRY_SHADOW);
                Slot::Shadow(v)
            } else {
                Slot::Folio(e)
            }
        } else {
            Slot::Empty
        };
        let new = match s {
            Slot::Empty => None,
            Slot::Folio(f) => {
                debug_assert!(f & ENTRY_SHADOW == 0, "folio id {f} too large for a page-cache entry");
                Some(f)
            }
            Slot::Shadow(v) => Some(ENTRY_SHADOW | self.shadows.alloc(v)),
        };
        let live = match (old != Slot::Empty, new) {
            (true, Some(e)) => {
                self.arena[at] = e;
                leaf.n
            }
            (false, Some(e)) => self.insert(l, i, e),
            (true, None) => {
                let n = self.remove(l, i);
                if n == 0 {
                    self.free_leaf(l, t, d);
                    chunks -= 1;
                }
                n
            }
            (false, None) => leaf.n,
        };
        SlotsReplaced {
            chunks,
            chunk: l,
            live: live as u8,
            old,
        }
    }

    /// Put entry `e` in leaf `l` at slot `i` (empty until now); returns its entries after.
    #[inline]
    fn insert(&mut self, l: u32, i: u32, e: u32) -> u16 {
        let leaf = self.leaves[l as usize];
        if leaf.cap != DENSE && leaf.n == leaf.cap {
            self.grow_block(l);
        }
        let leaf = &mut self.leaves[l as usize];
        let at = leaf.at(i);
        leaf.occ |= 1u64 << i;
        leaf.n += 1;
        let n = leaf.n;
        if leaf.cap != DENSE {
            let end = leaf.off as usize + n as usize - 1;
            self.arena.copy_within(at..end, at + 1);
        }
        self.arena[at] = e;
        n
    }

    /// Take slot `i`'s entry out of leaf `l`; returns its entries after.
    #[inline]
    fn remove(&mut self, l: u32, i: u32) -> u16 {
        let leaf = &mut self.leaves[l as usize];
        let at = leaf.at(i);
        leaf.occ &= !(1u64 << i);
        leaf.n -= 1;
        let n = leaf.n;
        if leaf.cap != DENSE {
            let end = leaf.off as usize + n as usize + 1;
            self.arena.copy_within(at + 1..end, at);
        } else if n < PACKED_BELOW && n > 0 {
            self.pack(l);
        }
        n
    }

    /// Give leaf `l`, whose packed block is full, a block [`BLOCK_STEP`] entries larger (or a
    /// dense one past [`DENSE_ABOVE`]), its entries moved there.
    #[cold]
    fn grow_block(&mut self, l: u32) {
        let leaf = self.leaves[l as usize];
        if leaf.cap >= DENSE_ABOVE {
            self.move_block(l, DENSE);
            return;
        }
        let cap = leaf.cap + BLOCK_STEP;
        if leaf.cap > 0 && leaf.off as usize + leaf.cap as usize == self.arena.len() {
            // the last block: grow it where it is
            self.reserve(BLOCK_STEP as usize);
            self.arena.resize(self.arena.len() + BLOCK_STEP as usize, 0);
            self.leaves[l as usize].cap = cap;
            return;
        }
        self.move_block(l, cap);
    }

    /// A dense leaf `l` with few entries left: packed into a block just large enough.
    #[cold]
    fn pack(&mut self, l: u32) {
        let n = self.leaves[l as usize].n;
        self.move_block(l, n.div_ceil(BLOCK_STEP) * BLOCK_STEP);
    }

    /// Move leaf `l`'s entries to a new block of `cap` entries (a garbage block of that size if
    /// there is one, else at the arena's end), dense if `cap` is [`DENSE`], else packed; its old
    /// block becomes garbage.
    fn move_block(&mut self, l: u32, cap: u16) {
        let class = (cap / BLOCK_STEP) as usize;
        let off = if self.spare[class] != NO_CHUNK {
            let off = self.spare[class] as usize;
            self.spare[class] = self.arena[off];
            self.arena[off - 1] = l;
            self.garbage -= 1 + cap as usize;
            off
        } else {
            if self.garbage > 64 && self.garbage * 8 > self.arena.len() {
                self.compact();
            }
            self.reserve(1 + cap as usize);
            let off = self.arena.len() + 1;
            self.arena.push(l);
            self.arena.resize(off + cap as usize, 0);
            off
        };
        let leaf = self.leaves[l as usize];
        if leaf.cap > 0 {
            let from = leaf.off as usize;
            if leaf.cap == DENSE || cap == DENSE {
                // entry by entry, in slot order: packed from dense or dense from packed
                let (mut occ, mut r) = (leaf.occ, 0usize);
                while occ != 0 {
                    let i = occ.trailing_zeros() as usize;
                    occ &= occ - 1;
                    let (src, dst) = match (leaf.cap == DENSE, cap == DENSE) {
                        (true, false) => (from + i, off + r),
                        (false, true) => (from + r, off + i),
                        _ => (from + r, off + r),
                    };
                    self.arena[dst] = self.arena[src];
                    r += 1;
                }
            } else {
                self.arena.copy_within(from..from + leaf.n as usize, off);
            }
            self.discard(from, leaf.cap);
        }
        let leaf = &mut self.leaves[l as usize];
        leaf.off = off as u32;
        leaf.cap = cap;
    }

    /// The block whose entries start at `off`, of `cap` entries, is garbage from now on: kept for
    /// reuse by a leaf that needs a block of its size.
    fn discard(&mut self, off: usize, cap: u16) {
        let class = (cap / BLOCK_STEP) as usize;
        self.arena[off - 1] = BLOCK_GARBAGE | u32::from(cap);
        self.arena[off] = self.spare[class];
        self.spare[class] = off as u32;
        self.garbage += 1 + cap as usize;
    }

    /// Room for `n` more words in the arena, growing it by a sixteenth (not doubling).
    #[inline]
    fn reserve(&mut self, n: usize) {
        if self.arena.capacity() - self.arena.len() < n {
            self.arena.reserve_exact(n.max(self.arena.len() / 16).max(256));
        }
    }

    /// Move every leaf's block down over the garbage, in arena order.
    #[cold]
    fn compact(&mut self) {
        let (mut r, mut w) = (0, 0);
        while r < self.arena.len() {
            let h = self.arena[r];
            if h & BLOCK_GARBAGE != 0 {
                r += 1 + (h & !BLOCK_GARBAGE) as usize;
                continue;
            }
            let cap = self.leaves[h as usize].cap as usize;
            self.arena.copy_within(r..r + 1 + cap, w);
            self.leaves[h as usize].off = (w + 1) as u32;
            r += 1 + cap;
            w += 1 + cap;
        }
        self.arena.truncate(w);
        self.garbage = 0;
        self.spare = [NO_CHUNK; CHUNK_SLOTS / BLOCK_STEP as usize + 1];
    }

    #[cold]
    fn alloc_leaf(&mut self, t: usize, d: usize) -> u32 {
        if self.top.len() <= t {
            self.top.resize(t + 1, NO_CHUNK);
        }
        if self.top[t] == NO_CHUNK {
            self.top[t] = self.dirs.len() as u32;
            self.dirs.resize(self.dirs.len() + (1 << self.dir_shift), NO_CHUNK);
        }
        let l = match self.free.pop() {
            Some(l) => l,
            None => {
                self.leaves.push(LeafSlots::default());
                (self.leaves.len() - 1) as u32
            }
        };
        self.dirs[self.top[t] as usize + d] = l;
        l
    }

    /// Leaf `l` holds nothing any more: its block becomes garbage and its number free.
    #[cold]
    fn free_leaf(&mut self, l: u32, t: usize, d: usize) {
        let leaf = std::mem::take(&mut self.leaves[l as usize]);
        if leaf.cap > 0 {
            self.discard(leaf.off as usize, leaf.cap);
        }
        self.dirs[self.top[t] as usize + d] = NO_CHUNK;
        self.free.push(l);
    }

    /// Every slot in use, by index.
    pub fn iter(&self) -> impl Iterator<Item = (u64, Slot)> + '_ {
        let per = 1usize << self.dir_shift;
        self.top
            .iter()
            .enumerate()
            .filter(|(_, &b)| b != NO_CHUNK)
            .flat_map(move |(t, &b)| {
                self.dirs[b as usize..b as usize + per]
                    .iter()
                    .enumerate()
                    .filter(|(_, &c)| c != NO_CHUNK)
                    .map(move |(d, &c)| (((t << self.dir_shift) + d) as u64, c))
            })
            .flat_map(move |(base, c)| {
                let leaf = self.leaves[c as usize];
                (0..CHUNK_SLOTS as u32)
                    .filter(move |&i| leaf.occ & (1 << i) != 0)
                    .map(move |i| {
                        let index = (base << CHUNK_SHIFT) + u64::from(i);
                        (index, self.get(index))
                    })
            })
    }

    /// The leaves in use, by number, with their entries in use: `(leaf, live)`.
    pub fn chunks_live(&self) -> impl Iterator<Item = (usize, u8)> + '_ {
        self.leaves
            .iter()
            .map(|l| l.n as u8)
            .enumerate()
            .filter(|&(_, n)| n > 0)
    }

    /// Bytes of leaf `l`'s own state: its block (header and room) and its [`LeafSlots`].
    pub fn leaf_bytes(&self, l: usize) -> u64 {
        let cap = self.leaves[l].cap as u64;
        (1 + cap) * 4 + std::mem::size_of::<LeafSlots>() as u64
    }

    /// Leaves in use (allocated and not freed).
    pub fn nr_chunks(&self) -> usize {
        self.leaves.len() - self.free.len()
    }

    /// Bytes of the arena that no leaf's block holds: garbage blocks and room not yet used.
    pub fn arena_overhead(&self) -> u64 {
        let blocks: u64 = self.chunks_live().map(|(l, _)| 1 + u64::from(self.leaves[l].cap)).sum();
        (self.arena.capacity() as u64 - blocks) * 4
    }

    /// Bytes held: top array, directory blocks, leaves, the arena (in use, garbage and room),
    /// free leaf numbers and the shadow store.
    pub fn bytes(&self) -> u64 {
        (self.top.capacity() * 4
            + self.dirs.capacity() * 4
            + self.leaves.capacity() * std::mem::size_of::<LeafSlots>()
            + self.free.capacity() * 4
            + self.arena.capacity() * 4) as u64
            + self.shadows.bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn slot_roundtrip(f in any::<u32>(), v in 0u64..=SHADOW_MASK) {
            for s in [Slot::Empty, Slot::Folio(f), Slot::Shadow(v)] {
                prop_assert_eq!(PackedSlot::pack(s).get(), s);
                prop_assert_eq!(PackedSlot::pack(s).folio_extra(), 0);
            }
            // a folio entry's extra bits (the swap cache's rmap root) leave the folio and the tags
            let x = (v as u32) & FOLIO_EXTRA_MAX;
            for extra in [0, 1, x, FOLIO_EXTRA_MAX] {
                let p = PackedSlot::pack_folio_with(f, extra);
                prop_assert_eq!(p.get(), Slot::Folio(f));
                prop_assert!(!p.is_shadow());
                prop_assert_eq!(p.folio_extra(), extra);
            }
        }

        /// The sparse table behaves as a map from index to slot (absent = empty), through
        /// inserts, shadow replacements and deletes that free and reuse chunks.
        #[test]
        fn slot_table_matches_a_map(ops in proptest::collection::vec(
            (0u64..5_000, 0u8..3, any::<u32>(), 0u64..1_000), 0..400)
        ) {
            let mut t = Radix::<PackedSlot>::default();
            let mut model = std::collections::BTreeMap::new();
            for (index, kind, f, v) in ops {
                // mostly a few indices, so that slots are replaced and chunks emptied
                // (and a third spread over several directory blocks)
                let index = if index % 3 == 0 { index * 50 } else { index % 40 + (index % 2) * 1024 };
                let s = match kind {
                    0 => Slot::Empty,
                    1 => Slot::Folio(f),
                    _ => Slot::Shadow(v),
                };
                t.set(index, PackedSlot::pack(s));
                if s == Slot::Empty {
                    model.remove(&index);
                } else {
                    model.insert(index, s);
                }
                prop_assert_eq!(t.get(index).get(), s);
                let probe = (index * 7 + 3) % 300_000;
                prop_assert_eq!(t.get(probe).get(), model.get(&probe).copied().unwrap_or(Slot::Empty));
            }
            let all: Vec<(u64, Slot)> = t.iter().map(|(i, p)| (i, p.get())).collect();
            let want: Vec<(u64, Slot)> = model.iter().map(|(&i, &s)| (i, s)).collect();
            prop_assert_eq!(all, want);
            let chunks: std::collections::BTreeSet<u64> = model.keys().map(|i| i >> CHUNK_SHIFT).collect();
            prop_assert_eq!(t.nr_chunks(), chunks.len(), "a chunk lives while it holds a slot");
        }
    }

    proptest! {
        /// The page cache's compact leaves behave as a map from index to slot (absent = empty)
        /// through inserts (growing and moving blocks), replacements of every kind and deletes
        /// (freeing leaves and compacting the arena), over files of several sizes (directory
        /// blocks of 1 to 512 leaves); a shadow's value is kept exactly, one store value per
        /// shadow entry, and a leaf lives while it holds a slot.
        #[test]
        fn page_slots_match_a_map(
            pages in prop_oneof![Just(64u64), Just(4096), Just(1 << 20)],
            ops in proptest::collection::vec((0u64..20_000, 0u8..4, 0u32..1 << 27, any::<u64>()), 0..3000)
        ) {
            let mut t = PageSlots::for_pages(pages);
            let mut model = std::collections::BTreeMap::new();
            for (k, (index, kind, f, v)) in ops.into_iter().enumerate() {
                // dense runs of a few leaves (blocks grow, garbage piles up), and far indices
                let index = match index % 4 {
                    0 => index * 37 % (pages * 4),
                    _ => index % 700,
                };
                let s = match kind {
                    0 => Slot::Empty,
                    1 => Slot::Folio(f),
                    _ => Slot::Shadow(v & SHADOW_MASK),
                };
                let old = model.get(&index).copied().unwrap_or(Slot::Empty);
                let r = t.replace(index, s);
                prop_assert_eq!(r.old, old);
                if s == Slot::Empty {
                    model.remove(&index);
                } else {
                    model.insert(index, s);
                }
                let in_leaf = model.keys().filter(|&&i| i >> CHUNK_SHIFT == index >> CHUNK_SHIFT).count();
                if r.chunk != NO_CHUNK {
                    prop_assert_eq!(r.live as usize, in_leaf);
                }
                prop_assert_eq!(t.get(index), s);
                let probe = (index * 7 + k as u64) % 800;
                prop_assert_eq!(t.get(probe), model.get(&probe).copied().unwrap_or(Slot::Empty));
            }
            let all: Vec<(u64, Slot)> = t.iter().collect();
            let want: Vec<(u64, Slot)> = model.iter().map(|(&i, &s)| (i, s)).collect();
            prop_assert_eq!(all, want);
            let leaves: std::collections::BTreeSet<u64> = model.keys().map(|i| i >> CHUNK_SHIFT).collect();
            prop_assert_eq!(t.nr_chunks(), leaves.len(), "a leaf lives while it holds a slot");
            let shadows = model.values().filter(|s| matches!(s, Slot::Shadow(_))).count() as u64;
            prop_assert_eq!(t.shadows.len(), shadows);
            let live: u64 = t.chunks_live().map(|(_, n)| u64::from(n)).sum();
            prop_assert_eq!(live, model.len() as u64);
        }
    }

    /// The page cache's per-leaf records stay small: a resident page's share of its leaf's
    /// [`LeafSlots`] and [`Leaf`] (24 bytes) is under a byte once the leaf holds 24 entries.
    #[test]
    fn page_cache_record_sizes() {
        assert_eq!(std::mem::size_of::<LeafSlots>(), 16);
        assert_eq!(std::mem::size_of::<Leaf>(), 8);
        // a 4-byte entry per slot in use (a folio id or a shadow value's place)
        assert_eq!(ENTRY_SHADOW, 1 << 31);
        assert!(
            crate::budget::FRAME_LIMIT <= u64::from(ENTRY_SHADOW),
            "every frame id fits an entry"
        );
    }

    /// A leaf goes from packed to dense as it fills past 48 entries and back once fewer than 32
    /// are left, keeping every entry; a neighbour leaf grown meanwhile keeps its own.
    #[test]
    fn page_slots_leaf_packs_and_unpacks() {
        let mut t = PageSlots::for_pages(1 << 12);
        let order: Vec<u64> = (0..64).map(|k| k * 37 % 64).collect();
        for (k, &i) in order.iter().enumerate() {
            t.replace(
                i,
                if k % 3 == 0 {
                    Slot::Shadow(i * 1000)
                } else {
                    Slot::Folio(i as u32)
                },
            );
            t.replace(64 + i, Slot::Folio(7));
            let leaf = t.leaves[t.leaf(0, 0).unwrap() as usize];
            assert_eq!(leaf.cap == DENSE, k + 1 > DENSE_ABOVE as usize, "{k}");
        }
        let want = |i: u64| {
            if order.iter().position(|&j| j == i).unwrap() % 3 == 0 {
                Slot::Shadow(i * 1000)
            } else {
                Slot::Folio(i as u32)
            }
        };
        for i in 0..64 {
            assert_eq!(t.get(i), want(i));
            assert_eq!(t.get(64 + i), Slot::Folio(7));
        }
        for i in 0..40 {
            let r = t.replace(i, Slot::Empty);
            assert_eq!(r.old, want(i));
            assert_eq!(r.live as u64, 63 - i);
        }
        let leaf = t.leaves[t.leaf(0, 0).unwrap() as usize];
        assert_ne!(leaf.cap, DENSE, "24 entries left: packed again");
        for i in 40..64 {
            assert_eq!(t.get(i), want(i));
        }
        assert_eq!(
            t.shadows.len(),
            (40..64).filter(|&i| matches!(want(i), Slot::Shadow(_))).count() as u64
        );
        for i in 40..64 {
            t.replace(i, Slot::Empty);
        }
        assert_eq!(t.nr_chunks(), 1, "the emptied leaf is freed, its neighbour stays");
        assert!(t.shadows.is_empty());
    }

    /// A resident page costs its 4-byte entry and its share of the leaf's map and block, however
    /// sparse its leaf: a whole file's worth of folios in one slot of every second leaf, or in
    /// every slot, stays under 5 bytes a page besides the directory.
    #[test]
    fn page_slots_cost_per_entry() {
        for stride in [1u64, 2, 3, 64 + 5] {
            let mut t = PageSlots::for_pages(1 << 20);
            let mut n = 0;
            for i in (0..1u64 << 20).step_by(stride as usize) {
                t.replace(i, Slot::Folio(i as u32));
                n += 1;
            }
            let leaves = t.nr_chunks() as u64;
            let bytes = t.bytes() - (t.top.capacity() as u64 + t.dirs.capacity() as u64) * 4;
            let per_leaf_fixed = 4 + std::mem::size_of::<LeafSlots>() as u64;
            assert!(
                bytes <= n * 4 * 9 / 8 + leaves * (per_leaf_fixed + BLOCK_STEP as u64 * 4) + 4096 * 4,
                "stride {stride}: {bytes} bytes for {n} entries in {leaves} leaves"
            );
            assert_eq!(t.get(0), Slot::Folio(0));
        }
    }

    proptest! {
        /// `set_slot` reports exactly the leaves that come to hold only shadows and those that
        /// stop, so that the shadow-node list built from its reports always holds the leaves
        /// with shadows and no folio, oldest first; deleting the oldest of them
        /// (`delete_shadow_leaf`) removes its shadows and frees its nodes.
        #[test]
        fn shadow_node_list_follows_the_leaves(ops in proptest::collection::vec(
            (0u64..400, 0u8..3, 0u8..4), 0..600)
        ) {
            let mut f = File::new("f", 1 << 16, 32, Advice::Normal);
            let mut lru = ShadowLru::default();
            lru.ensure(1);
            let mut model = std::collections::BTreeMap::new();
            let mut order: Vec<u64> = vec![]; // listed leaves, oldest first
            for (index, kind, reclaim) in ops {
                if reclaim == 0 {
                    if let Some((h, l)) = lru.oldest(0) {
                        prop_assert_eq!(Some(&l.leaf), order.first());
                        lru.del(h);
                        order.remove(0);
                        f.leaves[l.chunk as usize].lru = NOT_LISTED;
                        let before = f.xa_nodes() as i64;
                        let freed = f.delete_shadow_leaf(l.leaf);
                        prop_assert_eq!(f.xa_nodes() as i64, before + freed);
                        prop_assert!(freed <= -1, "the leaf itself goes");
                        model.retain(|&i, _| i >> CHUNK_SHIFT != l.leaf);
                    }
                    continue;
                }
                let index = index * 5 % 1200;
                let s = match kind {
                    0 => Slot::Empty,
                    1 => Slot::Folio(index as u32),
                    _ => Slot::Shadow(index),
                };
                let ch = f.set_slot(index, s);
                if s == Slot::Empty {
                    model.remove(&index);
                } else {
                    model.insert(index, s);
                }
                match ch.shadow_only {
                    Some(true) => {
                        let h = lru.add(0, ShadowLeaf { file: 0, leaf: index >> CHUNK_SHIFT, chunk: ch.leaf });
                        f.leaves[ch.leaf as usize].lru = h;
                        order.push(index >> CHUNK_SHIFT);
                    }
                    Some(false) => {
                        lru.del(f.leaves[ch.leaf as usize].lru);
                        f.leaves[ch.leaf as usize].lru = NOT_LISTED;
                        order.retain(|&l| l != index >> CHUNK_SHIFT);
                    }
                    None => {}
                }
                prop_assert_eq!(f.slot(index), s);
            }
            let mut leaves = std::collections::BTreeMap::<u64, (u32, u32)>::new();
            for (&i, s) in &model {
                let e = leaves.entry(i >> CHUNK_SHIFT).or_default();
                match s {
                    Slot::Shadow(_) => e.0 += 1,
                    _ => e.1 += 1,
                }
            }
            let mut want: Vec<u64> = leaves.iter().filter(|(_, &(v, n))| v > 0 && n == 0).map(|(&l, _)| l).collect();
            let mut listed = order.clone();
            listed.sort_unstable();
            want.sort_unstable();
            prop_assert_eq!(listed, want);
            prop_assert_eq!(lru.len(0), order.len() as u64);
            let all: Vec<(u64, Slot)> = f.slots.iter().collect();
            let want_slots: Vec<(u64, Slot)> = model.iter().map(|(&i, &s)| (i, s)).collect();
            prop_assert_eq!(all, want_slots);
        }
    }

    /// The xarray's node count follows its entries: 64-slot leaves and the interior nodes above
    /// them, as many levels as the highest index needs.
    #[test]
    fn xarray_nodes_follow_the_entries() {
        let mut f = File::new("f", 1 << 20, 32, Advice::Normal);
        assert_eq!(f.set_slot(5, Slot::Shadow(1)).nodes, 1, "one leaf, the root");
        assert_eq!(f.set_slot(6, Slot::Shadow(1)).nodes, 0, "same leaf");
        assert_eq!(f.xa_nodes(), 1);
        // index 64: a second leaf and a root above both
        assert_eq!(f.set_slot(64, Slot::Folio(3)).nodes, 2);
        assert_eq!(f.xa_nodes(), 3);
        // index 20,479 (an 80 MiB file's last page): a third level, a level-1 node for it
        assert_eq!(
            f.set_slot(20_479, Slot::Folio(4)).nodes,
            3,
            "a leaf, a level-1 node, a root"
        );
        assert_eq!(f.xa_nodes(), 6, "leaves 0, 1, 319; level-1 nodes 0 and 4; the root");
        assert_eq!(
            f.set_slot(20_479, Slot::Empty).nodes,
            -2,
            "its leaf and level-1 node go"
        );
        assert_eq!(f.xa_nodes(), 4, "the tree keeps its height");
        // a whole 80 MiB file: 320 leaves, 5 level-1 nodes, the root
        let mut g = File::new("g", 20_480, 32, Advice::Normal);
        let grown: i64 = (0..20_480).map(|i| g.set_slot(i, Slot::Shadow(i)).nodes).sum();
        assert_eq!((grown, g.xa_nodes()), (326, 326));
        let shrunk: i64 = (0..20_480).map(|i| g.set_slot(i, Slot::Empty).nodes).sum();
        assert_eq!(shrunk, -326, "every node freed, the root with the last");
    }

    #[test]
    fn reading_a_huge_file_allocates_nothing() {
        let f = File::new("big", 1 << 40, 32, Advice::Normal);
        assert_eq!(f.slot((1 << 40) - 1), Slot::Empty);
        assert_eq!(f.slots.bytes(), 0);
        let mut f = f;
        f.set_slot((1 << 30) + 5, Slot::Shadow(3));
        assert_eq!(f.slots.nr_chunks(), 1);
        f.set_slot((1 << 30) + 5, Slot::Empty);
        assert_eq!(f.slots.nr_chunks(), 0, "the emptied chunk is freed");
    }
}
