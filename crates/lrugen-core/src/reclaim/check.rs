// SPDX-License-Identifier: GPL-2.0-only
//! The invariant checker: what must hold between reclaim passes, whatever the policy.
//!
//! * every allocated folio is on exactly one list of its own lruvec, or isolated; a free folio is
//!   on none; list links are consistent and list lengths equal the counters (policy check);
//! * free plus allocated frames equal the total, zone free counts equal the free folios;
//! * each memcg's usage equals the pages charged to it and its descendants;
//! * page-cache and swap-cache slots point to folios that point back; mapcounts equal the PTEs
//!   that map each folio; `NR_ISOLATED_*` equal the isolated pages;
//! * a large folio (`PG_head`) counts its `folio_nr_pages` in every count above, its tail frames
//!   belong to it and to nothing else, and a huge PMD maps the head of a PMD-sized anon folio
//!   at its aligned address, inside a VMA (docs/thp.md);
//! * every PTE lies in a VMA; each mm's rss and swap-entry counts equal its PTEs; every mapped
//!   anon folio is found by its rmap root's walk; each file VMA is registered once with its file.
//!
//! It is O(memory) and meant for tests and `--check` runs.

use super::Policy;
use crate::mm::folio::{pg, FolioId, NIL};
use crate::mm::memcg::MemcgId;
use crate::mm::pagecache::Slot;
use crate::mm::vm::{pmd_is_table, pte, MMAP_BASE_VPN, PMD_NONE, PMD_YOUNG, PTRS_PER_PTE};
use crate::mm::vmstat::Stat;
use crate::mm::Machine;

