//! CLOCK-Pro: one circular list of hot, cold and non-resident (test) pages swept by three hands.

use super::Counts;

const NIL: u32 = u32::MAX;

const COLD: u8 = 0;
const HOT: u8 = 1;
const TEST: u8 = 2;

/// Where a page's node is: nowhere, resident (libCacheSim's cache hash table), or in the table
/// of test entries (`ht_test`).
const ABSENT: u8 = 0;
const RESIDENT: u8 = 1;
const IN_TEST_TABLE: u8 = 2;

/// The cold pages' initial share of the capacity (`init-ratio-cold` as libCacheSim's Python
/// bindings pass it).
pub const INIT_RATIO_COLD: f64 = 0.5;

/// CLOCK-Pro (Jiang, Chen and Zhang, USENIX ATC 2005) as libCacheSim 0.3.5 implements it
/// (`ClockPro`, `ClockPro.c` with `init-ref=0, init-ratio-cold=0.5`, the defaults of its Python
/// bindings).
///
/// Resident pages are hot or cold; a cold page evicted leaves a test entry (a non-resident id)
/// in its place on the clock. New pages enter cold, unreferenced, just behind the hot hand;
/// a hit sets the page's reference bit. A miss is admitted only while the cold pages are fewer
/// than their target `m_c` (initially `⌊0.5·C⌋`); when the cache is full the cold hand turns:
/// it skips hot and test entries, promotes a referenced cold page to hot, and evicts an
/// unreferenced one, leaving a test entry (first turning the test hand while the test entries
/// number `C`). The test hand removes the test entry it lands on and lowers `m_c` by one (then
/// turns the cold hand while the cold pages exceed `m_c`). Promotion raises `m_c` by one (at most
/// `C`) when the page was a test entry, turns the hot hand while the hot pages would exceed
/// `C − m_c`, and puts the page just past the hot hand, which moves on to the page after it. The
/// hot hand clears a hot page's reference bit, or demotes an unreferenced hot page to cold
/// (turning the cold hand first while the cold pages would exceed `m_c`). Each hand checks the
/// entry it rests on before moving.
///
/// **In libCacheSim 0.3.5 the hands never turn**, and this is all its miss ratio shows (far
/// above LRU's on OLTP, P12 and the CloudPhysics sample). `cache_get_base` asks
/// `ClockPro_can_insert` (cold pages + 1 ≤ `m_c`) *before* it evicts, and new pages are cold;
/// cold pages turn hot or leave only when the cold hand turns, which happens only to make room in
/// a full cache. So with `init-ratio-cold=r`:
///
/// * `r < 1` (the Python bindings' default 0.5): the cache never fills; the first `⌊r·C⌋`
///   distinct pages are admitted and stay forever, every other page misses on every request;
/// * `r = 1` (the C library's default): the same with the first `C` distinct pages — the cache
///   fills with cold pages, `m_c = C`, and every later miss is refused;
/// * `r > 1`: the cache fills, the cold hand turns, and the first promotion loops forever in
///   `ClockPro_run_hot` (`C − m_c < 0` and there is no hot page to demote); this implementation
///   would too, so [`ClockPro::with_cold_ratio`] refuses `r > 1`.
///
/// Checked against libCacheSim's Python bindings access by access: 300 random traces (C 1–40,
/// r = 0.5, 0.8, 1) equal "keep the first `⌊r·C⌋` distinct pages", and r = 1.5 hangs in both.
/// The hands, test entries and the adaptation of `m_c` described above are followed from
/// `ClockPro.c` line by line, but no trace reaches them in libCacheSim, so that code is not
/// compared with libCacheSim's behaviour.
///
/// Departures from the paper that libCacheSim makes and this follows: admission is refused,
/// not made by evicting, while the cold pages are at their target; a miss on an id with a test
/// entry promotes the *test entry* to hot, and the page never becomes resident again while that
/// entry exists (it lives in the test table, not the cache's, so every later request for it
/// misses and promotes it again, each time counting it once more among the hot pages); and a
/// promoted page is put just past the hot hand, which then moves past it.
///
/// libCacheSim's code reaches undefined behaviour (a null or freed pointer) on some paths: the
/// cold hand evicting a promoted test entry, and the hot hand's demotion after a nested cold-hand
/// turn moved it. Neither was taken on the shared traces or the random traces compared; should
/// one be, this implementation demotes the entry in place and counts it in
/// [`ClockPro::undefined_paths`].
#[derive(Debug, Clone)]
pub struct ClockPro {
    next: Vec<u32>,
    prev: Vec<u32>,
    status: Vec<u8>,
    referenced: Vec<bool>,
    table: Vec<u8>,
    hand_hot: u32,
    hand_cold: u32,
    hand_test: u32,
    mem_cold_max: i64,
    mem_cold: i64,
    mem_test: i64,
    mem_hot: i64,
    resident: usize,
    capacity: usize,
    undefined: u64,
    counts: Counts,
}

