// SPDX-License-Identifier: GPL-2.0-only
//! cache_ext-shaped policies written in Python (`lrugen.cache_ext`, docs/cache-ext.md): a Python
//! object with cache_ext's hooks (`init`, `folio_added`, `folio_accessed`, `folio_evicted`,
//! `evict_folios`) run as a [`CacheExtOps`] inside the kernel model's page cache, exactly where
//! the shipped Rust policies run ([`lrugen::reclaim::ext::CacheExt`]).
//!
//! A hook gets a [`Ctx`] (the list kfuncs, the folio fields, `current`, the clock) and, in
//! `evict_folios`, an [`Ectx`] (the eviction request). Both point at the model's state for the
//! duration of the call only: used after the hook returned, or from inside a `list_iterate` /
//! `list_sample` callback (which, as in cache_ext, only reads the folio it is given), they raise
//! `RuntimeError` instead of touching freed or aliased memory.
//!
//! List kfuncs return cache_ext's way: 0, or a negative errno (`-ENOENT` no such list,
//! `-EINVAL` a folio not in the valid-folio registry or bad iterate options, `-EEXIST` a folio
//! already on a list (add) or on none (del), `-ENOSPC` too few folios to sample). An exception
//! raised by a hook ends the policy: it is not called again, reclaim falls back to the classic
//! scan for the rest of the run, and the run raises that exception instead of returning a
//! result.

use lrugen::mm::folio::FolioId;
use lrugen::mm::memcg::MemcgId;
use lrugen::reclaim::ext::{
    CacheExtCtx, CacheExtOps, EvictionCtx, FolioView, IterAction, IterMode, IterRet, IterateOpts, ListError, ListId,
    SamplingOptions,
};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use std::cell::{Cell, RefCell};
use std::rc::Rc;

/// `list_iterate` callback answers (`enum cache_ext_iter_action`): keep going.
pub const CONTINUE: i64 = 0;
/// Propose the folio for eviction.
pub const EVICT: i64 = 1;
/// Stop the iteration.
pub const STOP: i64 = 2;
/// `list_iterate` results (`enum cache_ext_iter_ret`): the end of the list, or a stop.
pub const DONE_ITER: i64 = 0;
/// The iteration limit (`CACHE_EXT_MAX_ITER`) was reached.
pub const MAX_ITER_REACHED: i64 = 1;
/// The eviction array is full.
pub const EVICT_ARRAY_FILLED: i64 = 2;

/// The negative errno of a list kfunc's failure.
fn errno(e: ListError) -> i64 {
    match e {
        ListError::NoList => -2,                         // ENOENT
        ListError::NotValid | ListError::BadOpts => -22, // EINVAL
        ListError::Busy => -17,                          // EEXIST
        ListError::TooFew => -28,                        // ENOSPC
    }
}

fn code(r: Result<(), ListError>) -> i64 {
    r.map_or_else(errno, |()| 0)
}

/// A folio as a policy sees it: the fields cache_ext's programs read off `struct folio`, taken
/// when it was handed over.
#[pyclass(frozen, get_all, module = "lrugen._lrugen")]
pub struct Folio {
    /// Its id (what a cache_ext map is keyed by).
    id: FolioId,
    /// `folio->mapping->host->i_ino`: the file.
    ino: u32,
    /// `folio_index`.
    index: u64,
    /// The file's size in pages.
    file_pages: u64,
    /// `folio_test_uptodate`.
    uptodate: bool,
    /// `folio_test_lru`.
    lru: bool,
    /// `folio_test_dirty`.
    dirty: bool,
    /// `folio_test_writeback`.
    writeback: bool,
    /// `folio_test_locked` (isolated by reclaim, in the model).
    locked: bool,
    /// Whether it holds the last page of its file.
    last_page_in_file: bool,
}

#[pymethods]
impl Folio {
    fn __repr__(&self) -> String {
        format!(
            "<lrugen folio {} (ino {} index {}{}{})>",
            self.id,
            self.ino,
            self.index,
            if self.dirty { ", dirty" } else { "" },
            if self.lru { "" } else { ", off the LRU" }
        )
    }
}