/// Check every invariant; the first violation is returned as a message.
pub fn check_invariants<P: Policy>(m: &Machine, p: &P) -> Result<(), String> {
    let n = m.folios.len();
    let mut seen = vec![0u8; n];
    for l in p.lists() {
        let mut err = None;
        m.folios
            .walk_list(l.list, |id| {
                let f = m.folios[id];
                seen[id as usize] += 1;
                if err.is_none() {
                    if seen[id as usize] > 1 {
                        err = Some(format!("folio {id} is on more than one list (again on {})", l.name));
                    } else if !f.test(pg::ALLOCATED) {
                        err = Some(format!("free folio {id} is on list {}", l.name));
                    } else if f.memcg != l.memcg || f.node() != l.node {
                        err = Some(format!(
                            "folio {id} of memcg {} node {} is on list {} of memcg {} node {}",
                            f.memcg,
                            f.node(),
                            l.name,
                            l.memcg,
                            l.node
                        ));
                    } else if !f.test(pg::LRU) {
                        err = Some(format!("folio {id} on list {} lacks PG_lru", l.name));
                    }
                }
                Ok(())
            })
            .map_err(|e| format!("list {} of memcg {} node {}: {e}", l.name, l.memcg, l.node))?;
        if let Some(e) = err {
            return Err(e);
        }
    }
    let mut allocated = 0u64;
    let mut charged = vec![0u64; m.memcgs.len()];
    let mut isolated = [0i64; 2];
    let mut next = 0 as FolioId;
    for id in 0..n as FolioId {
        if id < next {
            continue; // a tail of the large folio checked below
        }
        let f = m.folios[id];
        let nr = if f.test(pg::HEAD) {
            let order = m.folios.order(id);
            if !f.test(pg::ALLOCATED)
                || order == 0
                || order > 9
                || id % (1 << order) != 0
                || id as usize + (1 << order) > n
            {
                return Err(format!("folio {id} has PG_head with order {order}"));
            }
            for t in id + 1..id + (1 << order) {
                let tf = m.folios[t];
                if tf.test(pg::ALLOCATED) || tf.flags & 0xffff != 0 || tf.mapcount != 0 || tf.mapping != id {
                    return Err(format!("tail {t} of large folio {id} is used on its own"));
                }
            }
            next = id + (1 << order);
            1u64 << order
        } else {
            1
        };
        if !f.test(pg::ALLOCATED) {
            if f.flags & 0xffff != 0 || f.mapcount != 0 {
                return Err(format!(
                    "free folio {id} has flags {:#x} mapcount {}",
                    f.flags, f.mapcount
                ));
            }
            continue;
        }
        allocated += nr;
        if f.test(pg::CHARGED) {
            charged[f.memcg as usize] += nr;
        }
        if id == m.in_flight || f.test(pg::ZSPAGE) {
            continue;
        }
        if m.lru_add.folios().contains(&id) {
            if f.test(pg::LRU) || f.test(pg::ISOLATED) {
                return Err(format!(
                    "folio {id} waits in the lru_add batch but is on a list or isolated"
                ));
            }
            continue;
        }
        match (f.test(pg::LRU), f.test(pg::ISOLATED)) {
            (true, false) => {
                if seen[id as usize] != 1 {
                    return Err(format!("folio {id} has PG_lru but is on no list"));
                }
            }
            (false, true) => isolated[f.lru_type()] += nr as i64,
            (true, true) => return Err(format!("folio {id} is both on a list and isolated")),
            (false, false) => return Err(format!("allocated folio {id} is neither on a list nor isolated")),
        }
    }
    let pool_want = m.zram_bytes.div_ceil(crate::mm::PAGE_SIZE);
    if m.zram_pool.len() as u64 != pool_want {
        return Err(format!(
            "zram pool holds {} pages for {} compressed bytes",
            m.zram_pool.len(),
            m.zram_bytes
        ));
    }
    let zpct: Vec<u8> = (0..m.swap.high_water()).map(|s| m.swap.zram_pct(s)).collect();
    let stored: u64 = zpct
        .iter()
        .filter(|&&p| p > 0)
        .map(|&p| crate::mm::swap::zram_stored_bytes(p))
        .sum();
    if stored != m.zram_bytes {
        return Err(format!(
            "zram slots hold {stored} bytes but the pool counts {}",
            m.zram_bytes
        ));
    }
    // zram's mm_stat: pages stored and stored whole are the slots holding bytes and a whole page
    let (pages, huge) = zpct.iter().filter(|&&p| p > 0).fold((0u64, 0u64), |(n, h), &p| {
        (
            n + 1,
            h + (crate::mm::swap::zram_stored_bytes(p) == crate::mm::PAGE_SIZE) as u64,
        )
    });
    let z = &m.zram_stats;
    if (z.pages_stored, z.huge_pages) != (pages, huge) || z.max_used_pages < m.zram_pool.len() as u64 {
        return Err(format!(
            "zram counts {} pages stored, {} huge, max pool {}; slots hold {pages} pages, {huge} whole, pool {}",
            z.pages_stored,
            z.huge_pages,
            z.max_used_pages,
            m.zram_pool.len()
        ));
    }
    // less what the kernel used before the workload (`MachineConfig::zone_boot`)
    let boot: u64 = m.nodes.iter().flat_map(|nd| nd.zones.iter()).map(|z| z.boot_used).sum();
    let total = m.cfg.total_pages() - boot;
    let free: u64 = m.nodes.iter().map(|nd| nd.free_frames()).sum();
    if free + allocated != total {
        return Err(format!("free {free} + allocated {allocated} != total {total}"));
    }
    // memcg usage: local charges summed over each subtree, pages and kernel memory
    // (`kmem_pages`: page tables, whole pages of slab, the rest of an mm's)
    for mc in m.memcgs.iter() {
        let kmem: i64 = (0..m.nr_nodes())
            .map(|nd| m.lruvec_state_local(mc.id, nd, Stat::MemcgKmem))
            .sum();
        if kmem < 0 {
            return Err(format!("memcg {} ({}): kernel memory {kmem} < 0", mc.id, mc.path));
        }
        if mc.slab_bytes.div_ceil(crate::mm::PAGE_SIZE) as i64 > kmem {
            return Err(format!(
                "memcg {} ({}): {} slab bytes but {kmem} kernel pages charged",
                mc.id, mc.path, mc.slab_bytes
            ));
        }
        charged[mc.id as usize] += kmem as u64;
    }
    for mc in m.memcgs.iter() {
        if mc.usage_local != charged[mc.id as usize] {
            return Err(format!(
                "memcg {} ({}): {} pages charged locally but {} folios and kernel pages belong to it",
                mc.id, mc.path, mc.usage_local, charged[mc.id as usize]
            ));
        }
        let sub: u64 = m
            .memcgs
            .subtree(mc.id)
            .iter()
            .map(|&c| charged[c as usize] + m.memcgs.stocked(c))
            .sum();
        if mc.usage != sub {
            return Err(format!(
                "memcg {} ({}): usage {} != {} pages charged or stocked in its subtree",
                mc.id, mc.path, mc.usage, sub
            ));
        }
    }
    m.memcgs.check_stocks()?;
    let iso = |s: Stat| -> i64 { (0..m.nr_nodes()).map(|nd| m.lruvec_state(0 as MemcgId, nd, s)).sum() };
    if iso(Stat::NrIsolatedAnon) != isolated[0] || iso(Stat::NrIsolatedFile) != isolated[1] {
        return Err(format!(
            "nr_isolated_anon/file {}/{} but {}/{} pages isolated",
            iso(Stat::NrIsolatedAnon),
            iso(Stat::NrIsolatedFile),
            isolated[0],
            isolated[1]
        ));
    }
    // page cache
    let mut shadow_leaves = 0;
    for (fi, file) in m.files.iter().enumerate() {
        let (mut cached, mut dirty) = (0, 0);
        // per leaf: (shadows, folios)
        let mut leaves = std::collections::BTreeMap::<u64, (u32, u32)>::new();
        for (idx, s) in file.slots.iter() {
            let l = leaves.entry(idx >> crate::mm::pagecache::CHUNK_SHIFT).or_default();
            match s {
                Slot::Shadow(_) => l.0 += 1,
                _ => l.1 += 1,
            }
            if let Slot::Folio(id) = s {
                cached += 1;
                let f = m.folios[id];
                dirty += f.test(pg::DIRTY) as u64;
                if !f.test(pg::ALLOCATED) || f.is_anon() || f.mapping != fi as u32 || f.index as u64 != idx {
                    return Err(format!(
                        "page cache of file {fi} index {idx} points to folio {id} which does not point back"
                    ));
                }
            }
        }
        if cached != file.nr_pages {
            return Err(format!(
                "file {fi}: {cached} cached pages but nr_pages {}",
                file.nr_pages
            ));
        }
        if dirty != file.nr_dirty {
            return Err(format!("file {fi}: {dirty} dirty pages but nr_dirty {}", file.nr_dirty));
        }
        let only = leaves.values().filter(|&&(v, n)| v > 0 && n == 0).count();
        let listed = file
            .leaves
            .iter()
            .filter(|l| l.lru != crate::mm::pagecache::NOT_LISTED)
            .count();
        if only != listed {
            return Err(format!(
                "file {fi}: {only} leaves hold only shadows but {listed} are on the shadow-node list"
            ));
        }
        shadow_leaves += only as u64;
    }
    let ws_nodes: i64 = (0..m.nr_nodes())
        .map(|n| m.lruvec_state(crate::mm::memcg::ROOT_MEMCG, n, Stat::WorkingsetNodes))
        .sum();
    if m.shadow_lru.total() != shadow_leaves || ws_nodes != shadow_leaves as i64 {
        return Err(format!(
            "{shadow_leaves} shadow-only leaves, {} on the shadow-node lists, workingset_nodes {ws_nodes}",
            m.shadow_lru.total()
        ));
    }
    // swap cache
    // swap cache: every cached slot held by exactly one swap-cache folio; a folio entry for each
    // cached slot a swap entry holds, naming that folio, and none for any other slot; shadows
    // only at swapped-out slots; no slot's class with a root unless cached
    let mut holders = vec![NIL; m.swap.high_water() as usize];
    for id in 0..n as FolioId {
        let f = m.folios[id];
        if f.test(pg::ALLOCATED) && f.test(pg::SWAPCACHE) {
            let slot = f.swap_slot();
            if slot >= m.swap.high_water() || !m.swap.cached(slot) {
                return Err(format!(
                    "folio {id} is in the swap cache at slot {slot}, which is not cached"
                ));
            }
            if holders[slot as usize] != NIL {
                return Err(format!(
                    "swap slot {slot} is held by folios {} and {id}",
                    holders[slot as usize]
                ));
            }
            holders[slot as usize] = id;
        }
    }
    for slot in 0..m.swap.high_water() {
        if m.swap.cached(slot) != (holders[slot as usize] != NIL) {
            return Err(format!("swap slot {slot}: cached but no folio holds it"));
        }
        if (m.swap.class_of(slot).root != crate::mm::swap::NO_ROOT) != m.swap.cached(slot) {
            return Err(format!(
                "swap slot {slot}: a root without a swap-cache folio, or none with one"
            ));
        }
        if !m.swap.in_use(slot) && m.swap.class_of(slot) != crate::mm::swap::SlotClass::NONE {
            return Err(format!("free swap slot {slot} has a class"));
        }
    }
    for (slot, e) in m.swap.cache_entries() {
        let ok = match e {
            Slot::Folio(id) => m.swap.count(slot) > 0 && holders[slot as usize] == id,
            Slot::Shadow(_) => m.swap.count(slot) > 0 && !m.swap.cached(slot),
            Slot::Empty => false,
        };
        if !ok {
            return Err(format!(
                "swap slot {slot} (count {}, cached {}) has the entry {e:?}",
                m.swap.count(slot),
                m.swap.cached(slot)
            ));
        }
    }
    for slot in 0..m.swap.high_water() {
        if m.swap.cached(slot)
            && m.swap.count(slot) > 0
            && m.swap.cache_slot(slot) != Slot::Folio(holders[slot as usize])
        {
            return Err(format!(
                "swap slot {slot}: an entry holds it but its folio is not found by it"
            ));
        }
    }
    // mapcounts against the page tables; per-mm rss and swap counts; anon folios reachable
    // through their rmap root
    let mut maps = vec![0u32; n];
    let mut swaprefs = vec![0u32; m.swap.high_water() as usize];
    for mm in &m.mms {
        let (mut anon, mut file, mut swap) = (0u64, 0u64, 0u64);
        for (pi, &pmd) in mm.pmds.iter().enumerate() {
            if !pmd_is_table(pmd) {
                if pmd == PMD_NONE {
                    continue;
                }
                // a huge PMD: the head of a PMD-sized anon folio, at the aligned address, in a VMA
                let base = MMAP_BASE_VPN + (pi * PTRS_PER_PTE) as u32;
                let id = pmd & pte::PFN_MASK;
                let f = m.folios[id];
                let v = mm.find_vma(base).map(|vi| mm.vmas[vi]);
                if pmd & pte::PRESENT == 0
                    || !f.test(pg::ALLOCATED)
                    || !f.is_anon()
                    || m.folios.nr_pages(id) != PTRS_PER_PTE as u32
                    || f.index != base
                    || v.is_none_or(|v| v.end < base + PTRS_PER_PTE as u32)
                {
                    return Err(format!(
                        "mm {}: huge PMD {pmd:#x} at {base:#x} does not map a PMD-sized anon folio there",
                        mm.id
                    ));
                }
                let r = m.anon_root(id);
                if mm.anon_root != r || !m.mms[r as usize].anon_family.contains(&mm.id) {
                    return Err(format!(
                        "mm {} maps folio {id} by a huge PMD its rmap cannot find",
                        mm.id
                    ));
                }
                maps[id as usize] += 1;
                anon += PTRS_PER_PTE as u64;
                continue;
            }
            for (i, &e) in m.ptes.table(pmd & !PMD_YOUNG).iter().take(PTRS_PER_PTE).enumerate() {
                let vpn = MMAP_BASE_VPN + (pi * PTRS_PER_PTE + i) as u32;
                if e & (pte::PRESENT | pte::SWAP | pte::ZERO) != 0 && mm.find_vma(vpn).is_none() {
                    return Err(format!("mm {}: PTE {e:#x} at {vpn:#x} outside every VMA", mm.id));
                }
                if e & pte::PRESENT != 0 {
                    let id = e & pte::PFN_MASK;
                    maps[id as usize] += 1;
                    let f = m.folios[id];
                    if f.is_anon() {
                        anon += 1;
                        let r = m.anon_root(id);
                        let root = &m.mms[r as usize];
                        if f.index != vpn || mm.anon_root != r || !root.anon_family.contains(&mm.id) {
                            return Err(format!(
                                "mm {} maps anon folio {id} at {vpn:#x}, which its rmap (root {r}, page {:#x}) cannot find",
                                mm.id, f.index
                            ));
                        }
                    } else {
                        file += 1;
                    }
                } else if e & pte::SWAP != 0 {
                    swaprefs[(e & pte::PFN_MASK) as usize] += 1;
                    swap += 1;
                }
            }
        }
        if (anon, file, swap) != (mm.rss_anon, mm.rss_file, mm.swap_ents) {
            return Err(format!(
                "mm {}: rss anon/file and swap entries {}/{}/{} but its PTEs hold {anon}/{file}/{swap}",
                mm.id, mm.rss_anon, mm.rss_file, mm.swap_ents
            ));
        }
        // i_mmap: each file VMA of a live mm is registered once, and nothing else is
        if mm.alive {
            for v in mm.vmas.iter().filter(|v| !v.is_anon()) {
                let k = m.files[v.file as usize]
                    .mappings
                    .iter()
                    .filter(|&&x| x == (mm.id, v.start))
                    .count();
                if k != 1 {
                    return Err(format!(
                        "mm {}: file VMA at {:#x} is registered {k} times with file {}",
                        mm.id, v.start, v.file
                    ));
                }
            }
        }
    }
    for (fi, file) in m.files.iter().enumerate() {
        for &(mm, start) in &file.mappings {
            let x = &m.mms[mm as usize];
            let ok = x.alive
                && x.find_vma(start).is_some_and(|vi| {
                    let v = x.vmas[vi];
                    v.start == start && !v.is_anon() && v.file as usize == fi
                });
            if !ok {
                return Err(format!("file {fi}: stale mapping entry (mm {mm}, {start:#x})"));
            }
        }
    }
    for (id, &nmaps) in maps.iter().enumerate() {
        let mc = m.folios[id as FolioId].mapcount as u32;
        if nmaps != mc {
            return Err(format!("folio {id}: mapcount {mc} but {nmaps} PTEs map it"));
        }
    }
    // the boot shmem's page cache holds the slots of its swapped-out folios, and `nr_shmem`
    // counts the folios still in it, node by node
    for &s in &m.boot_shmem.slots {
        swaprefs[s as usize] += 1;
    }
    if m.boot_shmem.mm.is_some() {
        let mut per_node = vec![0i64; m.nodes.len()];
        for id in 0..n as FolioId {
            let f = m.folios[id];
            if f.test(pg::ALLOCATED) && f.is_anon() && m.is_boot_shmem(id) && !m.boot_shmem_holds(id) {
                per_node[f.node()] += 1;
            }
        }
        for (nd, &k) in per_node.iter().enumerate() {
            let v = m.lruvec_state_local(crate::mm::memcg::ROOT_MEMCG, nd, Stat::NrShmem);
            if v != k {
                return Err(format!(
                    "node {nd}: nr_shmem {v} but {k} boot shmem folios not written out"
                ));
            }
        }
    }
    for (slot, &r) in swaprefs.iter().enumerate() {
        if r != m.swap.count(slot as u32) {
            return Err(format!(
                "swap slot {slot}: count {} but {r} PTEs (and the boot shmem's page cache) hold it",
                m.swap.count(slot as u32)
            ));
        }
    }
    p.check(m)
}
