// SPDX-License-Identifier: GPL-2.0-only
//! Transparent huge pages: the `transparent_hugepage` knob and which anonymous faults may be
//! served by a PMD-sized folio (mm/huge_memory.c, include/linux/huge_mm.h, docs/thp.md).
//!
//! This is the first slice of large folios: the knob ([`Thp`], a machine setting), the VMA flags
//! `MADV_HUGEPAGE`/`MADV_NOHUGEPAGE` set (`hugepage_madvise`, `vmf::HUGEPAGE`/`vmf::NOHUGEPAGE`),
//! and the decision a fault makes ([`fault_allows_pmd`]). What is modelled and what is not yet
//! is listed in docs/thp.md.

use super::vm::{vmf, Vma, PTRS_PER_PTE};

/// Order of a PMD-mapped folio (`HPAGE_PMD_ORDER`): 2 MiB of 4 KiB pages.
pub const HPAGE_PMD_ORDER: u32 = 9;
/// Pages of a PMD-mapped folio (`HPAGE_PMD_NR`).
pub const HPAGE_PMD_NR: u32 = 1 << HPAGE_PMD_ORDER;

const _: () = assert!(HPAGE_PMD_NR as usize == PTRS_PER_PTE);

/// `/sys/kernel/mm/transparent_hugepage/enabled`.
///
/// The model's default is `never`, which every run had before THP was modelled, and which the
/// kernel fixtures' guests boot with (`transparent_hugepage=never` on their command line);
/// Debian's kernels default to `always` (`CONFIG_TRANSPARENT_HUGEPAGE_ALWAYS`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Thp {
    /// Every anonymous mapping that can take a PMD-sized folio gets one at its first fault
    /// (`TRANSPARENT_HUGEPAGE_FLAG`), unless `MADV_NOHUGEPAGE`.
    Always,
    /// Only mappings advised `MADV_HUGEPAGE` (`TRANSPARENT_HUGEPAGE_REQ_MADV_FLAG`).
    Madvise,
    /// None (neither flag set).
    #[default]
    Never,
}

impl Thp {
    /// The knob's value as the sysfs file and the boot parameter spell it.
    pub fn name(self) -> &'static str {
        match self {
            Thp::Always => "always",
            Thp::Madvise => "madvise",
            Thp::Never => "never",
        }
    }

    /// Parse `always`, `madvise` or `never` (the words the sysfs file accepts).
    pub fn parse(s: &str) -> Option<Thp> {
        match s {
            "always" => Some(Thp::Always),
            "madvise" => Some(Thp::Madvise),
            "never" => Some(Thp::Never),
            _ => None,
        }
    }

    /// Whether it is `never` (serialised only when it is not, so that the configuration of every
    /// run made before THP existed reads back the same).
    pub fn is_never(&self) -> bool {
        *self == Thp::Never
    }

    /// The sysfs part of the VMA check (`hugepage_flags_enabled` and
    /// `hugepage_flags_always`, or `VM_HUGEPAGE`): whether a VMA with `vm_flags` may have a
    /// PMD-sized folio as far as the knob says.
    #[inline]
    pub fn enabled_for(self, vm_flags: u32) -> bool {
        match self {
            Thp::Always => true,
            Thp::Madvise => vm_flags & vmf::HUGEPAGE != 0,
            Thp::Never => false,
        }
    }
}

/// `hugepage_madvise`: the VMA flags after `MADV_HUGEPAGE` (`huge` true) or `MADV_NOHUGEPAGE`.
/// The same in 6.1, 6.12 and 7.2 (6.1 also registers the mm with khugepaged, which the model
/// does not have).
pub fn hugepage_madvise(flags: u32, huge: bool) -> u32 {
    if huge {
        (flags & !vmf::NOHUGEPAGE) | vmf::HUGEPAGE
    } else {
        (flags & !vmf::HUGEPAGE) | vmf::NOHUGEPAGE
    }
}

