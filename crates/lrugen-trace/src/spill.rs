// SPDX-License-Identifier: GPL-2.0-only
//! Streams of `u32` ids written once and read back in bounded chunks: how a trace is replayed
//! several times (one pass per policy, OPT's two passes) without holding a long one in memory.
//!
//! An [`IdFile`] is written once, front to back ([`IdWriter`]), or created
//! at its final length and filled chunk by chunk at any position
//! ([`IdFile::zeroed`], [`IdFile::write_at`]); it is then read with
//! positional reads ([`IdFile::read_at`], [`IdCursor`]), so that any number
//! of readers, on any threads, share one stream without sharing an offset. Ids
//! are stored little-endian, 4 bytes each. A written stream of at most [`MEM_IDS`] ids stays in
//! memory (shared, read in place: a cursor's chunk is a slice of it, with no copy); a longer one
//! goes to an unnamed temporary file (unlinked at creation, in [`std::env::temp_dir`], i.e.
//! `$TMPDIR` or `/tmp`), which disappears when the last handle is dropped, even if the process is
//! killed. So memory stays bounded whatever the trace's length: at most [`MEM_IDS`] × 4 bytes a
//! stream, and one chunk a reader beyond that.

use std::fs::File;
use std::io::{self, Write};
use std::os::unix::fs::FileExt;
use std::sync::Arc;

/// Ids per chunk of the readers and writers: 64 Ki ids, 256 KiB.
pub const CHUNK_IDS: usize = 1 << 16;

/// The longest stream an [`IdWriter`] keeps in memory: 256 Ki ids, 1 MiB (the CloudPhysics
/// sample fits; the ARC paper's traces do not). A replay of such a stream reads its ids in place
/// instead of copying each chunk out of the page cache: about 100 µs of a 0.6 ms replay of the
/// CloudPhysics sample. Longer streams are spilled to a temporary file, having cost at most this
/// 1 MiB of memory while they were written: small enough that peak RSS stays flat in the trace's
/// length (docs/memory.md, "Peak RSS by trace length"; 4 MiB here put a 1 M-request trace 15 %
/// above the longer ones).
pub const MEM_IDS: usize = 1 << 18;

/// Where a stream's ids are.
#[derive(Debug, Clone)]
enum Store {
    /// In memory, little-endian.
    Mem(Arc<[u8]>),
    /// In an unnamed temporary file.
    File(Arc<File>),
}

/// A stream of `u32` ids, in memory or in an unnamed temporary file (see the module
/// documentation). Cloning shares it.
#[derive(Debug, Clone)]
pub struct IdFile {
    store: Store,
    len: u64,
}

fn temp() -> io::Result<File> {
    tempfile::tempfile()
}

impl IdFile {
    /// A writer of a new file, appending ids.
    pub fn writer() -> io::Result<IdWriter> {
        Ok(Self::writer_keeping(MEM_IDS))
    }

    /// A writer that keeps up to `mem_ids` ids in memory (the tests' way to reach both stores).
    fn writer_keeping(mem_ids: usize) -> IdWriter {
        IdWriter {
            file: None,
            buf: Vec::with_capacity(CHUNK_IDS.min(mem_ids) * 4),
            len: 0,
            mem_ids,
        }
    }

    /// A new file of `len` zero ids, to be filled with [`IdFile::write_at`]
    /// (the file is sparse until written).
    pub fn zeroed(len: u64) -> io::Result<IdFile> {
        let file = temp()?;
        file.set_len(byte_len(len)?)?;
        Ok(IdFile {
            store: Store::File(Arc::new(file)),
            len,
        })
    }

    /// Whether the ids are in memory rather than in a temporary file.
    pub fn in_memory(&self) -> bool {
        matches!(self.store, Store::Mem(_))
    }

    /// Number of ids.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether the file holds no id.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Reads the ids `start..start + out.len()` into `out`.
    ///
    /// # Errors
    /// If the range goes past the end, or on an I/O error.
    pub fn read_at(&self, start: u64, out: &mut [u32]) -> io::Result<()> {
        let mut bytes = vec![0u8; out.len().min(CHUNK_IDS) * 4];
        let mut done = 0;
        while done < out.len() {
            let n = (out.len() - done).min(CHUNK_IDS);
            self.read_bytes(start + done as u64, &mut bytes[..n * 4])?;
            for (o, b) in out[done..done + n].iter_mut().zip(bytes.chunks_exact(4)) {
                *o = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
            }
            done += n;
        }
        Ok(())
    }

