// SPDX-License-Identifier: GPL-2.0-only
//! The guest's `/init` script, the module load order, and the initramfs archive.

use crate::{Error, LruMode};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Marker lines around each captured file on the serial console.
pub const BEGIN: &str = "=== lrugen begin ";
/// See [`BEGIN`].
pub const END: &str = "=== lrugen end ";

/// What `/init` does.
#[derive(Clone, Debug)]
pub struct InitSpec {
    /// Modules to `insmod`, in order, as paths inside the initramfs.
    pub modules: Vec<String>,
    /// `memory.max` of `/t`, in bytes (0: `max`, no limit: the workload runs under global
    /// pressure, still in `/t` so that its `memory.stat` is read).
    pub memcg_max_bytes: u64,
    /// MGLRU (with the `enabled` value) or the classic LRU.
    pub lru: LruMode,
    /// `vm.swappiness`, if set.
    pub swappiness: Option<u32>,
    /// `vm.page-cluster`.
    pub page_cluster: u32,
    /// `/sys/block/vda/queue/read_ahead_kb` of the data disk, if set (the kernel's default is
    /// 128).
    pub read_ahead_kb: Option<u32>,
    /// `/sys/kernel/mm/lru_gen/min_ttl_ms`, if set.
    pub min_ttl_ms: Option<u32>,
    /// `swapon /dev/vdb` (a second virtio disk made with `mkswap` on the host).
    pub swap: bool,
    /// Swap on zram instead: a `/dev/zram0` of this many bytes (0: none), made with `mkswap` and
    /// enabled with `swapon` in the guest (the `zram` module and its dependencies are loaded).
    pub zram_bytes: u64,
    /// Mount the data disk read-write (the op file writes its files).
    pub data_rw: bool,
    /// Have the replayer dump `/sys/kernel/debug/lru_gen` after each full window.
    pub lru_gen_every_window: bool,
    /// And `/sys/kernel/debug/lru_gen_full` too.
    pub lru_gen_full_every_window: bool,
    /// The memcg of each task of the op file (children of `/t`; empty: every task in `/t`). `/t`
    /// then delegates `memory` to them, the replayer starts in task 0's and moves each task into
    /// its own (`--memcgs`), and each child's `memory.stat` is dumped at the end of the replay.
    pub task_memcgs: Vec<String>,
    /// Have the replayer print how far it got every this many access ops (`--progress`; 0:
    /// not), so that a replay the OOM killer ends tells where it died.
    pub progress_every: u64,
    /// ftrace events to trace during the replay ([`check_ftrace`]), dumped after it as `ftrace`.
    pub ftrace: Vec<String>,
    /// The ftrace buffer per CPU, KiB (`buffer_size_kb`).
    pub ftrace_buffer_kb: u32,
    /// Record each traced event's kernel stack (`options/stacktrace`).
    pub ftrace_stacktrace: bool,
    /// `transparent_hugepage` (also on the kernel command line): unless `never`, written to
    /// sysfs with the kernel's other THP defaults, and read back into the serial log
    /// ([`THP_ENABLED`], [`THP_DEFRAG`]).
    pub thp: lrugen::mm::thp::Thp,
    /// Memory tiers (a guest of several NUMA nodes, [`crate::numa_args`]): the demotion and NUMA
    /// balancing knobs written before the replay ([`tier_knobs`]), the tiers read back into the
    /// serial log ([`MEMORY_TIERS`]) and the replayer's `numa_maps` dumped after its last access.
    pub tiers: Option<lrugen::mm::tiers::TierConfig>,
}

/// The dump of the guest's memory tiers: a line `memory_tierN NODELIST` per tier.
pub const MEMORY_TIERS: &str = "memory-tiers";

/// The writes that set `t`'s knobs in the guest, as (value, file): `demotion_enabled`,
/// `kernel.numa_balancing`, the promotion rate limit, and NUMA balancing's debugfs knobs (the
/// scan delay, period, size and the hot threshold; `numa_balancing_*` sysctls before 6.6 moved
/// them to `/sys/kernel/debug/sched/numa_balancing/`, and the hot threshold with them).
pub fn tier_knobs(t: &lrugen::mm::tiers::TierConfig) -> Vec<(String, &'static str)> {
    vec![
        // no watermark boosting: the model has no page blocks of migrate types, whose fallback
        // steals boost a zone's watermarks (`boost_watermark`); a boosted kswapd reclaims without
        // swapping or demoting (`may_swap` 0), finds nothing and, 16 times over, gives up on the
        // node (`kswapd_failures`), which a 6.12 guest did in the populate pass
        ("0".to_string(), "/proc/sys/vm/watermark_boost_factor"),
        (
            if t.demotion_enabled { "true" } else { "false" }.to_string(),
            "/sys/kernel/mm/numa/demotion_enabled",
        ),
        (
            t.scan_delay_ms.to_string(),
            "/sys/kernel/debug/sched/numa_balancing/scan_delay_ms",
        ),
        (
            t.scan_period_ms.to_string(),
            "/sys/kernel/debug/sched/numa_balancing/scan_period_min_ms",
        ),
        (
            t.scan_period_max_ms.to_string(),
            "/sys/kernel/debug/sched/numa_balancing/scan_period_max_ms",
        ),
        (
            t.scan_size_mb.to_string(),
            "/sys/kernel/debug/sched/numa_balancing/scan_size_mb",
        ),
        (
            t.hot_threshold_ms.to_string(),
            "/sys/kernel/debug/sched/numa_balancing/hot_threshold_ms",
        ),
        (
            t.promote_rate_limit_mbps.to_string(),
            "/proc/sys/kernel/numa_balancing_promote_rate_limit_MBps",
        ),
        // last: balancing starts with the knobs in place
        (t.numa_balancing.to_string(), "/proc/sys/kernel/numa_balancing"),
    ]
}