fn snapshot(v: FolioView<'_>) -> Folio {
    Folio {
        id: v.id(),
        ino: v.ino(),
        index: v.index(),
        file_pages: v.file_pages(),
        uptodate: v.test_uptodate(),
        lru: v.test_lru(),
        dirty: v.test_dirty(),
        writeback: v.test_writeback(),
        locked: v.test_locked(),
        last_page_in_file: v.is_last_page_in_file(),
    }
}

const STALE: &str = "cache_ext: a context is valid only during the hook call that received it";
const IN_CALLBACK: &str = "cache_ext: a list_iterate or list_sample callback only reads the folio it is given \
     (as in cache_ext); the context cannot be used inside it";

/// What a hook can call (`lrugen.cache_ext.Ctx`): cache_ext's list kfuncs and helpers.
#[pyclass(unsendable, module = "lrugen._lrugen")]
pub struct Ctx {
    ptr: Cell<*mut CacheExtCtx<'static>>,
    busy: Cell<bool>,
}

/// The eviction request of one `evict_folios` call (`struct cache_ext_eviction_ctx`).
#[pyclass(unsendable, module = "lrugen._lrugen")]
pub struct Ectx {
    ptr: Cell<*mut EvictionCtx>,
    busy: Cell<bool>,
}

/// The model's state behind a context's pointer: refused while a method that calls back into
/// Python holds it (`busy`) and once the hook that set it returned (null).
///
/// SAFETY of the `&mut`: [`PyOps`] sets the pointer only for the duration of a hook call, on this
/// thread (the classes are unsendable), and clears it before the hook's borrow ends; every
/// method takes the reference once and calls no Python while holding it, except
/// `Ctx::list_iterate`/`list_sample`, which set `busy` on both the context and the eviction
/// request meanwhile, so no two references are alive at once.
#[allow(clippy::mut_from_ref)]
fn live<'a, T>(busy: &Cell<bool>, ptr: &'a Cell<*mut T>) -> PyResult<&'a mut T> {
    if busy.get() {
        return Err(PyRuntimeError::new_err(IN_CALLBACK));
    }
    let p = ptr.get();
    if p.is_null() {
        return Err(PyRuntimeError::new_err(STALE));
    }
    // SAFETY: see above.
    Ok(unsafe { &mut *p })
}

impl Ctx {
    /// The model's context ([`live`]).
    fn get(&self) -> PyResult<&mut CacheExtCtx<'static>> {
        live(&self.busy, &self.ptr)
    }

    /// A folio a policy may read: one in the registry of valid folios (a page-cache folio of the
    /// attached memcg it was told of and that was not evicted). Any other id names no folio the
    /// policy owns, or no folio at all (a frame never handed out).
    fn check_folio(c: &CacheExtCtx<'_>, id: FolioId) -> PyResult<()> {
        if c.lists().is_valid(id) {
            Ok(())
        } else {
            Err(PyValueError::new_err(format!(
                "cache_ext: folio {id} is not in the valid-folio registry (only folios the hooks \
                 handed over and that were not evicted can be read)"
            )))
        }
    }

    /// Run `f` on the context with `busy` set (it calls back into Python).
    fn with_busy<T>(&self, f: impl FnOnce(&mut CacheExtCtx<'static>) -> PyResult<T>) -> PyResult<T> {
        let c = self.get()?;
        self.busy.set(true);
        let r = f(c);
        self.busy.set(false);
        r
    }
}

impl Ectx {
    /// The eviction request ([`live`]).
    fn get(&self) -> PyResult<&mut EvictionCtx> {
        live(&self.busy, &self.ptr)
    }
}

fn mode(name: &str) -> PyResult<IterMode> {
    match name {
        "skip" => Ok(IterMode::Skip),
        "head" => Ok(IterMode::Head),
        "tail" => Ok(IterMode::Tail),
        m => Err(PyValueError::new_err(format!(
            "cache_ext: iterate mode '{m}': expected 'skip', 'head' or 'tail'"
        ))),
    }
}

#[pymethods]
impl Ctx {
    /// `bpf_cache_ext_ds_registry_new_list(memcg)`: a new list of `memcg`, its id.
    fn new_list(&self, memcg: MemcgId) -> PyResult<ListId> {
        Ok(self.get()?.new_list(memcg))
    }