    /// Writes `ids` at positions `start..start + ids.len()`.
    ///
    /// # Errors
    /// If the range goes past the end, or on an I/O error.
    pub fn write_at(&self, start: u64, ids: &[u32]) -> io::Result<()> {
        self.check_range(start, ids.len())?;
        let Store::File(file) = &self.store else {
            return Err(io::Error::other("ids written in place into a stream kept in memory"));
        };
        let mut bytes = Vec::with_capacity(ids.len().min(CHUNK_IDS) * 4);
        let mut at = start;
        for chunk in ids.chunks(CHUNK_IDS) {
            bytes.clear();
            for id in chunk {
                bytes.extend_from_slice(&id.to_le_bytes());
            }
            file.write_all_at(&bytes, at * 4)?;
            at += chunk.len() as u64;
        }
        Ok(())
    }

    /// A reader of the ids from position `start` to the end, one chunk in
    /// memory at a time.
    pub fn cursor(&self, start: u64) -> IdCursor {
        IdCursor {
            mem: match &self.store {
                Store::Mem(m) => Some(m.clone()),
                Store::File(_) => None,
            },
            file: self.clone(),
            next: start.min(self.len),
            bytes: Vec::new(),
            at: 0,
        }
    }

    /// Every id, in memory (for consumers that need the whole stream, e.g. an
    /// op file of a guest replay).
    ///
    /// # Errors
    /// On an I/O error, or if the ids do not fit in memory's address space.
    pub fn to_vec(&self) -> io::Result<Vec<u32>> {
        let n = usize::try_from(self.len).map_err(|_| io::Error::other("too many ids for memory"))?;
        let mut v = vec![0u32; n];
        self.read_at(0, &mut v)?;
        Ok(v)
    }

    fn check_range(&self, start: u64, n: usize) -> io::Result<()> {
        match start.checked_add(n as u64) {
            Some(end) if end <= self.len => Ok(()),
            _ => Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!(
                    "ids {start}..{} past the end of a temporary file of {} ids",
                    start.saturating_add(n as u64),
                    self.len
                ),
            )),
        }
    }

    /// Reads the bytes of the ids from position `start` into `bytes` (whose
    /// length is a multiple of 4).
    fn read_bytes(&self, start: u64, bytes: &mut [u8]) -> io::Result<()> {
        self.check_range(start, bytes.len() / 4)?;
        match &self.store {
            Store::Mem(m) => {
                let at = (start * 4) as usize;
                bytes.copy_from_slice(&m[at..at + bytes.len()]);
                Ok(())
            }
            Store::File(f) => f.read_exact_at(bytes, start * 4),
        }
    }
}

fn byte_len(ids: u64) -> io::Result<u64> {
    ids.checked_mul(4)
        .ok_or_else(|| io::Error::other(format!("{ids} ids do not fit in a file")))
}

/// Appends ids to a new [`IdFile`]: in memory up to [`MEM_IDS`] ids, then to a temporary file a
/// chunk at a time.
#[derive(Debug)]
pub struct IdWriter {
    /// The temporary file, once the ids outgrew memory.
    file: Option<File>,
    /// The ids not yet written to the file (all of them while it is `None`).
    buf: Vec<u8>,
    len: u64,
    /// The most ids kept in memory ([`MEM_IDS`]).
    mem_ids: usize,
}

impl IdWriter {
    /// Appends `id`.
    ///
    /// # Errors
    /// On an I/O error writing a full chunk.
    #[inline]
    pub fn push(&mut self, id: u32) -> io::Result<()> {
        // written out before the buffer would grow past its bound (a chunk once there is a file,
        // `mem_ids` before), so that the buffer never holds more
        let bound = match self.file {
            Some(_) => CHUNK_IDS,
            None => self.mem_ids,
        };
        if self.buf.len() >= bound * 4 {
            self.flush_chunk()?;
        }
        self.buf.extend_from_slice(&id.to_le_bytes());
        self.len += 1;
        Ok(())
    }

    /// Ids appended so far.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether no id was appended.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Writes the buffered ids to the file, creating it when the stream outgrows memory.
    #[cold]
    fn flush_chunk(&mut self) -> io::Result<()> {
        let file = match &mut self.file {
            Some(f) => f,
            None => self.file.insert(temp()?),
        };
        file.write_all(&self.buf)?;
        self.buf.clear();
        // from now on a chunk at a time
        self.buf.shrink_to(CHUNK_IDS * 4);
        Ok(())
    }

