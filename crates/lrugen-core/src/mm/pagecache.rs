// SPDX-License-Identifier: GPL-2.0-only
//! The page cache: one slot array per file (the kernel's xarray in `address_space->i_pages`).
//!
//! A slot holds nothing, a resident folio, or a shadow entry left when the folio was evicted
//! (`workingset_eviction`); a later fault on a slot with a shadow is a refault. The kernel bounds
//! shadow nodes with a shrinker; this model keeps every shadow until the slot is reused or the file
//! is truncated, which matters only for memory-starved runs with huge files.

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
    /// One slot per page.
    pub slots: Vec<PackedSlot>,
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
}

impl File {
    /// A new, uncached file of `size` pages.
    pub fn new(name: impl Into<String>, size: u64, ra_pages: u64, advice: Advice) -> Self {
        File {
            name: name.into(),
            size,
            slots: vec![PackedSlot::default(); size as usize],
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
        }
    }
    /// Slot at `index`.
    #[inline]
    pub fn slot(&self, index: u64) -> Slot {
        self.slots[index as usize].get()
    }
    /// Replace the slot at `index`.
    #[inline]
    pub fn set_slot(&mut self, index: u64, s: Slot) {
        self.slots[index as usize] = PackedSlot::pack(s);
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
            }
        }
    }
}