/// The dump of `/sys/module/damon_stat/parameters/enabled` ([`crate::KernelRun::damon_stat`]).
pub const DAMON_STAT: &str = "damon-stat";
/// The dump of `/sys/kernel/mm/transparent_hugepage/enabled` after `/init` set it (runs with
/// THP other than `never`).
pub const THP_ENABLED: &str = "thp-enabled";
/// The dump of `/sys/kernel/mm/transparent_hugepage/defrag`, likewise.
pub const THP_DEFRAG: &str = "thp-defrag";

/// The ftrace buffer per CPU by default, KiB: room for about a million short events, in a guest
/// of 512 MiB. The kernel allocates it when it is set, so it is guest memory the workload does
/// not have (`lrugen kernel --ftrace-buffer`).
pub const FTRACE_BUFFER_KB: u32 = 65536;

/// Check an ftrace event of `lrugen kernel --ftrace`: a tracepoint `SUBSYSTEM/EVENT`, or a kprobe
/// or kretprobe as `kprobe_events` reads it, `p:NAME SYMBOL[+OFFSET] [FETCHARGS]` or `r:NAME
/// SYMBOL [FETCHARGS]` (Documentation/trace/kprobetrace.rst). Names are identifiers; the text
/// goes into the guest's `/init` inside single quotes, so it may not hold one (or a newline).
pub fn check_ftrace(spec: &str) -> Result<(), String> {
    let ident = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if spec.contains(['\'', '\n', '\r']) {
        return Err(format!("`{spec}`: expected no quote or newline in an ftrace event"));
    }
    if let Some(rest) = spec.strip_prefix("p:").or_else(|| spec.strip_prefix("r:")) {
        let mut w = rest.split_whitespace();
        let (name, symbol) = (w.next().unwrap_or(""), w.next().unwrap_or(""));
        let sym = symbol.split('+').next().unwrap_or("");
        if ident(name) && ident(sym) {
            return Ok(());
        }
        return Err(format!(
            "`{spec}`: expected a kprobe as `p:NAME SYMBOL [FETCHARGS]` or `r:NAME SYMBOL [FETCHARGS]`"
        ));
    }
    match spec.split_once('/') {
        Some((sys, ev)) if ident(sys) && ident(ev) => Ok(()),
        _ => Err(format!(
            "`{spec}`: expected a tracepoint as SUBSYSTEM/EVENT (vmscan/mm_vmscan_lru_isolate) or a kprobe as p:NAME SYMBOL"
        )),
    }
}

/// The `/init` lines that set up tracing of `events` before the replay: `tracefs`, the
/// monotonic clock (the windows' clock), the buffer, each kprobe defined and every event enabled.
fn ftrace_setup(o: &mut String, events: &[String], buffer_kb: u32, stacktrace: bool) {
    let t = "/sys/kernel/tracing";
    let _ = writeln!(o, "mount -t tracefs tracefs {t} || echo 'lrugen: mount tracefs failed'");
    let _ = writeln!(
        o,
        "echo 0 > {t}/tracing_on\necho mono > {t}/trace_clock || echo 'lrugen: trace_clock mono failed'"
    );
    let _ = writeln!(
        o,
        "echo {buffer_kb} > {t}/buffer_size_kb || echo 'lrugen: buffer_size_kb failed'"
    );
    for e in events {
        if let Some(rest) = e.strip_prefix("p:").or_else(|| e.strip_prefix("r:")) {
            let name = rest.split_whitespace().next().unwrap_or("");
            let _ = writeln!(o, "echo '{e}' >> {t}/kprobe_events || echo 'lrugen: kprobe {e} failed'");
            let _ = writeln!(
                o,
                "echo 1 > {t}/events/kprobes/{name}/enable || echo 'lrugen: enable {name} failed'"
            );
        } else {
            let _ = writeln!(o, "echo 1 > {t}/events/{e}/enable || echo 'lrugen: enable {e} failed'");
        }
    }
    if stacktrace {
        let _ = writeln!(
            o,
            "echo 1 > {t}/options/stacktrace || echo 'lrugen: options/stacktrace failed'"
        );
    }
    let _ = writeln!(o, "echo > {t}/trace\necho 1 > {t}/tracing_on");
}

impl InitSpec {
    /// The distinct memcgs of [`Self::task_memcgs`], in order of first use.
    pub fn memcgs(&self) -> Vec<&str> {
        let mut v: Vec<&str> = Vec::new();
        for m in &self.task_memcgs {
            if !v.contains(&m.as_str()) {
                v.push(m);
            }
        }
        v
    }
}

/// The end-of-replay dump of a child memcg's `memory.stat` is named this and the memcg's name.
pub const CHILD_STAT_DUMP: &str = "memory.stat:";