    /// Writes the last chunk and gives the file, ready to be read.
    ///
    /// # Errors
    /// On an I/O error.
    pub fn finish(mut self) -> io::Result<IdFile> {
        if self.file.is_none() {
            return Ok(IdFile {
                store: Store::Mem(Arc::from(std::mem::take(&mut self.buf))),
                len: self.len,
            });
        }
        self.flush_chunk()?;
        let mut file = self.file.take().expect("created above");
        file.flush()?;
        Ok(IdFile {
            store: Store::File(Arc::new(file)),
            len: self.len,
        })
    }
}

/// Reads an [`IdFile`] forward from a position, one chunk in memory at a
/// time (positional reads: cursors of one file do not disturb each other).
#[derive(Debug, Clone)]
pub struct IdCursor {
    /// The ids when they are in memory: read in place, `bytes` unused.
    mem: Option<Arc<[u8]>>,
    file: IdFile,
    /// Position of the first id not yet read into `bytes`.
    next: u64,
    /// The current chunk, little-endian.
    bytes: Vec<u8>,
    /// Byte offset of the next id in `bytes`.
    at: usize,
}

impl IdCursor {
    /// Position in the file of the id [`IdCursor::next_id`] returns next.
    pub fn index(&self) -> u64 {
        self.next - ((self.bytes.len() - self.at) / 4) as u64
    }

    /// The file read.
    pub fn file(&self) -> &IdFile {
        &self.file
    }

    /// Ids left.
    pub fn remaining(&self) -> u64 {
        self.file.len - self.index()
    }

    /// The next id: `Ok(None)` at the end.
    ///
    /// # Errors
    /// On an I/O error reading the next chunk; the cursor stays where it
    /// was.
    #[inline]
    pub fn next_id(&mut self) -> io::Result<Option<u32>> {
        if let Some(m) = &self.mem {
            if self.next == self.file.len {
                return Ok(None);
            }
            let at = self.next as usize * 4;
            self.next += 1;
            return Ok(Some(u32::from_le_bytes([m[at], m[at + 1], m[at + 2], m[at + 3]])));
        }
        if self.at == self.bytes.len() && !self.refill()? {
            return Ok(None);
        }
        let b = &self.bytes[self.at..self.at + 4];
        self.at += 4;
        Ok(Some(u32::from_le_bytes([b[0], b[1], b[2], b[3]])))
    }

    /// The ids not yet read of the current chunk, as little-endian `u32`s, reading the next chunk
    /// when it is used up; empty at the end. The ids returned count as read: a replay loop
    /// decodes a chunk in place ([`le_ids`]) instead of calling [`IdCursor::next_id`] per id.
    ///
    /// # Errors
    /// On an I/O error reading the next chunk; the cursor stays where it was.
    #[inline]
    pub fn read_chunk(&mut self) -> io::Result<&[u8]> {
        if self.mem.is_some() {
            let n = (self.file.len - self.next).min(CHUNK_IDS as u64) as usize;
            let at = self.next as usize * 4;
            self.next += n as u64;
            let m = self.mem.as_deref().unwrap_or_default();
            return Ok(&m[at..at + n * 4]);
        }
        if self.at == self.bytes.len() && !self.refill()? {
            return Ok(&[]);
        }
        let at = std::mem::replace(&mut self.at, self.bytes.len());
        Ok(&self.bytes[at..])
    }

    #[cold]
    fn refill(&mut self) -> io::Result<bool> {
        let n = (self.file.len - self.next).min(CHUNK_IDS as u64) as usize;
        if n == 0 {
            return Ok(false);
        }
        self.bytes.resize(n * 4, 0);
        self.at = self.bytes.len();
        self.file.read_bytes(self.next, &mut self.bytes)?;
        self.at = 0;
        self.next += n as u64;
        Ok(true)
    }
}

/// The ids of a chunk of [`IdCursor::read_chunk`], in order.
#[inline]
pub fn le_ids(chunk: &[u8]) -> impl Iterator<Item = u32> + '_ {
    chunk
        .chunks_exact(4)
        .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

impl Iterator for IdCursor {
    type Item = io::Result<u32>;

