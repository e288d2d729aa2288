//! Dense compaction of page keys for simulators.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::path::Path;

use crate::error::{TraceError, TraceErrorKind};
use crate::format::TraceFormat;
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

#[derive(Default)]
struct Builder {
    ids: HashMap<u64, u32, BuildHasherDefault<KeyHasher>>,
    pages: Vec<u32>,
}

impl Builder {
    /// Appends `key`; false when a new id would exceed the limit.
    #[inline]
    fn push(&mut self, key: u64) -> bool {
        let next = self.ids.len();
        let id = match self.ids.get(&key) {
            Some(&id) => id,
            None => {
                if next as u64 >= DenseTrace::MAX_UNIQUE {
                    return false;
                }
                self.ids.insert(key, next as u32);
                next as u32
            }
        };
        self.pages.push(id);
        true
    }

    fn finish(self) -> DenseTrace {
        DenseTrace {
            nr_unique: self.ids.len() as u32,
            nr_requests: self.pages.len() as u64,
            pages: self.pages,
        }
    }
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
    fn first_appearance_order() {
        let d = DenseTrace::from_keys([50, 7, 50, 9, 7, u64::MAX]);
        assert_eq!(d.pages, vec![0, 1, 0, 2, 1, 3]);
        assert_eq!(d.nr_unique, 4);
        assert_eq!(d.nr_requests, 6);
        assert_eq!(DenseTrace::from_keys([]), DenseTrace::default());
    }
}