/// The `/init` script (busybox `sh`).
pub fn init_script(s: &InitSpec) -> String {
    let mut o = String::new();
    o.push_str("#!/bin/sh\n# generated by lrugen-kernel\nexport PATH=/bin\necho\n");
    o.push_str("mount -t proc proc /proc\nmount -t sysfs sysfs /sys\nmount -t devtmpfs devtmpfs /dev\n");
    o.push_str("mount -t debugfs debugfs /sys/kernel/debug\nmount -t cgroup2 cgroup2 /sys/fs/cgroup\n");
    for m in &s.modules {
        let _ = writeln!(o, "insmod {m} || echo 'lrugen: insmod {m} failed'");
    }
    let _ = writeln!(
        o,
        "mkdir -p /data\nmount -t ext4 -o {} /dev/vda /data || echo 'lrugen: mount failed'",
        if s.data_rw { "rw" } else { "ro" }
    );
    let enabled = match &s.lru {
        LruMode::Mglru { enabled } => enabled.as_str(),
        LruMode::Classic => "n",
    };
    let _ = writeln!(o, "echo {enabled} > /sys/kernel/mm/lru_gen/enabled");
    if let Some(t) = s.min_ttl_ms {
        let _ = writeln!(o, "echo {t} > /sys/kernel/mm/lru_gen/min_ttl_ms");
    }
    if let Some(v) = s.swappiness {
        let _ = writeln!(o, "echo {v} > /proc/sys/vm/swappiness");
    }
    let _ = writeln!(o, "echo {} > /proc/sys/vm/page-cluster", s.page_cluster);
    if !s.thp.is_never() {
        // `hugepage_init` clears every THP flag on a machine of less than 512 MiB (the guests'
        // usual 512 MiB leave less), whatever `transparent_hugepage=` said; the knobs are put
        // back as a larger machine boots with them: the run's `enabled`, `defrag` `madvise`,
        // the huge zero page, khugepaged's defrag (docs/thp.md, "Real-kernel fixtures")
        let t = "/sys/kernel/mm/transparent_hugepage";
        for (v, f) in [
            (s.thp.name(), "enabled"),
            ("madvise", "defrag"),
            ("1", "use_zero_page"),
            ("1", "khugepaged/defrag"),
        ] {
            let _ = writeln!(o, "echo {v} > {t}/{f} || echo 'lrugen: {f} failed'");
        }
    }
    // The model maps one page per file fault: no fault-around (do_fault_around), which would map
    // the cached neighbours with young PTEs.
    o.push_str("echo 4096 > /sys/kernel/debug/fault_around_bytes || echo 'lrugen: fault_around_bytes failed'\n");
    if let Some(kb) = s.read_ahead_kb {
        let _ = writeln!(
            o,
            "echo {kb} > /sys/block/vda/queue/read_ahead_kb || echo 'lrugen: read_ahead_kb failed'"
        );
    }
    if s.swap {
        o.push_str("swapon /dev/vdb || echo 'lrugen: swapon failed'\n");
    }
    if s.zram_bytes > 0 {
        let _ = writeln!(o, "echo {} > /sys/block/zram0/disksize", s.zram_bytes);
        o.push_str("mkswap /dev/zram0 >/dev/null || echo 'lrugen: mkswap zram0 failed'\n");
        o.push_str("swapon /dev/zram0 || echo 'lrugen: swapon zram0 failed'\n");
    }
    o.push_str("echo +memory > /sys/fs/cgroup/cgroup.subtree_control\nmkdir /sys/fs/cgroup/t\n");
    if s.memcg_max_bytes == 0 {
        o.push_str("echo max > /sys/fs/cgroup/t/memory.max\n");
    } else {
        let _ = writeln!(o, "echo {} > /sys/fs/cgroup/t/memory.max", s.memcg_max_bytes);
    }
    if !s.task_memcgs.is_empty() {
        o.push_str("echo +memory > /sys/fs/cgroup/t/cgroup.subtree_control\n");
        for m in s.memcgs() {
            let _ = writeln!(o, "mkdir /sys/fs/cgroup/t/{m}");
        }
    }
    if let Some(t) = &s.tiers {
        for (v, f) in tier_knobs(t) {
            let _ = writeln!(o, "echo {v} > {f} || echo 'lrugen: {f} failed'");
        }
    }
    o.push_str("sync\necho 3 > /proc/sys/vm/drop_caches\n");
    let cap = |o: &mut String, name: &str, file: &str| {
        let _ = writeln!(o, "echo '{BEGIN}{name}'\ncat {file}\necho '{END}{name}'");
    };
    // the machine the workload starts on: its zones (managed pages, watermarks, lowmem_reserve)
    // and its free memory
    cap(&mut o, "zoneinfo-before", "/proc/zoneinfo");
    cap(&mut o, "meminfo-before", "/proc/meminfo");
    cap(&mut o, "uname", "/proc/sys/kernel/osrelease");
    cap(&mut o, "enabled", "/sys/kernel/mm/lru_gen/enabled");
    cap(&mut o, "cpus-online", "/sys/devices/system/cpu/online");
    // DAMON_STAT as the guest runs it (`Y`/`N`; nothing where the kernel has none)
    let _ = writeln!(
        o,
        "echo '{BEGIN}{DAMON_STAT}'\ncat /sys/module/damon_stat/parameters/enabled 2>/dev/null\necho '{END}{DAMON_STAT}'"
    );
    if !s.thp.is_never() {
        cap(&mut o, THP_ENABLED, "/sys/kernel/mm/transparent_hugepage/enabled");
        cap(&mut o, THP_DEFRAG, "/sys/kernel/mm/transparent_hugepage/defrag");
    }
    if s.tiers.is_some() {
        let _ = writeln!(
            o,
            "echo '{BEGIN}{MEMORY_TIERS}'\nfor t in /sys/devices/virtual/memory_tiering/memory_tier*; do echo ${{t##*/}} $(cat $t/nodelist); done\necho '{END}{MEMORY_TIERS}'"
        );
    }
    cap(&mut o, "vmstat-before", "/proc/vmstat");
    if !s.ftrace.is_empty() {
        ftrace_setup(&mut o, &s.ftrace, s.ftrace_buffer_kb, s.ftrace_stacktrace);
    }
    let _ = writeln!(o, "echo '{BEGIN}replay'");
    // The replayer dumps the memcg's state before it exits (its anon memory is freed at exit).
    let mut dumps = String::from(
        " --end memory.stat=/sys/fs/cgroup/t/memory.stat --end memory.current=/sys/fs/cgroup/t/memory.current",
    );
    // and its own mappings: how much of the replayer's own memory is resident or swapped
    dumps.push_str(" --end smaps=/proc/self/smaps");
    // and the zones as the last access left them
    dumps.push_str(" --end zoneinfo=/proc/zoneinfo");
    if s.tiers.is_some() {
        // where the replayer's pages are, node by node
        dumps.push_str(" --end numa_maps=/proc/self/numa_maps");
    }
    if s.swap || s.zram_bytes > 0 {
        dumps.push_str(" --end memory.swap.current=/sys/fs/cgroup/t/memory.swap.current");
    }
    if s.zram_bytes > 0 {
        dumps.push_str(&format!(" --end {ZRAM_MM_STAT}=/sys/block/zram0/mm_stat"));
    }
    if s.progress_every > 0 {
        let _ = write!(dumps, " --progress {}", s.progress_every);
    }
    if s.lru_gen_every_window {
        dumps.push_str(" --every lru_gen=/sys/kernel/debug/lru_gen");
    }
    if s.lru_gen_full_every_window {
        dumps.push_str(" --every lru_gen_full=/sys/kernel/debug/lru_gen_full");
    }
    // the replayer starts in task 0's memcg (a child of /t, which holds no process once it
    // delegates memory) and moves each task into its own
    let start = match s.task_memcgs.first() {
        Some(m) => {
            for c in s.memcgs() {
                let _ = write!(dumps, " --end {CHILD_STAT_DUMP}{c}=/sys/fs/cgroup/t/{c}/memory.stat");
            }
            dumps.push_str(" --memcgs /sys/fs/cgroup/t");
            format!("t/{m}")
        }
        None => "t".to_string(),
    };
    let _ = writeln!(
        o,
        "sh -c 'echo $$ > /sys/fs/cgroup/{start}/cgroup.procs && exec /bin/lrugen-replay /ops /data{dumps}'"
    );
    o.push_str("echo \"lrugen-replay rc $?\"\n");
    let _ = writeln!(o, "echo '{END}replay'");
    if !s.ftrace.is_empty() {
        o.push_str("echo 0 > /sys/kernel/tracing/tracing_on\n");
    }
    cap(&mut o, "vmstat-after", "/proc/vmstat");
    cap(&mut o, "memory.stat", "/sys/fs/cgroup/t/memory.stat");
    cap(&mut o, "memory.events", "/sys/fs/cgroup/t/memory.events");
    cap(&mut o, "memory.current", "/sys/fs/cgroup/t/memory.current");
    if s.swap || s.zram_bytes > 0 {
        cap(&mut o, "memory.swap.current", "/sys/fs/cgroup/t/memory.swap.current");
    }
    cap(&mut o, "lru_gen", "/sys/kernel/debug/lru_gen");
    cap(&mut o, "lru_gen_full", "/sys/kernel/debug/lru_gen_full");
    if !s.ftrace.is_empty() {
        cap(&mut o, "ftrace", "/sys/kernel/tracing/trace");
    }
    o.push_str("echo '=== lrugen done'\npoweroff -f\n");
    o
}