    #[inline]
    fn next(&mut self) -> Option<io::Result<u32>> {
        self.next_id().transpose()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `ids` written with each store: a file from the first id, spilled half way, and in memory
    /// (exactly at the limit, which stays in memory).
    fn files_of(ids: &[u32]) -> Vec<IdFile> {
        [0, ids.len() / 2, ids.len()]
            .into_iter()
            .map(|keep| {
                let mut w = IdFile::writer_keeping(keep);
                for &id in ids {
                    w.push(id).unwrap();
                }
                assert_eq!(w.len(), ids.len() as u64);
                let f = w.finish().unwrap();
                assert_eq!(f.in_memory(), keep == ids.len(), "kept {keep} of {}", ids.len());
                f
            })
            .collect()
    }

    #[test]
    fn a_short_stream_stays_in_memory_and_a_long_one_is_spilled() {
        let mut w = IdFile::writer().unwrap();
        for id in 0..1000 {
            w.push(id).unwrap();
        }
        assert!(w.finish().unwrap().in_memory());
        // kept in memory up to three chunks (the buffer grows past one), spilled at the next id
        let n = 3 * CHUNK_IDS as u32;
        let mut w = IdFile::writer_keeping(n as usize);
        for id in 0..n {
            w.push(id).unwrap();
        }
        assert!(w.file.is_none() && w.buf.capacity() > CHUNK_IDS * 4);
        w.push(n).unwrap();
        // the buffer is back to a chunk once the file took over
        assert!(w.buf.capacity() <= CHUNK_IDS * 4, "{}", w.buf.capacity());
        let f = w.finish().unwrap();
        assert!(!f.in_memory());
        assert_eq!(f.to_vec().unwrap(), (0..=n).collect::<Vec<_>>());
        assert!(!IdFile::zeroed(3).unwrap().in_memory());
    }

    #[test]
    fn round_trip_across_chunks() {
        let ids: Vec<u32> = (0..(2 * CHUNK_IDS as u32 + 17))
            .map(|i| i.wrapping_mul(2_654_435_761))
            .collect();
        for f in files_of(&ids) {
            assert_eq!(f.len(), ids.len() as u64);
            assert_eq!(f.to_vec().unwrap(), ids);
            let back: Vec<u32> = f.cursor(0).map(Result::unwrap).collect();
            assert_eq!(back, ids);
            // two cursors of one stream interleave without disturbing each other
            let (mut a, mut b) = (f.cursor(5), f.cursor(CHUNK_IDS as u64 - 1));
            for i in 0..CHUNK_IDS + 3 {
                assert_eq!(a.next_id().unwrap(), Some(ids[5 + i]));
                assert_eq!(b.next_id().unwrap(), Some(ids[CHUNK_IDS - 1 + i]));
            }
            assert_eq!(a.index(), CHUNK_IDS as u64 + 8);
            assert_eq!(a.remaining(), ids.len() as u64 - a.index());
            let mut mid = vec![0; 40];
            f.read_at(CHUNK_IDS as u64 - 20, &mut mid).unwrap();
            assert_eq!(mid, ids[CHUNK_IDS - 20..CHUNK_IDS + 20]);
            assert!(f.read_at(ids.len() as u64 - 1, &mut [0, 0]).is_err());
            assert_eq!(f.cursor(ids.len() as u64 + 9).next_id().unwrap(), None);
        }
    }

    #[test]
    fn chunks_give_the_ids_in_order_mixed_with_single_reads() {
        let ids: Vec<u32> = (0..(3 * CHUNK_IDS as u32 + 5)).map(|i| i ^ 0x5a5a).collect();
        for f in files_of(&ids) {
            let mut c = f.cursor(3);
            let mut back = vec![c.next_id().unwrap().unwrap()];
            let mut sizes = Vec::new();
            loop {
                let chunk = c.read_chunk().unwrap();
                if chunk.is_empty() {
                    break;
                }
                sizes.push(chunk.len() / 4);
                back.extend(le_ids(chunk));
                // a single read after a chunk takes the first id of the next one
                if let Some(id) = c.next_id().unwrap() {
                    back.push(id);
                }
            }
            assert_eq!(back, ids[3..]);
            assert_eq!(c.remaining(), 0);
            assert!(c.read_chunk().unwrap().is_empty());
            // no chunk longer than CHUNK_IDS, whichever the store
            assert!(sizes.iter().all(|&n| n <= CHUNK_IDS), "{sizes:?}");
        }
    }

    #[test]
    fn zeroed_then_written_backwards() {
        let f = IdFile::zeroed(10).unwrap();
        assert_eq!(f.to_vec().unwrap(), [0; 10]);
        f.write_at(6, &[6, 7, 8, 9]).unwrap();
        f.write_at(0, &[0, 1, 2, 3, 4, 5]).unwrap();
        assert_eq!(f.to_vec().unwrap(), (0..10).collect::<Vec<u32>>());
        assert!(f.write_at(8, &[1, 2, 3]).is_err());
        for empty in files_of(&[]) {
            assert!(empty.is_empty());
            assert_eq!(empty.cursor(0).next_id().unwrap(), None);
            assert!(empty.cursor(0).read_chunk().unwrap().is_empty());
        }
        // a stream kept in memory is not written in place
        let kept = &files_of(&[1, 2])[2];
        assert!(kept.write_at(0, &[3]).is_err());
    }
}