impl ClockPro {
    /// An empty cache of `capacity` pages with arrays for page ids `0..nr_pages` (they grow on
    /// a larger id).
    pub fn with_pages(capacity: usize, nr_pages: u32) -> Self {
        Self::with_cold_ratio(capacity, nr_pages, INIT_RATIO_COLD)
    }

    /// Like [`ClockPro::with_pages`] with the cold pages' initial target `⌊ratio·C⌋`
    /// (libCacheSim's `init-ratio-cold`; its C library's own default is 1).
    ///
    /// # Panics
    ///
    /// If `ratio > 1` (or is NaN): libCacheSim then loops forever at the first promotion, and so
    /// would this (see the type's documentation).
    pub fn with_cold_ratio(capacity: usize, nr_pages: u32, ratio: f64) -> Self {
        assert!(
            ratio <= 1.0,
            "init-ratio-cold {ratio} > 1: libCacheSim 0.3.5's ClockPro loops forever at the first promotion"
        );
        let n = nr_pages as usize;
        ClockPro {
            next: vec![NIL; n],
            prev: vec![NIL; n],
            status: vec![COLD; n],
            referenced: vec![false; n],
            table: vec![ABSENT; n],
            hand_hot: NIL,
            hand_cold: NIL,
            hand_test: NIL,
            mem_cold_max: (capacity as f64 * ratio) as i64,
            mem_cold: 0,
            mem_test: 0,
            mem_hot: 0,
            resident: 0,
            capacity,
            undefined: 0,
            counts: Counts::default(),
        }
    }

    /// How many times a path on which libCacheSim's code has undefined behaviour was taken (see
    /// the type's documentation); 0 on every trace tested (the hands never turn there).
    pub fn undefined_paths(&self) -> u64 {
        self.undefined
    }

    /// The target number of cold pages `m_c`.
    pub fn cold_target(&self) -> i64 {
        self.mem_cold_max
    }

    /// References `page`; `true` on a hit.
    #[inline]
    pub fn access(&mut self, page: u32) -> bool {
        let p = page as usize;
        if p >= self.table.len() {
            self.grow(p + 1);
        }
        if self.table[p] == RESIDENT {
            self.referenced[p] = true;
            return self.counts.hit();
        }
        self.counts.miss();
        if self.capacity < 1 || self.mem_cold + 1 > self.mem_cold_max {
            return false;
        }
        while self.resident + 1 > self.capacity {
            self.run_cold();
        }
        self.insert(page);
        false
    }

    fn insert(&mut self, page: u32) {
        let p = page as usize;
        if self.table[p] == IN_TEST_TABLE {
            self.promote(page);
            return;
        }
        self.table[p] = RESIDENT;
        self.resident += 1;
        self.referenced[p] = false;
        self.status[p] = COLD;
        if self.hand_hot == NIL {
            self.next[p] = page;
            self.prev[p] = page;
            self.hand_hot = page;
            self.hand_cold = page;
            self.hand_test = page;
        } else {
            // just behind the hot hand
            let h = self.hand_hot;
            let before = self.prev[h as usize];
            self.link(before, page, h);
        }
        self.mem_cold += 1;
    }

    /// Puts `page`, on no list, between `before` and `after` (neighbours).
    #[inline]
    fn link(&mut self, before: u32, page: u32, after: u32) {
        self.next[before as usize] = page;
        self.prev[page as usize] = before;
        self.next[page as usize] = after;
        self.prev[after as usize] = page;
    }

    /// Takes `page` off the clock (it is not alone on it).
    #[inline]
    fn unlink(&mut self, page: u32) {
        let (n, pr) = (self.next[page as usize], self.prev[page as usize]);
        self.next[pr as usize] = n;
        self.prev[n as usize] = pr;
        self.next[page as usize] = NIL;
        self.prev[page as usize] = NIL;
    }