/// The load order of `targets` and everything they depend on, per a `modules.dep` text
/// (`path: dep dep …`, dependencies listed so that the last must load first). Targets are module
/// names (`ext4`, `virtio_blk`; `-` and `_` are the same); those not in the file (built in, or
/// absent) are skipped.
pub fn module_order(modules_dep: &str, targets: &[&str]) -> Vec<String> {
    let norm = |s: &str| s.replace('-', "_");
    let name_of = |p: &str| {
        let f = p.rsplit('/').next().unwrap_or(p);
        norm(f.split(".ko").next().unwrap_or(f))
    };
    let mut deps: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut by_name: BTreeMap<String, String> = BTreeMap::new();
    for l in modules_dep.lines() {
        let Some((m, d)) = l.split_once(':') else { continue };
        by_name.insert(name_of(m), m.to_string());
        deps.insert(m.to_string(), d.split_whitespace().map(str::to_string).collect());
    }
    fn visit(m: &str, deps: &BTreeMap<String, Vec<String>>, seen: &mut BTreeSet<String>, out: &mut Vec<String>) {
        if !seen.insert(m.to_string()) {
            return;
        }
        if let Some(ds) = deps.get(m) {
            for d in ds.iter().rev() {
                visit(d, deps, seen, out);
            }
        }
        out.push(m.to_string());
    }
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for t in targets {
        if let Some(p) = by_name.get(&norm(t)) {
            visit(p, &deps, &mut seen, &mut out);
        }
    }
    out
}

/// Modules the guest needs for an ext4 data disk on virtio-blk.
pub const NEEDED_MODULES: &[&str] = &["virtio_pci", "virtio_blk", "crc32c_generic", "ext4"];