    /// `bpf_cache_ext_list_add`: `folio` at the head of `list`. 0 or a negative errno.
    fn list_add(&self, list: ListId, folio: FolioId) -> PyResult<i64> {
        Ok(code(self.get()?.list_add(list, folio)))
    }

    /// `bpf_cache_ext_list_add_tail`: `folio` at the tail of `list`.
    fn list_add_tail(&self, list: ListId, folio: FolioId) -> PyResult<i64> {
        Ok(code(self.get()?.list_add_tail(list, folio)))
    }

    /// `bpf_cache_ext_list_move`: `folio` to the head (or the tail) of `list`.
    #[pyo3(signature = (list, folio, tail=false))]
    fn list_move(&self, list: ListId, folio: FolioId, tail: bool) -> PyResult<i64> {
        Ok(code(self.get()?.list_move(list, folio, tail)))
    }

    /// `bpf_cache_ext_list_del`: `folio` off its list.
    fn list_del(&self, folio: FolioId) -> PyResult<i64> {
        Ok(code(self.get()?.list_del(folio)))
    }

    /// How many folios `list` holds (0 for no such list).
    fn list_len(&self, list: ListId) -> PyResult<u64> {
        Ok(self.get()?.lists().len(list))
    }

    /// The folio `id`'s fields, now (a valid folio only: `ValueError` otherwise).
    fn folio(&self, id: FolioId) -> PyResult<Folio> {
        let c = self.get()?;
        Self::check_folio(c, id)?;
        Ok(snapshot(c.folio(id)))
    }

    /// Whether `id` is in the registry of valid folios (a page-cache folio of the attached memcg
    /// the policy was told of and that was not evicted).
    fn is_valid(&self, id: FolioId) -> PyResult<bool> {
        Ok(self.get()?.lists().is_valid(id))
    }

    /// `bpf_get_current_pid_tgid`: the task (the model's mm id) running, or None.
    fn current_task(&self) -> PyResult<Option<u32>> {
        Ok(self.get()?.current_task())
    }

    /// `memory.max` of `memcg` in pages, at most the machine's memory.
    fn memcg_pages(&self, memcg: MemcgId) -> PyResult<u64> {
        Ok(self.get()?.memcg_pages(memcg))
    }

    /// `bpf_ktime_get_ns`: the machine's clock.
    fn ktime_ns(&self) -> PyResult<u64> {
        Ok(self.get()?.ktime_ns())
    }

    /// The machine's frames: the largest folio id + 1.
    fn nr_folios(&self) -> PyResult<usize> {
        Ok(self.get()?.nr_folios())
    }

    /// `bpf_cache_ext_list_iterate[_extended]`: call `fn(idx, folio)` on the folios of `list`
    /// from the head; it answers `CONTINUE`, `EVICT` (proposed in `ectx` until it is full) or
    /// `STOP`. With a target list or mode (`'skip'`, `'head'`, `'tail'`), each folio is moved
    /// after the answer, as cache_ext's extended iteration does. Returns `DONE_ITER`,
    /// `MAX_ITER_REACHED`, `EVICT_ARRAY_FILLED` or a negative errno.
    #[pyo3(signature = (memcg, list, fn_, ectx, continue_list=None, continue_mode="skip", evict_list=None, evict_mode="skip"))]
    #[allow(clippy::too_many_arguments)]
    fn list_iterate(
        &self,
        memcg: MemcgId,
        list: ListId,
        fn_: Bound<'_, PyAny>,
        ectx: PyRef<'_, Ectx>,
        continue_list: Option<ListId>,
        continue_mode: &str,
        evict_list: Option<ListId>,
        evict_mode: &str,
    ) -> PyResult<i64> {
        let mut opts = IterateOpts {
            continue_list,
            continue_mode: mode(continue_mode)?,
            evict_list,
            evict_mode: mode(evict_mode)?,
            ..Default::default()
        };
        let e = ectx.get()?;
        let mut failed: Option<PyErr> = None;
        ectx.busy.set(true);
        let r = self.with_busy(|c| {
            Ok(c.list_iterate_extended(
                memcg,
                list,
                |i, v| {
                    if failed.is_some() {
                        return IterAction::Stop;
                    }
                    let answer = fn_.call1((i, snapshot(v))).and_then(|a| a.extract::<i64>());
                    match answer {
                        Ok(CONTINUE) => IterAction::Continue,
                        Ok(EVICT) => IterAction::Evict,
                        Ok(STOP) => IterAction::Stop,
                        Ok(a) => {
                            failed = Some(PyValueError::new_err(format!(
                                "cache_ext: list_iterate callback answered {a}: expected CONTINUE (0), EVICT (1) or STOP (2)"
                            )));
                            IterAction::Stop
                        }
                        Err(err) => {
                            failed = Some(err);
                            IterAction::Stop
                        }
                    }
                },
                &mut opts,
                e,
            ))
        });
        ectx.busy.set(false);
        let r = r?;
        if let Some(err) = failed {
            return Err(err);
        }
        Ok(match r {
            Ok(IterRet::Done) => DONE_ITER,
            Ok(IterRet::MaxIterReached) => MAX_ITER_REACHED,
            Ok(IterRet::EvictArrayFilled) => EVICT_ARRAY_FILLED,
            Err(e) => errno(e),
        })
    }

