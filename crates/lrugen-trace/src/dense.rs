//! Dense compaction of page keys for simulators.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::path::Path;

use crate::error::{TraceError, TraceErrorKind};
use crate::format::TraceFormat;
use crate::spill::IdFile;
use crate::stream::{open_with, ReadOptions};

/// A whole trace with its page keys renumbered densely.
///
/// Invariants (upheld by [`load_dense`] and [`DenseTrace::from_keys`]):
/// every `pages[i] < nr_unique`, ids are given in order of first appearance
/// (the first page seen is 0, the next new one 1, …), and
/// `nr_requests == pages.len()`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DenseTrace {
    /// The dense id of each reference, in trace order.
    pub pages: Vec<u32>,
    /// Number of distinct pages; ids are `0..nr_unique`.
    pub nr_unique: u32,
    /// Number of page references (`pages.len()`).
    pub nr_requests: u64,
}

impl DenseTrace {
    /// Most distinct pages a dense trace can hold: ids are `u32` and one
    /// value is left free for simulators' sentinels.
    pub const MAX_UNIQUE: u64 = u32::MAX as u64;

    /// Renumbers an in-memory key stream (tests, synthetic workloads).
    ///
    /// # Panics
    /// If the stream has more than [`DenseTrace::MAX_UNIQUE`] distinct keys.
    pub fn from_keys<I: IntoIterator<Item = u64>>(keys: I) -> DenseTrace {
        let mut b = Builder::default();
        for key in keys {
            assert!(b.push(key), "more than {} distinct keys", Self::MAX_UNIQUE);
        }
        b.finish()
    }
}

/// Loads a whole trace file and renumbers its keys densely.
///
/// `format` overrides detection as in [`crate::open`]. Memory is
/// 4 bytes per reference plus a hash map of the distinct keys while loading.
///
/// # Errors
/// Any error of [`crate::open`] or of reading (see [`TraceError`]), and
/// [`TraceErrorKind::TooManyPages`] past [`DenseTrace::MAX_UNIQUE`] distinct
/// pages.
pub fn load_dense(path: &Path, format: Option<TraceFormat>) -> Result<DenseTrace, TraceError> {
    load_dense_with(
        path,
        &ReadOptions {
            format,
            ..Default::default()
        },
    )
}

/// Like [`load_dense`], with csv parameters and the iolog clock: the dense
/// ids number the page keys of [`crate::open_with`] (for iologs, lackey and
/// block csv traces, the 4 KiB pages each access touches).
///
/// # Errors
/// As [`load_dense`].
pub fn load_dense_with(path: &Path, options: &ReadOptions) -> Result<DenseTrace, TraceError> {
    let mut b = Builder::default();
    for key in open_with(path, options)? {
        if !b.push(key?) {
            return Err(TraceError::new(
                path,
                TraceErrorKind::TooManyPages {
                    limit: DenseTrace::MAX_UNIQUE,
                },
            ));
        }
    }
    Ok(b.finish())
}

/// The dense ids given so far: a map from page key to id (in order of first
/// appearance), growing with the distinct keys (not with the trace's length),
/// hashed with the readers' fast key hasher. For other streams of page keys
/// that are numbered as the dense traces are (lrugen's typed trace replay).
#[derive(Default)]
pub struct DenseIds {
    ids: HashMap<u64, u32, BuildHasherDefault<KeyHasher>>,
}

type Ids = DenseIds;

impl DenseIds {
    /// The id of `key`, a new one for a key not seen before; `None` when a
    /// new id would exceed [`DenseTrace::MAX_UNIQUE`].
    #[inline]
    pub fn id(&mut self, key: u64) -> Option<u32> {
        let next = self.ids.len();
        match self.ids.get(&key) {
            Some(&id) => Some(id),
            None => {
                if next as u64 >= DenseTrace::MAX_UNIQUE {
                    return None;
                }
                self.ids.insert(key, next as u32);
                Some(next as u32)
            }
        }
    }

    /// Distinct keys numbered so far.
    pub fn len(&self) -> u32 {
        self.ids.len() as u32
    }

    /// Whether no key was numbered yet.
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }
}

#[derive(Default)]
struct Builder {
    ids: Ids,
    pages: Vec<u32>,
}

impl Builder {
    /// Appends `key`; false when a new id would exceed the limit.
    #[inline]
    fn push(&mut self, key: u64) -> bool {
        match self.ids.id(key) {
            Some(id) => {
                self.pages.push(id);
                true
            }
            None => false,
        }
    }

    fn finish(self) -> DenseTrace {
        DenseTrace {
            nr_unique: self.ids.len(),
            nr_requests: self.pages.len() as u64,
            pages: self.pages,
        }
    }
}