    /// One step of the test hand (`ClockPro_run_test`).
    fn run_test(&mut self) {
        let obj = self.hand_test;
        let o = obj as usize;
        if self.status[o] != TEST {
            self.hand_test = self.next[o];
            return;
        }
        self.mem_test -= 1;
        self.mem_cold_max = if self.mem_cold_max > 1 {
            self.mem_cold_max - 1
        } else {
            0
        };
        if self.hand_hot == obj {
            self.hand_hot = self.next[o];
        }
        if self.hand_cold == obj {
            self.hand_cold = self.next[o];
        }
        self.hand_test = self.next[o];
        self.unlink(obj);
        self.table[o] = ABSENT;
        while self.mem_cold > self.mem_cold_max {
            self.run_cold();
        }
    }

    /// One step of the cold hand (`ClockPro_run_cold`).
    fn run_cold(&mut self) {
        let obj = self.hand_cold;
        let o = obj as usize;
        if self.status[o] != COLD {
            self.hand_cold = self.next[o];
            return;
        }
        if self.referenced[o] {
            self.promote(obj);
            return;
        }
        self.mem_cold -= 1;
        while self.mem_test + 1 > self.capacity as i64 {
            self.run_test();
        }
        // The page leaves a test entry in its place on the clock.
        if self.hand_cold != obj || self.table[o] != RESIDENT {
            self.undefined += 1;
        }
        self.status[o] = TEST;
        self.referenced[o] = false;
        self.mem_test += 1;
        if self.table[o] == RESIDENT {
            self.resident -= 1;
        }
        self.table[o] = IN_TEST_TABLE;
        self.hand_cold = self.next[o];
    }

    /// One step of the hot hand (`ClockPro_run_hot`).
    fn run_hot(&mut self) {
        let obj = self.hand_hot;
        let o = obj as usize;
        if self.status[o] != HOT {
            self.hand_hot = self.next[o];
            return;
        }
        if self.referenced[o] {
            self.referenced[o] = false;
            self.hand_hot = self.next[o];
            return;
        }
        while self.mem_cold + 1 > self.mem_cold_max {
            self.run_cold();
        }
        self.status[o] = COLD;
        self.referenced[o] = false;
        if self.hand_cold == obj {
            self.hand_cold = self.next[o];
        }
        if self.hand_test == obj {
            self.hand_test = self.next[o];
        }
        if self.hand_hot != obj {
            // libCacheSim's list move leaves the hot hand null here
            self.undefined += 1;
        }
        self.hand_hot = self.next[o];
        self.mem_hot -= 1;
        self.mem_cold += 1;
    }

    /// Makes `obj` hot (`ClockPro_promote`): just past the hot hand, which moves past it.
    fn promote(&mut self, obj: u32) {
        let o = obj as usize;
        if self.status[o] == TEST {
            self.mem_cold_max = (self.mem_cold_max + 1).min(self.capacity as i64);
        }
        while self.mem_hot + 1 > self.capacity as i64 - self.mem_cold_max {
            self.run_hot();
        }
        if self.hand_cold == obj {
            self.hand_cold = self.next[o];
        }
        if self.hand_test == obj {
            self.hand_test = self.next[o];
        }
        let old = self.status[o];
        self.status[o] = HOT;
        self.referenced[o] = false;
        let h = self.hand_hot;
        if h != obj && self.next[h as usize] != obj {
            self.unlink(obj);
            let after = self.next[h as usize];
            self.link(h, obj, after);
        }
        self.hand_hot = self.next[o];
        match old {
            COLD => self.mem_cold -= 1,
            TEST => self.mem_test -= 1,
            _ => {}
        }
        self.mem_hot += 1;
    }

    fn resident_len(&self) -> usize {
        self.resident
    }

    fn is_resident(&self, page: usize) -> bool {
        self.table.get(page).is_some_and(|&t| t == RESIDENT)
    }

    #[cold]
    fn grow(&mut self, nr_pages: usize) {
        self.next.resize(nr_pages, NIL);
        self.prev.resize(nr_pages, NIL);
        self.status.resize(nr_pages, COLD);
        self.referenced.resize(nr_pages, false);
        self.table.resize(nr_pages, ABSENT);
    }
}

super::impl_policy!(ClockPro);