    /// `bpf_cache_ext_list_sample`: take `ectx.request_nr_folios_to_evict × sample_size` folios
    /// from the head of `list`, propose the lowest `score_fn(folio)` of each `sample_size`, and
    /// put every folio taken back at the tail. 0 or a negative errno.
    #[pyo3(signature = (memcg, list, score_fn, ectx, sample_size=1))]
    fn list_sample(
        &self,
        memcg: MemcgId,
        list: ListId,
        score_fn: Bound<'_, PyAny>,
        ectx: PyRef<'_, Ectx>,
        sample_size: u32,
    ) -> PyResult<i64> {
        let e = ectx.get()?;
        let mut failed: Option<PyErr> = None;
        ectx.busy.set(true);
        let r = self.with_busy(|c| {
            Ok(c.list_sample(
                memcg,
                list,
                |v| {
                    if failed.is_some() {
                        return 0;
                    }
                    match score_fn.call1((snapshot(v),)).and_then(|s| s.extract::<i64>()) {
                        Ok(s) => s,
                        Err(err) => {
                            failed = Some(err);
                            0
                        }
                    }
                },
                &SamplingOptions { sample_size },
                e,
            ))
        });
        ectx.busy.set(false);
        let r = r?;
        if let Some(err) = failed {
            return Err(err);
        }
        Ok(code(r))
    }
}

#[pymethods]
impl Ectx {
    /// How many folios reclaim asks for.
    #[getter]
    fn request_nr_folios_to_evict(&self) -> PyResult<u64> {
        Ok(self.get()?.request_nr_folios_to_evict)
    }

    /// How many candidates were proposed so far.
    #[getter]
    fn nr_folios_to_evict(&self) -> PyResult<u64> {
        Ok(self.get()?.nr_folios_to_evict)
    }

    /// Propose `folio` (with `score`); False when the array is full.
    #[pyo3(signature = (folio, score=0))]
    fn push(&self, folio: FolioId, score: i64) -> PyResult<bool> {
        Ok(self.get()?.push(folio, score))
    }

    /// The candidates proposed so far.
    fn candidates(&self) -> PyResult<Vec<FolioId>> {
        Ok(self.get()?.candidates().to_vec())
    }
}

/// A Python object with cache_ext's hooks, as a [`CacheExtOps`].
pub struct PyOps {
    obj: Py<PyAny>,
    name: String,
    ctx: Py<Ctx>,
    ectx: Py<Ectx>,
    /// Which optional hooks the object has (`folio_added`, `folio_accessed`, `folio_evicted`).
    has: [bool; 3],
    /// The first exception a hook raised (shared with the caller, which keeps it when the run
    /// fails and the policy is dropped); no hook is called after it.
    error: Rc<RefCell<Option<PyErr>>>,
}