/// A trace with its page keys renumbered densely, the ids in a temporary
/// file ([`IdFile`]) rather than in memory: [`DenseTrace`]'s streaming
/// counterpart, for replays of traces of any length. Same invariants (ids in
/// order of first appearance, all `< nr_unique`). Cloning shares the file.
#[derive(Debug, Clone)]
pub struct SpilledTrace {
    /// The dense id of each reference, in trace order.
    pub pages: IdFile,
    /// Number of distinct pages; ids are `0..nr_unique`.
    pub nr_unique: u32,
}

impl SpilledTrace {
    /// Number of page references.
    pub fn nr_requests(&self) -> u64 {
        self.pages.len()
    }

    /// Spills ids already dense (e.g. a [`DenseTrace`]'s `pages`), which must
    /// be `< nr_unique`.
    ///
    /// # Errors
    /// On an I/O error writing the temporary file.
    pub fn from_ids(pages: &[u32], nr_unique: u32) -> std::io::Result<SpilledTrace> {
        let mut w = IdFile::writer()?;
        for &id in pages {
            debug_assert!(id < nr_unique);
            w.push(id)?;
        }
        Ok(SpilledTrace {
            pages: w.finish()?,
            nr_unique,
        })
    }

    /// Spills an in-memory key stream (tests, synthetic workloads).
    ///
    /// # Errors
    /// On an I/O error writing the temporary file.
    ///
    /// # Panics
    /// If the stream has more than [`DenseTrace::MAX_UNIQUE`] distinct keys.
    pub fn from_keys<I: IntoIterator<Item = u64>>(keys: I) -> std::io::Result<SpilledTrace> {
        let mut ids = Ids::default();
        let mut w = IdFile::writer()?;
        for key in keys {
            let id = ids.id(key);
            assert!(id.is_some(), "more than {} distinct keys", DenseTrace::MAX_UNIQUE);
            w.push(id.unwrap_or_default())?;
        }
        Ok(SpilledTrace {
            pages: w.finish()?,
            nr_unique: ids.len(),
        })
    }
}

/// Reads a whole trace file once, renumbers its keys densely and keeps the
/// ids in an [`IdFile`]: [`load_dense`] in bounded memory. Memory is the
/// hash map of the distinct keys (while reading) and at most
/// [`MEM_IDS`](crate::MEM_IDS) ids (a trace no longer than that stays in
/// memory); a longer one goes to a temporary file, 4 bytes per reference, in
/// [`std::env::temp_dir`].
///
/// # Errors
/// As [`load_dense`], and [`TraceErrorKind::Spill`] when the temporary file
/// cannot be written. Every error of the trace is found here, before any
/// replay of the ids.
pub fn spill_dense(path: &Path, format: Option<TraceFormat>) -> Result<SpilledTrace, TraceError> {
    spill_dense_with(
        path,
        &ReadOptions {
            format,
            ..Default::default()
        },
    )
}

/// Like [`spill_dense`], with csv parameters and the iolog clock (as
/// [`load_dense_with`]).
///
/// # Errors
/// As [`spill_dense`].
pub fn spill_dense_with(path: &Path, options: &ReadOptions) -> Result<SpilledTrace, TraceError> {
    let reader = open_with(path, options)?;
    let spill = |e| TraceError::new(path, TraceErrorKind::Spill(e));
    let mut w = IdFile::writer().map_err(spill)?;
    let mut ids = Ids::default();
    for key in reader {
        let Some(id) = ids.id(key?) else {
            return Err(TraceError::new(
                path,
                TraceErrorKind::TooManyPages {
                    limit: DenseTrace::MAX_UNIQUE,
                },
            ));
        };
        w.push(id).map_err(spill)?;
    }
    Ok(SpilledTrace {
        pages: w.finish().map_err(spill)?,
        nr_unique: ids.len(),
    })
}

/// A fast hasher for `u64` keys (the splitmix64 finalizer). Not DoS-resistant,
/// which does not matter for trace files.
#[derive(Default)]
struct KeyHasher(u64);

impl Hasher for KeyHasher {
    #[inline]
    fn finish(&self) -> u64 {
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        }
    }

    #[inline]
    fn write_u64(&mut self, n: u64) {
        self.0 ^= n;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spilled_equals_loaded() {
        let keys = [50, 7, 50, 9, 7, u64::MAX, 3, 3];
        let s = SpilledTrace::from_keys(keys).unwrap();
        let d = DenseTrace::from_keys(keys);
        assert_eq!(s.pages.to_vec().unwrap(), d.pages);
        assert_eq!((s.nr_unique, s.nr_requests()), (d.nr_unique, d.nr_requests));
    }

    #[test]
    fn first_appearance_order() {
        let d = DenseTrace::from_keys([50, 7, 50, 9, 7, u64::MAX]);
        assert_eq!(d.pages, vec![0, 1, 0, 2, 1, 3]);
        assert_eq!(d.nr_unique, 4);
        assert_eq!(d.nr_requests, 6);
        assert_eq!(DenseTrace::from_keys([]), DenseTrace::default());
    }
}