/// Whether an anonymous fault at `vpn` may allocate a PMD-sized folio, as far as the VMA and the
/// knob decide: `hugepage_vma_check(vma, vm_flags, false, true, true)` (6.1) or
/// `thp_vma_allowable_order(vma, vm_flags, TVA_IN_PF | TVA_ENFORCE_SYSFS, PMD_ORDER)` (6.12;
/// 7.2's `TVA_PAGEFAULT`), then `transhuge_vma_suitable` in `do_huge_pmd_anonymous_page`: not
/// `VM_NOHUGEPAGE`, enabled by the knob, anonymous, and the aligned 2 MiB range around `vpn`
/// inside the VMA. Whether a PTE table is already there (`pmd_none`) is the caller's to check.
#[inline]
pub fn fault_allows_pmd(thp: Thp, vma: &Vma, vpn: u32) -> bool {
    if vma.flags & vmf::NOHUGEPAGE != 0 || !thp.enabled_for(vma.flags) || !vma.is_anon() {
        return false;
    }
    let start = vpn & !(HPAGE_PMD_NR - 1);
    start >= vma.start && start as u64 + HPAGE_PMD_NR as u64 <= vma.end as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mm::vm::MMAP_BASE_VPN;

    fn vma(start: u32, pages: u32, flags: u32) -> Vma {
        Vma {
            start,
            end: start + pages,
            flags,
            file: 0,
            pgoff: 0,
            compressed_pct: 0,
            swap_ra: Default::default(),
        }
    }

    #[test]
    fn knob_words_round_trip() {
        for t in [Thp::Always, Thp::Madvise, Thp::Never] {
            assert_eq!(Thp::parse(t.name()), Some(t));
        }
        assert_eq!(Thp::parse("Always"), None);
        assert_eq!(Thp::parse("[always]"), None);
        assert_eq!(Thp::default(), Thp::Never);
    }

    #[test]
    fn madvise_flags_exclude_each_other() {
        let f = hugepage_madvise(vmf::ANON | vmf::NOHUGEPAGE, true);
        assert_eq!(f, vmf::ANON | vmf::HUGEPAGE);
        let f = hugepage_madvise(f, false);
        assert_eq!(f, vmf::ANON | vmf::NOHUGEPAGE);
    }

    #[test]
    fn knob_and_flags_decide() {
        let base = MMAP_BASE_VPN; // 2 MiB aligned
        let plain = vma(base, 1024, vmf::ANON);
        let advised = vma(base, 1024, vmf::ANON | vmf::HUGEPAGE);
        let refused = vma(base, 1024, vmf::ANON | vmf::NOHUGEPAGE);
        assert!(fault_allows_pmd(Thp::Always, &plain, base + 3));
        assert!(!fault_allows_pmd(Thp::Madvise, &plain, base + 3));
        assert!(fault_allows_pmd(Thp::Madvise, &advised, base + 700));
        assert!(!fault_allows_pmd(Thp::Always, &refused, base));
        for v in [&plain, &advised, &refused] {
            assert!(!fault_allows_pmd(Thp::Never, v, base));
        }
        let file = vma(base, 1024, vmf::HUGEPAGE);
        assert!(!fault_allows_pmd(Thp::Always, &file, base));
    }

    #[test]
    fn the_aligned_range_must_fit_in_the_vma() {
        let base = MMAP_BASE_VPN;
        // [base + 1, base + 1025): the first 2 MiB range starts before it, the second fits
        let v = vma(base + 1, 1024, vmf::ANON);
        assert!(!fault_allows_pmd(Thp::Always, &v, base + 5));
        assert!(fault_allows_pmd(Thp::Always, &v, base + 512));
        assert!(fault_allows_pmd(Thp::Always, &v, base + 1023));
        let short = vma(base + 512, 511, vmf::ANON);
        assert!(!fault_allows_pmd(Thp::Always, &short, base + 512));
    }
}