/// Modules swap on zram needs (its allocator comes as a dependency; the compressors are
/// candidates, skipped where built in, as Debian's default `lzo-rle` is).
pub const ZRAM_MODULES: &[&str] = &["lzo_rle", "lzo", "zram"];

/// Name of the replayer's dump of `/sys/block/zram0/mm_stat` before it exits (swap on zram):
/// see [`zram_ratio`].
pub const ZRAM_MM_STAT: &str = "zram.mm_stat";

/// The compression ratio of zram (`orig_data_size / mem_used_total` of a `mm_stat` text: pages
/// stored per page of memory the pool takes), if it held any data.
pub fn zram_ratio(mm_stat: &str) -> Option<f64> {
    let v: Vec<u64> = mm_stat.split_whitespace().filter_map(|t| t.parse().ok()).collect();
    let (orig, used) = (*v.first()?, *v.get(2)?);
    (orig > 0 && used > 0).then(|| orig as f64 / used as f64)
}

/// Build the initramfs directory under `root` and pack it to `out` (newc cpio, uncompressed).
/// `modules_root` is `…/lib/modules/KVER` (with a `modules.dep`).
pub fn build(
    root: &Path,
    out: &Path,
    busybox: &Path,
    replayer: &Path,
    ops_text: &str,
    modules_root: &Path,
    spec_without_modules: &InitSpec,
) -> Result<(), Error> {
    let io = |what: &str, p: &Path, e: std::io::Error| Error::Io(format!("{what} {}: {e}", p.display()));
    if root.exists() {
        std::fs::remove_dir_all(root).map_err(|e| io("remove", root, e))?;
    }
    for d in ["bin", "proc", "sys", "dev", "data", "lib/modules"] {
        let p = root.join(d);
        std::fs::create_dir_all(&p).map_err(|e| io("mkdir", &p, e))?;
    }
    let copy = |from: &Path, to: PathBuf| std::fs::copy(from, &to).map(|_| ()).map_err(|e| io("copy", from, e));
    copy(busybox, root.join("bin/busybox"))?;
    copy(replayer, root.join("bin/lrugen-replay"))?;
    for applet in [
        "sh", "mount", "insmod", "cat", "echo", "mkdir", "sync", "poweroff", "swapon", "mkswap",
    ] {
        let link = root.join("bin").join(applet);
        std::os::unix::fs::symlink("busybox", &link).map_err(|e| io("symlink", &link, e))?;
    }
    std::fs::write(root.join("ops"), ops_text).map_err(|e| io("write", &root.join("ops"), e))?;
    let dep_path = modules_root.join("modules.dep");
    let dep = std::fs::read_to_string(&dep_path).map_err(|e| io("read", &dep_path, e))?;
    let mut spec = spec_without_modules.clone();
    spec.modules.clear();
    let mut wanted: Vec<&str> = NEEDED_MODULES.to_vec();
    if spec.zram_bytes > 0 {
        wanted.extend_from_slice(ZRAM_MODULES);
    }
    for m in module_order(&dep, &wanted) {
        let src = modules_root.join(&m);
        let base = m.rsplit('/').next().unwrap_or(&m).to_string();
        let plain = base.trim_end_matches(".xz").trim_end_matches(".zst").to_string();
        let dst = root.join("lib/modules").join(&plain);
        if base.ends_with(".xz") || base.ends_with(".zst") {
            let tool = if base.ends_with(".xz") { "xz" } else { "zstd" };
            let o = Command::new(tool)
                .arg("-dc")
                .arg(&src)
                .output()
                .map_err(|e| Error::Tool(format!("{tool}: {e}")))?;
            std::fs::write(&dst, o.stdout).map_err(|e| io("write", &dst, e))?;
        } else {
            copy(&src, dst)?;
        }
        spec.modules.push(format!("/lib/modules/{plain}"));
    }
    let init = root.join("init");
    std::fs::write(&init, init_script(&spec)).map_err(|e| io("write", &init, e))?;
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(&init, std::fs::Permissions::from_mode(0o755)).map_err(|e| io("chmod", &init, e))?;
    let status = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "cd '{}' && find . | LC_ALL=C sort | cpio --quiet -o -H newc -R 0:0 > '{}'",
            root.display(),
            out.display()
        ))
        .status()
        .map_err(|e| Error::Tool(format!("cpio: {e}")))?;
    if !status.success() {
        return Err(Error::Tool(format!("cpio failed ({status}); install cpio")));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(lru: LruMode) -> InitSpec {
        InitSpec {
            thp: lrugen::mm::thp::Thp::Never,
            modules: vec!["/lib/modules/virtio_blk.ko".into()],
            memcg_max_bytes: 32 << 20,
            lru,
            swappiness: Some(60),
            page_cluster: 0,
            read_ahead_kb: Some(0),
            min_ttl_ms: None,
            swap: false,
            zram_bytes: 0,
            data_rw: false,
            lru_gen_every_window: false,
            lru_gen_full_every_window: false,
            task_memcgs: Vec::new(),
            progress_every: 0,
            ftrace: Vec::new(),
            ftrace_buffer_kb: FTRACE_BUFFER_KB,
            ftrace_stacktrace: false,
            tiers: None,
        }
    }

    /// The traced replay's buffer is the spec's, per CPU, set before any event is enabled.
    #[test]
    fn the_ftrace_buffer_is_the_specs() {
        let mut s = spec(LruMode::Mglru { enabled: "y".into() });
        s.ftrace = vec!["vmscan/mm_vmscan_lru_shrink_inactive".into()];
        s.ftrace_buffer_kb = 4096;
        let text = init_script(&s);
        let set = text
            .find("echo 4096 > /sys/kernel/tracing/buffer_size_kb")
            .expect("buffer set");
        let enable = text
            .find("events/vmscan/mm_vmscan_lru_shrink_inactive/enable")
            .expect("event enabled");
        assert!(set < enable, "{text}");
        assert!(!text.contains("options/stacktrace"), "{text}");
        s.ftrace_stacktrace = true;
        let text = init_script(&s);
        let stack = text
            .find("echo 1 > /sys/kernel/tracing/options/stacktrace")
            .expect("stacks recorded");
        let on = text
            .find("echo 1 > /sys/kernel/tracing/tracing_on")
            .expect("tracing on");
        assert!(enable < stack && stack < on, "{text}");
    }

    /// Tiers: the knobs written before the replay (boosting off, balancing last), the tiers read
    /// back before it and the replayer's `numa_maps` after it.
    #[test]
    fn init_script_sets_the_tier_knobs_and_reads_the_tiers_back() {
        let mut s = spec(LruMode::Classic);
        assert!(!init_script(&s).contains("numa"));
        s.tiers = Some(lrugen::mm::tiers::TierConfig {
            demotion_enabled: true,
            numa_balancing: 2,
            scan_delay_ms: 10,
            hot_threshold_ms: 7,
            ..Default::default()
        });
        let o = init_script(&s);
        let at = |needle: &str| o.find(needle).unwrap_or_else(|| panic!("{needle} missing:\n{o}"));
        at("echo 0 > /proc/sys/vm/watermark_boost_factor");
        at("echo true > /sys/kernel/mm/numa/demotion_enabled");
        at("echo 10 > /sys/kernel/debug/sched/numa_balancing/scan_delay_ms");
        at("echo 7 > /sys/kernel/debug/sched/numa_balancing/hot_threshold_ms");
        let bal = at("echo 2 > /proc/sys/kernel/numa_balancing");
        assert!(
            bal > at("scan_size_mb") && bal < at("exec /bin/lrugen-replay"),
            "balancing last, before the replay"
        );
        assert!(at(MEMORY_TIERS) < at("exec /bin/lrugen-replay"));
        at("--end numa_maps=/proc/self/numa_maps");
    }

    /// THP other than `never`: the knobs a guest under 512 MiB loses at boot (`hugepage_init`)
    /// written back before the workload memcg is made, and `enabled`/`defrag` read back before
    /// the replay; `never` (every fixture before THP) writes and reads none of them.
    #[test]
    fn init_script_sets_the_thp_knobs_unless_never() {
        let mut s = spec(LruMode::Classic);
        assert!(!init_script(&s).contains("transparent_hugepage"));
        s.thp = lrugen::mm::thp::Thp::Madvise;
        let o = init_script(&s);
        let at = |needle: &str| o.find(needle).unwrap_or_else(|| panic!("no `{needle}` in\n{o}"));
        let t = "/sys/kernel/mm/transparent_hugepage";
        let en = at(&format!("echo madvise > {t}/enabled"));
        assert!(en < at(&format!("echo madvise > {t}/defrag")));
        assert!(en < at(&format!("echo 1 > {t}/use_zero_page")));
        assert!(en < at("mkdir /sys/fs/cgroup/t"));
        let dump = at(&format!("echo '{BEGIN}{THP_ENABLED}'\ncat {t}/enabled"));
        assert!(en < dump && dump < at(&format!("echo '{BEGIN}replay'")));
        assert!(at(&format!("echo '{BEGIN}{THP_DEFRAG}'\ncat {t}/defrag")) < at(&format!("echo '{BEGIN}replay'")));
    }

    /// `--ftrace`: tracefs on the monotonic clock, each kprobe defined and every event enabled
    /// before the replay starts, tracing stopped after it and the buffer dumped as `ftrace`; no
    /// tracing lines without events.
    #[test]
    fn init_script_traces_the_replay_when_asked() {
        let mut s = spec(LruMode::Mglru { enabled: "y".into() });
        assert!(!init_script(&s).contains("tracing"));
        s.ftrace = vec![
            "r:evict evict_folios $retval".into(),
            "vmscan/mm_vmscan_lru_isolate".into(),
        ];
        let o = init_script(&s);
        let at = |needle: &str| o.find(needle).unwrap_or_else(|| panic!("no `{needle}` in\n{o}"));
        let k = at("echo 'r:evict evict_folios $retval' >> /sys/kernel/tracing/kprobe_events");
        let on = at("echo 1 > /sys/kernel/tracing/tracing_on");
        assert!(at("mount -t tracefs") < k && at("echo mono > /sys/kernel/tracing/trace_clock") < k);
        assert!(k < at("echo 1 > /sys/kernel/tracing/events/kprobes/evict/enable"));
        assert!(at("echo 1 > /sys/kernel/tracing/events/vmscan/mm_vmscan_lru_isolate/enable") < on);
        assert!(on < at(&format!("echo '{BEGIN}replay'")));
        let off = at("echo 0 > /sys/kernel/tracing/tracing_on\necho '=== lrugen begin vmstat-after'");
        assert!(at(&format!("echo '{END}replay'")) < off);
        assert!(off < at(&format!("echo '{BEGIN}ftrace'\ncat /sys/kernel/tracing/trace")));
    }

    #[test]
    fn ftrace_events_are_checked() {
        for ok in [
            "vmscan/mm_vmscan_lru_isolate",
            "p:age try_to_inc_max_seq",
            "r:evict evict_folios $retval",
            "p:iso isolate_folios+4 %si",
        ] {
            assert_eq!(check_ftrace(ok), Ok(()), "{ok}");
        }
        for (bad, says) in [
            ("vmscan", "SUBSYSTEM/EVENT"),
            ("vmscan/", "SUBSYSTEM/EVENT"),
            ("p:age", "p:NAME SYMBOL"),
            ("p:a-b f", "p:NAME SYMBOL"),
            ("x:age f", "SUBSYSTEM/EVENT"),
            ("vmscan/it's", "quote"),
            ("p:a f\necho", "newline"),
        ] {
            let e = check_ftrace(bad).unwrap_err();
            assert!(e.contains(says) && e.contains('`'), "{bad}: {e}");
        }
    }

    /// Tasks in child memcgs: `/t` delegates memory to each (made once), the replayer starts in
    /// task 0's and is told where the others are, and each child's memory.stat is dumped.
    #[test]
    fn init_script_makes_the_tasks_memcgs() {
        let mut sp = spec(LruMode::Classic);
        sp.task_memcgs = vec!["a".into(), "b".into(), "a".into()];
        let s = init_script(&sp);
        let pos = |needle: &str| s.find(needle).unwrap_or_else(|| panic!("missing {needle:?} in\n{s}"));
        let order = [
            "echo 33554432 > /sys/fs/cgroup/t/memory.max",
            "echo +memory > /sys/fs/cgroup/t/cgroup.subtree_control\nmkdir /sys/fs/cgroup/t/a\nmkdir /sys/fs/cgroup/t/b\n",
            "sh -c 'echo $$ > /sys/fs/cgroup/t/a/cgroup.procs && exec /bin/lrugen-replay /ops /data",
            " --end memory.stat:a=/sys/fs/cgroup/t/a/memory.stat --end memory.stat:b=/sys/fs/cgroup/t/b/memory.stat --memcgs /sys/fs/cgroup/t'",
        ];
        for w in order.windows(2) {
            assert!(pos(w[0]) < pos(w[1]), "{:?} before {:?} in\n{s}", w[0], w[1]);
        }
        assert_eq!(s.matches("mkdir /sys/fs/cgroup/t/a").count(), 1);
        // without memcgs, the replayer runs in /t as before
        let plain = init_script(&spec(LruMode::Classic));
        assert!(plain.contains("echo $$ > /sys/fs/cgroup/t/cgroup.procs") && !plain.contains("--memcgs"));
    }

    /// With progress lines asked for, the replayer gets `--progress`; the counters read after
    /// the replay are read by `/init` whether or not the replayer survived.
    #[test]
    fn progress_lines_when_asked_and_counters_after_any_end_of_the_replayer() {
        let mut sp = spec(LruMode::Mglru { enabled: "y".into() });
        sp.min_ttl_ms = Some(1000);
        sp.progress_every = 1000;
        let s = init_script(&sp);
        assert!(s.contains("echo 1000 > /sys/kernel/mm/lru_gen/min_ttl_ms\n"), "{s}");
        assert!(s.contains(" --progress 1000"), "{s}");
        let rc = s.find("echo \"lrugen-replay rc $?\"").expect("rc");
        for after in ["vmstat-after", "memory.events"] {
            assert!(s.find(&format!("=== lrugen begin {after}")).unwrap() > rc, "{after}");
        }
        assert!(!init_script(&spec(LruMode::Classic)).contains("--progress"));
    }

    #[test]
    fn no_limit_is_max_and_the_zones_are_captured_before_and_after() {
        let mut sp = spec(LruMode::Mglru { enabled: "y".into() });
        sp.memcg_max_bytes = 0;
        let s = init_script(&sp);
        assert!(s.contains("echo max > /sys/fs/cgroup/t/memory.max\n"), "{s}");
        assert!(!s.contains("echo 0 > /sys/fs/cgroup/t/memory.max"), "{s}");
        let zi = s.find("=== lrugen begin zoneinfo-before").expect("zoneinfo captured");
        assert!(zi > s.find("drop_caches").unwrap() && zi < s.find("=== lrugen begin replay").unwrap());
        assert!(s.contains("=== lrugen begin meminfo-before"));
        assert!(s.contains(" --end zoneinfo=/proc/zoneinfo"), "{s}");
    }

    #[test]
    fn init_script_sets_up_the_memcg_and_captures_everything() {
        let s = init_script(&spec(LruMode::Mglru { enabled: "y".into() }));
        assert!(s.starts_with("#!/bin/sh\n"));
        let pos = |needle: &str| s.find(needle).unwrap_or_else(|| panic!("missing {needle:?} in\n{s}"));
        // Order: modules, mount, lru_gen, memcg, drop caches, before, replay in /t, after.
        let order = [
            "insmod /lib/modules/virtio_blk.ko",
            "mount -t ext4 -o ro /dev/vda /data",
            "echo y > /sys/kernel/mm/lru_gen/enabled",
            "echo 0 > /proc/sys/vm/page-cluster",
            "echo 4096 > /sys/kernel/debug/fault_around_bytes",
            "echo 0 > /sys/block/vda/queue/read_ahead_kb",
            "echo 33554432 > /sys/fs/cgroup/t/memory.max",
            "echo 3 > /proc/sys/vm/drop_caches",
            "=== lrugen begin vmstat-before",
            "echo $$ > /sys/fs/cgroup/t/cgroup.procs && exec /bin/lrugen-replay /ops /data",
            "=== lrugen begin vmstat-after",
            "cat /sys/fs/cgroup/t/memory.stat",
            "cat /sys/fs/cgroup/t/memory.events",
            "cat /sys/kernel/debug/lru_gen\n",
            "cat /sys/kernel/debug/lru_gen_full",
            "poweroff -f",
        ];
        let mut last = 0;
        for n in order {
            let p = pos(n);
            assert!(p >= last, "{n:?} out of order");
            last = p;
        }
        let c = init_script(&spec(LruMode::Classic));
        assert!(c.contains("echo n > /sys/kernel/mm/lru_gen/enabled"));
        let mut d = spec(LruMode::Classic);
        d.read_ahead_kb = None;
        assert!(
            !init_script(&d).contains("read_ahead_kb"),
            "the kernel's default is left alone"
        );
        assert!(!c.contains("swapon"));
        let mut sw = spec(LruMode::Mglru { enabled: "y".into() });
        sw.swap = true;
        let s = init_script(&sw);
        let (a, b) = (
            s.find("swapon /dev/vdb").unwrap(),
            s.find("exec /bin/lrugen-replay").unwrap(),
        );
        assert!(a < b);
        assert!(s.contains("cat /sys/fs/cgroup/t/memory.swap.current"));
        assert!(s.contains("--end memory.swap.current=/sys/fs/cgroup/t/memory.swap.current"));
        assert!(!s.contains("--every"));
        sw.lru_gen_every_window = true;
        assert!(init_script(&sw).contains("--every lru_gen=/sys/kernel/debug/lru_gen'"));
    }

    #[test]
    fn init_script_sets_up_zram_swap_and_a_writable_data_disk() {
        let mut z = spec(LruMode::Mglru {
            enabled: "0x0003".into(),
        });
        z.zram_bytes = 64 << 20;
        z.data_rw = true;
        let s = init_script(&z);
        let pos = |needle: &str| s.find(needle).unwrap_or_else(|| panic!("missing {needle:?} in\n{s}"));
        assert!(pos("insmod /lib/modules/virtio_blk.ko") < pos("/sys/block/zram0/disksize"));
        assert!(pos("echo 67108864 > /sys/block/zram0/disksize") < pos("mkswap /dev/zram0"));
        assert!(pos("mkswap /dev/zram0") < pos("swapon /dev/zram0"));
        assert!(pos("swapon /dev/zram0") < pos("exec /bin/lrugen-replay"));
        assert!(s.contains("--end zram.mm_stat=/sys/block/zram0/mm_stat"));
        assert!(s.contains("mount -t ext4 -o rw /dev/vda /data"));
        assert!(s.contains("echo 0x0003 > /sys/kernel/mm/lru_gen/enabled"));
        assert!(!s.contains("swapon /dev/vdb"));
        // zram's allocator loads before zram; a compressor built in is skipped.
        let dep = "kernel/mm/zsmalloc.ko:\nkernel/drivers/block/zram/zram.ko: kernel/mm/zsmalloc.ko\n";
        let o = module_order(dep, ZRAM_MODULES);
        assert_eq!(o, ["kernel/mm/zsmalloc.ko", "kernel/drivers/block/zram/zram.ko"]);
    }

    #[test]
    fn zram_ratio_of_mm_stat() {
        // orig_data_size compr_data_size mem_used_total mem_limit mem_used_max same_pages ...
        let r = zram_ratio("  8388608   1048576   2097152        0  2097152      12       0        0\n").unwrap();
        assert!((r - 4.0).abs() < 1e-9);
        assert_eq!(zram_ratio("0 0 0 0 0 0 0 0"), None);
        assert_eq!(
            zram_ratio("lrugen-replay: /sys/block/zram0/mm_stat: No such file"),
            None
        );
    }

    #[test]
    fn module_order_loads_dependencies_first() {
        let dep = "kernel/fs/ext4/ext4.ko: kernel/fs/jbd2/jbd2.ko kernel/fs/mbcache.ko kernel/lib/crc16.ko\n\
                   kernel/fs/jbd2/jbd2.ko:\nkernel/fs/mbcache.ko:\nkernel/lib/crc16.ko:\n\
                   kernel/drivers/block/virtio_blk.ko:\nkernel/crypto/crc32c_generic.ko:\n\
                   kernel/drivers/virtio/virtio_pci.ko: kernel/drivers/virtio/virtio_pci_modern_dev.ko kernel/drivers/virtio/virtio_pci_legacy_dev.ko\n\
                   kernel/drivers/virtio/virtio_pci_modern_dev.ko:\nkernel/drivers/virtio/virtio_pci_legacy_dev.ko:\n";
        let o = module_order(dep, NEEDED_MODULES);
        let names: Vec<&str> = o.iter().map(|p| p.rsplit('/').next().unwrap()).collect();
        assert_eq!(
            names,
            [
                "virtio_pci_legacy_dev.ko",
                "virtio_pci_modern_dev.ko",
                "virtio_pci.ko",
                "virtio_blk.ko",
                "crc32c_generic.ko",
                "crc16.ko",
                "mbcache.ko",
                "jbd2.ko",
                "ext4.ko"
            ]
        );
        // A module not in modules.dep (built in) is skipped.
        assert!(module_order("kernel/fs/ext4/ext4.ko:\n", &["virtio_blk"]).is_empty());
    }
}
