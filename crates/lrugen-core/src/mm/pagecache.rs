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
//! Like the xarray, a [`SlotTable`] allocates its nodes on first touch, so its memory follows the
//! pages a run touches, not the size of the file: a top array of one `u32` per 128 MiB of file
//! (grown up to the highest index touched) points to directory blocks of 512 chunk numbers
//! (2 KiB, one per 128 MiB region touched), which point to chunks of 64 slots (512 bytes); a chunk
//! whose slots all become empty again is freed for reuse. A lookup is three array reads, no
//! hashing.

use super::folio::FolioId;

/// A page-cache or swap-cache slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Slot {
    /// Nothing cached and no shadow.
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

/// A packed slot: 8 bytes per file page.
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
    /// free; [`PackedSlot::get`] reads the same `Slot::Folio` as without it. The swap cache keeps
    /// an anon folio's rmap root there (`Swap::cache_root`).
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
    /// One slot per page, allocated 512 at a time on first touch.
    pub slots: SlotTable,
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
    /// its first page), and the mounted filesystem holds the buffer heads of its folios
    /// (`PG_private`, `buffer_busy`), so `filemap_release_folio` fails on them and reclaim
    /// activates them (`activate_locked`) instead of freeing them.
    pub bdev_metadata: bool,
    /// Per leaf (chunk of `slots`, by chunk number): its shadow entries, and its place on the
    /// shadow-node list while it holds nothing else ([`ShadowLru`]).
    pub leaves: Vec<Leaf>,
}

impl File {
    /// Its shadow entries (pages not resident whose eviction the page cache remembers: the
    /// leaves' `nr_values` summed) and the bytes of its page cache kept for them: each leaf in
    /// use (its chunk of 64 slots with the count of live ones, and its [`Leaf`] record) shared
    /// equally among its live entries, the shadow entries' share (rounded down per leaf).
    pub fn shadow_state(&self) -> (u64, u64) {
        let leaf_bytes = SlotTable::CHUNK_BYTES + std::mem::size_of::<Leaf>() as u64;
        let (mut entries, mut bytes) = (0, 0);
        for (c, live) in self.slots.chunks_live() {
            let values = self.leaves.get(c).map_or(0, |l| l.values) as u64;
            entries += values;
            bytes += leaf_bytes * values / live as u64;
        }
        (entries, bytes)
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
    pub old: PackedSlot,
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
            slots: SlotTable::default(),
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
            leaves: Vec::new(),
        }
    }
    /// Slot at `index`.
    #[inline]
    pub fn slot(&self, index: u64) -> Slot {
        debug_assert!(
            index < self.size,
            "slot {index} past the end of {} ({} pages)",
            self.name,
            self.size
        );
        self.slots.get(index).get()
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
        let new = PackedSlot::pack(s);
        let r = self.slots.replace(index, new);
        if r.chunk == NO_CHUNK {
            return SlotChange::default();
        }
        let c = r.chunk as usize;
        if r.chunks > 0 {
            self.leaf_born(c);
        }
        let (was, is) = (r.old != PackedSlot::default(), new != PackedSlot::default());
        let live_before = r.live + u8::from(was) - u8::from(is);
        let leaf = &mut self.leaves[c];
        let only_before = live_before != 0 && live_before == leaf.values;
        leaf.values = leaf.values + u8::from(new.is_shadow()) - u8::from(r.old.is_shadow());
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
            let r = self.slots.replace(index, PackedSlot::default());
            if r.chunk == NO_CHUNK {
                break;
            }
            debug_assert!(
                matches!(r.old.get(), Slot::Shadow(_) | Slot::Empty),
                "a shadow-only leaf holds a folio"
            );
            if matches!(r.old.get(), Slot::Shadow(_)) {
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
/// absent entries read as `T::default()`: the page cache's slots ([`SlotTable`]), and any table
/// keyed by page that must not grow with the key space.
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

/// The slots of a file's page cache.
pub type SlotTable = Radix<PackedSlot>;

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
            let mut t = SlotTable::default();
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
            let all: Vec<(u64, Slot)> = f.slots.iter().map(|(i, p)| (i, p.get())).collect();
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