impl PyOps {
    /// `obj` as a policy: it must have `evict_folios` and `init`; its name is its `name`
    /// attribute (default: its class name).
    pub fn new(py: Python<'_>, obj: Py<PyAny>, error: Rc<RefCell<Option<PyErr>>>) -> PyResult<PyOps> {
        let o = obj.bind(py);
        for m in ["init", "evict_folios"] {
            if !o.hasattr(m)? {
                return Err(PyValueError::new_err(format!(
                    "cache_ext policy {}: no method '{m}' (a policy needs init(ctx, memcg) and \
                     evict_folios(ctx, ectx, memcg); see lrugen.cache_ext.Policy)",
                    o.repr()?
                )));
            }
        }
        let name: String = match o.getattr("name") {
            Ok(n) => n.extract().map_err(|_| {
                PyValueError::new_err("cache_ext policy: 'name' must be a string (the run is named cache_ext:<name>)")
            })?,
            Err(_) => o.get_type().name()?.to_string(),
        };
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') {
            return Err(PyValueError::new_err(format!(
                "cache_ext policy name '{name}': expected letters, digits, '_' or '-'"
            )));
        }
        let has = ["folio_added", "folio_accessed", "folio_evicted"].map(|m| o.hasattr(m).unwrap_or(false));
        Ok(PyOps {
            ctx: Py::new(
                py,
                Ctx {
                    ptr: Cell::new(std::ptr::null_mut()),
                    busy: Cell::new(false),
                },
            )?,
            ectx: Py::new(
                py,
                Ectx {
                    ptr: Cell::new(std::ptr::null_mut()),
                    busy: Cell::new(false),
                },
            )?,
            obj,
            name,
            has,
            error,
        })
    }

    /// Call `f` with the context (and the eviction request) set for its duration.
    fn call(
        &mut self,
        ctx: &mut CacheExtCtx<'_>,
        ectx: Option<&mut EvictionCtx>,
        f: impl FnOnce(Python<'_>, &Bound<'_, PyAny>, &Py<Ctx>, &Py<Ectx>) -> PyResult<()>,
    ) {
        if self.error.borrow().is_some() {
            return;
        }
        let r = Python::attach(|py| {
            let c = self.ctx.borrow(py);
            let e = self.ectx.borrow(py);
            c.ptr.set((ctx as *mut CacheExtCtx<'_>).cast::<CacheExtCtx<'static>>());
            e.ptr.set(ectx.map_or(std::ptr::null_mut(), |e| e as *mut EvictionCtx));
            let r = f(py, self.obj.bind(py), &self.ctx, &self.ectx);
            c.ptr.set(std::ptr::null_mut());
            e.ptr.set(std::ptr::null_mut());
            r
        });
        if let Err(e) = r {
            *self.error.borrow_mut() = Some(e);
        }
    }
}

impl CacheExtOps for PyOps {
    fn name(&self) -> &str {
        &self.name
    }

    fn init(&mut self, ctx: &mut CacheExtCtx<'_>, memcg: MemcgId) -> Result<(), String> {
        self.call(ctx, None, |_, o, c, _| o.call_method1("init", (c, memcg)).map(drop));
        match &*self.error.borrow() {
            None => Ok(()),
            Some(e) => Err(format!("cache_ext policy {}: init raised {e}", self.name)),
        }
    }

    fn folio_added(&mut self, ctx: &mut CacheExtCtx<'_>, folio: FolioId) {
        if self.has[0] {
            self.call(ctx, None, |_, o, c, _| {
                o.call_method1("folio_added", (c, folio)).map(drop)
            });
        }
    }

    fn folio_accessed(&mut self, ctx: &mut CacheExtCtx<'_>, folio: FolioId) {
        if self.has[1] {
            self.call(ctx, None, |_, o, c, _| {
                o.call_method1("folio_accessed", (c, folio)).map(drop)
            });
        }
    }

    fn folio_evicted(&mut self, ctx: &mut CacheExtCtx<'_>, folio: FolioId) {
        if self.has[2] {
            self.call(ctx, None, |_, o, c, _| {
                o.call_method1("folio_evicted", (c, folio)).map(drop)
            });
        }
    }

    fn evict_folios(&mut self, ctx: &mut CacheExtCtx<'_>, eviction_ctx: &mut EvictionCtx, memcg: MemcgId) {
        self.call(ctx, Some(eviction_ctx), |_, o, c, e| {
            o.call_method1("evict_folios", (c, e, memcg)).map(drop)
        });
    }
}
