// SPDX-License-Identifier: GPL-2.0-only
//! Debian kernel packages: resolve the newest name of a series, download it with `apt-get
//! download` (Debian's archive only), unpack it with `dpkg-deb -x`, extract `vmlinux`, run
//! `depmod -b`. 6.1 and 6.12 come from the system's apt sources (bookworm-security); 7.x from
//! Debian sid through a private source list and package lists under the cache dir ([`SidApt`]),
//! as an image package plus a modules package.

use crate::{bzimage, Error, KernelSource};
use std::path::{Path, PathBuf};
use std::process::Command;

/// A kernel ready to boot.
#[derive(Clone, Debug)]
pub struct PreparedKernel {
    /// The ELF vmlinux.
    pub vmlinux: PathBuf,
    /// `…/lib/modules/KVER` with a `modules.dep`.
    pub modules: PathBuf,
    /// The Debian package, if any.
    pub package: Option<String>,
}

/// Where the packages of a series come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Archive {
    /// The system's apt sources (Debian 12: `bookworm-security` has 6.1 and 6.12).
    System,
    /// Debian unstable (sid), through a private source list and apt state under the cache dir, so
    /// the system's apt configuration is neither used for sources nor changed ([`SidApt`]).
    Sid,
}

/// A Debian kernel series.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Series {
    /// `linux-image-6.1.0-N-amd64-unsigned` (bookworm-security).
    V6_1,
    /// `linux-image-6.12.N+debM-amd64-unsigned` (bookworm-security).
    V6_12,
    /// `linux-binary-7.N.P+debM-amd64` + `linux-modules-7.N.P+debM-amd64` (sid): the newest 7.x,
    /// or the newest 7.N.y when `minor` is given.
    V7 {
        /// `N` of `7.N`.
        minor: Option<u32>,
    },
}

/// The series names [`Series::parse`] accepts (for help texts and errors).
pub const SERIES_HELP: &str = "6.1, 6.12 or 7 (the newest 7.x, from sid; also spelt 7.x; 7.N for the newest 7.N.y)";

impl Series {
    /// Parse a series name: `6.1`, `6.12`, `7` (or `7.x`), `7.N`.
    pub fn parse(name: &str) -> Result<Series, Error> {
        match name {
            "6.1" => Ok(Series::V6_1),
            "6.12" => Ok(Series::V6_12),
            "7" | "7.x" => Ok(Series::V7 { minor: None }),
            _ => name
                .strip_prefix("7.")
                .filter(|m| !m.starts_with('+'))
                .and_then(|m| m.parse::<u32>().ok())
                .map(|m| Series::V7 { minor: Some(m) })
                .ok_or_else(|| {
                    Error::Config(format!(
                        "unknown Debian kernel series '{name}': expected {SERIES_HELP} (or give a package name or an image)"
                    ))
                }),
        }
    }

    /// Where its packages come from.
    pub fn archive(self) -> Archive {
        match self {
            Series::V6_1 | Series::V6_12 => Archive::System,
            Series::V7 { .. } => Archive::Sid,
        }
    }

    /// The `apt-cache search` pattern of its packages (7.x: the image and the modules packages).
    pub fn pattern(self) -> String {
        match self {
            Series::V6_1 => r"^linux-image-6\.1\.0-[0-9]+-amd64-unsigned$".into(),
            Series::V6_12 => r"^linux-image-6\.12\.[0-9]+\+deb[0-9]+-amd64-unsigned$".into(),
            Series::V7 { minor } => {
                let m = minor.map_or_else(|| "[0-9]+".to_string(), |m| m.to_string());
                format!(r"^linux-(binary|modules)-7\.{m}\.[0-9]+\+deb[0-9]+-amd64$")
            }
        }
    }

    /// Whether `name` is one of its image packages (7.x: `linux-binary-…`).
    pub fn matches(self, name: &str) -> bool {
        let num = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
        // "N+debM"
        let deb = |t: &str| t.split_once("+deb").is_some_and(|(a, b)| num(a) && num(b));
        match self {
            Series::V6_1 => name
                .strip_prefix("linux-image-6.1.0-")
                .and_then(|r| r.strip_suffix("-amd64-unsigned"))
                .is_some_and(num),
            Series::V6_12 => name
                .strip_prefix("linux-image-6.12.")
                .and_then(|r| r.strip_suffix("-amd64-unsigned"))
                .is_some_and(deb),
            Series::V7 { minor } => name
                .strip_prefix("linux-binary-7.")
                .and_then(|r| r.strip_suffix("-amd64"))
                .and_then(|r| r.split_once('.'))
                .is_some_and(|(m, rest)| num(m) && minor.is_none_or(|want| m.parse() == Ok(want)) && deb(rest)),
        }
    }

    /// The image package holds only the kernel; the modules are in a second package.
    pub fn split_modules(self) -> bool {
        matches!(self, Series::V7 { .. })
    }
}

/// The `apt-cache search` pattern of a series (see [`Series::parse`]).
pub fn series_pattern(name: &str) -> Result<String, Error> {
    Series::parse(name).map(Series::pattern)
}

/// The modules package that goes with a `linux-binary-…` image package.
pub fn modules_package(binary: &str) -> Option<String> {
    binary
        .strip_prefix("linux-binary-")
        .map(|rest| format!("linux-modules-{rest}"))
}

/// The packages to fetch for the newest kernel of `s` among `apt-cache search` output lines:
/// the image package, then (7.x) its modules package. Names that are not the series' image
/// packages are ignored (`-dbg`, `cloud-`, `rt-` flavours); an image whose modules package is not
/// listed is passed over (the archive is mid-update).
pub fn select(s: Series, search_output: &str) -> Option<Vec<String>> {
    let names: Vec<&str> = search_output
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    let mut images: Vec<&str> = names.iter().copied().filter(|n| s.matches(n)).collect();
    images.sort_by_key(|n| std::cmp::Reverse(version_key(n)));
    images.into_iter().find_map(|img| {
        if !s.split_modules() {
            return Some(vec![img.to_string()]);
        }
        let m = modules_package(img)?;
        names.contains(&m.as_str()).then(|| vec![img.to_string(), m])
    })
}

/// Compare two package names as `sort -V` does for these names (numbers compared as numbers).
fn version_key(s: &str) -> Vec<(String, u64)> {
    let mut out = Vec::new();
    let mut text = String::new();
    let mut num: Option<u64> = None;
    for c in s.chars() {
        if let Some(d) = c.to_digit(10) {
            num = Some(num.unwrap_or(0) * 10 + d as u64);
        } else {
            if let Some(n) = num.take() {
                out.push((std::mem::take(&mut text), n));
            }
            text.push(c);
        }
    }
    out.push((text, num.unwrap_or(0)));
    out
}

/// The newest package name among `apt-cache search` output lines.
pub fn newest(search_output: &str) -> Option<String> {
    search_output
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .map(str::to_string)
        .max_by_key(|n| version_key(n))
}

/// The private apt configuration that reaches Debian unstable (sid) without touching the system's:
/// a source list, package lists and an archive cache under `<cache>/apt-sid`, passed to `apt-get`
/// and `apt-cache` with `-o` options (`Dir::Etc::sourceparts=-` drops the system's
/// `sources.list.d`; the binary caches are not written).
#[derive(Clone, Debug)]
pub struct SidApt {
    /// `<cache>/apt-sid`.
    pub dir: PathBuf,
    /// The Debian mirror (default [`SID_MIRROR`]; `LRUGEN_SID_MIRROR` overrides it).
    pub mirror: String,
}

/// Debian's mirror network.
pub const SID_MIRROR: &str = "http://deb.debian.org/debian";

/// Lists younger than this are not updated again (sid changes daily; an old list names packages
/// the archive has dropped).
const SID_LISTS_MAX_AGE: std::time::Duration = std::time::Duration::from_secs(6 * 3600);

impl SidApt {
    /// The configuration under `cache`.
    pub fn new(cache: &Path) -> Self {
        let mirror = std::env::var("LRUGEN_SID_MIRROR")
            .ok()
            .filter(|m| !m.trim().is_empty())
            .unwrap_or_else(|| SID_MIRROR.to_string());
        SidApt {
            dir: cache.join("apt-sid"),
            mirror,
        }
    }

    /// The text of the private source list: sid's `main`, checked with Debian's archive keyring.
    pub fn source_list(&self) -> String {
        format!(
            "# written by lrugen-kernel: Debian unstable, for 7.x kernels only\n\
             deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] {} sid main\n",
            self.mirror.trim_end_matches('/')
        )
    }

    /// The `-o` options that point apt at the private configuration.
    pub fn options(&self) -> Vec<String> {
        let d = self.dir.display();
        [
            format!("Dir::Etc::sourcelist={d}/sources.list"),
            "Dir::Etc::sourceparts=-".to_string(),
            format!("Dir::State::Lists={d}/lists"),
            format!("Dir::Cache={d}/cache"),
            "Dir::Cache::pkgcache=".to_string(),
            "Dir::Cache::srcpkgcache=".to_string(),
            // The cache is often under root's home, which the `_apt` user cannot enter.
            "APT::Sandbox::User=root".to_string(),
        ]
        .into_iter()
        .flat_map(|o| ["-o".to_string(), o])
        .collect()
    }

    /// Whether the lists hold a `Packages` index, and how old the newest is.
    fn lists_age(&self) -> Option<std::time::Duration> {
        std::fs::read_dir(self.dir.join("lists"))
            .ok()?
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().contains("_Packages"))
            .filter_map(|e| e.metadata().ok()?.modified().ok())
            .max()
            .map(|t| t.elapsed().unwrap_or_default())
    }

    /// Write the source list and run `apt-get update` unless the lists are recent. When sid
    /// cannot be reached, lists from an earlier update are used with a warning; without any, the
    /// error says so.
    pub fn update(&self) -> Result<(), Error> {
        let io = |what: &str, p: &Path, e: std::io::Error| Error::Io(format!("{what} {}: {e}", p.display()));
        for d in ["lists/partial", "cache/archives/partial"] {
            let p = self.dir.join(d);
            std::fs::create_dir_all(&p).map_err(|e| io("mkdir", &p, e))?;
        }
        let list = self.dir.join("sources.list");
        let text = self.source_list();
        let changed = std::fs::read_to_string(&list).map_or(true, |old| old != text);
        if changed {
            std::fs::write(&list, &text).map_err(|e| io("write", &list, e))?;
        }
        let age = self.lists_age();
        if !changed && age.is_some_and(|a| a < SID_LISTS_MAX_AGE) {
            return Ok(());
        }
        eprintln!("updating the Debian sid package lists in {}", self.dir.display());
        let out = Command::new("apt-get")
            .args(self.options())
            .args(["-q", "update"])
            .output()
            .map_err(|e| Error::Tool(format!("apt-get: {e}")))?;
        // apt-get update exits 0 when an index cannot be fetched: its `W: Failed to fetch …` and
        // `E:` lines tell.
        let stderr = String::from_utf8_lossy(&out.stderr);
        let failed = !out.status.success() || stderr.lines().any(update_failure);
        let fresh = self.lists_age();
        if !failed && fresh.is_some() {
            return Ok(());
        }
        let why: Vec<&str> = stderr.lines().filter(|l| update_failure(l)).take(3).collect();
        let why = if why.is_empty() {
            format!("apt-get update: {}", out.status)
        } else {
            why.join("; ")
        };
        match (changed, age) {
            (false, Some(a)) => {
                eprintln!(
                    "lrugen-kernel: warning: Debian sid unreachable ({why}); using package lists {} h old",
                    a.as_secs() / 3600
                );
                Ok(())
            }
            _ => Err(Error::Kernel(format!(
                "cannot reach Debian sid at {} (7.x kernels come from sid, through {}): {why}; \
                 check the network or LRUGEN_SID_MIRROR, or boot a kernel image of your own",
                self.mirror,
                self.dir.join("sources.list").display()
            ))),
        }
    }
}

/// Whether a line of `apt-get update`'s stderr reports an index it could not fetch.
fn update_failure(line: &str) -> bool {
    line.starts_with("E:")
        || (line.starts_with("W:") && (line.contains("Failed to fetch") || line.contains("failed to download")))
}

/// Resolve the newest packages of a series with `apt-cache search` (for 7.x after updating the
/// private sid lists under `cache`): the image package, then its modules package if separate.
pub fn resolve(series_name: &str, cache: &Path) -> Result<Vec<String>, Error> {
    let s = Series::parse(series_name)?;
    let pat = s.pattern();
    let (opts, hint) = match s.archive() {
        Archive::System => (
            Vec::new(),
            "run apt-get update; 6.1 and 6.12 are in bookworm-security".to_string(),
        ),
        Archive::Sid => {
            let apt = SidApt::new(cache);
            apt.update()?;
            let hint = format!("searched Debian sid through {}", apt.dir.join("sources.list").display());
            (apt.options(), hint)
        }
    };
    let out = Command::new("apt-cache")
        .args(&opts)
        .args(["search", &pat])
        .output()
        .map_err(|e| Error::Tool(format!("apt-cache: {e}")))?;
    if !out.status.success() {
        return Err(Error::Tool(format!(
            "apt-cache search {pat} failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    select(s, &String::from_utf8_lossy(&out.stdout)).ok_or_else(|| {
        Error::Kernel(format!(
            "no kernel of series {series_name} matches {pat}{} ({hint})",
            if s.split_modules() {
                " with its modules package"
            } else {
                ""
            }
        ))
    })
}

/// Download (once) and unpack packages into `cache/<first package>/root` (`apt_options` point
/// apt at a private configuration, or are empty for the system's).
pub fn fetch(packages: &[String], apt_options: &[String], cache: &Path) -> Result<PathBuf, Error> {
    let first = packages
        .first()
        .ok_or_else(|| Error::Config("no package to fetch".into()))?;
    let dir = cache.join(first);
    let root = dir.join("root");
    // `root` appears (renamed from `root.tmp`) only once every package is unpacked.
    if root.is_dir() {
        return Ok(root);
    }
    std::fs::create_dir_all(&dir).map_err(|e| Error::Io(format!("mkdir {}: {e}", dir.display())))?;
    let st = Command::new("apt-get")
        .args(apt_options)
        .arg("download")
        .args(packages)
        .current_dir(&dir)
        // apt's progress goes to stderr: stdout is the caller's report
        .stdout(std::io::stderr())
        .status()
        .map_err(|e| Error::Tool(format!("apt-get: {e}")))?;
    if !st.success() {
        return Err(Error::Kernel(format!(
            "apt-get download {} failed ({st})",
            packages.join(" ")
        )));
    }
    let debs: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map_err(|e| Error::Io(format!("{}: {e}", dir.display())))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "deb"))
        .collect();
    let tmp = dir.join("root.tmp");
    let _ = std::fs::remove_dir_all(&tmp);
    for p in packages {
        let prefix = format!("{p}_");
        let deb = debs
            .iter()
            .find(|d| {
                d.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with(&prefix))
            })
            .ok_or_else(|| Error::Kernel(format!("no {prefix}*.deb in {}", dir.display())))?;
        let st = Command::new("dpkg-deb")
            .arg("-x")
            .arg(deb)
            .arg(&tmp)
            .status()
            .map_err(|e| Error::Tool(format!("dpkg-deb: {e}")))?;
        if !st.success() {
            return Err(Error::Kernel(format!("dpkg-deb -x {} failed", deb.display())));
        }
    }
    std::fs::rename(&tmp, &root).map_err(|e| Error::Io(format!("rename {}: {e}", tmp.display())))?;
    Ok(root)
}

/// The kernel image and `…/lib/modules/KVER` of an unpacked package tree: Debian 12 packages put
/// the image in `boot/vmlinuz-KVER` and the modules in `lib/modules/KVER`; 7.x packages (merged
/// `/usr`) put both in `usr/lib/modules/KVER` (the image as `vmlinuz`).
pub fn locate(root: &Path) -> Result<(PathBuf, PathBuf), Error> {
    for base in ["lib/modules", "usr/lib/modules"] {
        let Ok(rd) = std::fs::read_dir(root.join(base)) else {
            continue;
        };
        let mut kvers: Vec<String> = rd
            .filter_map(|e| e.ok())
            .filter(|e| e.path().is_dir())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        kvers.sort();
        for kver in kvers {
            let modules = root.join(base).join(&kver);
            for image in [root.join(format!("boot/vmlinuz-{kver}")), modules.join("vmlinuz")] {
                if image.is_file() {
                    return Ok((image, modules));
                }
            }
        }
    }
    Err(Error::Kernel(format!(
        "{}: no kernel image (boot/vmlinuz-KVER or usr/lib/modules/KVER/vmlinuz) beside a modules directory",
        root.display()
    )))
}

/// `vmlinux` next to the image (extracted once), and `depmod -b` of the modules directory.
fn finish(image: &Path, modules: &Path, out_dir: &Path, package: Option<String>) -> Result<PreparedKernel, Error> {
    let vmlinux = out_dir.join("vmlinux");
    if !vmlinux.is_file() {
        let img = std::fs::read(image).map_err(|e| Error::Io(format!("read {}: {e}", image.display())))?;
        let elf = if img.starts_with(b"\x7fELF") {
            img
        } else {
            bzimage::extract_vmlinux(&img)?
        };
        std::fs::write(&vmlinux, elf).map_err(|e| Error::Io(format!("write {}: {e}", vmlinux.display())))?;
    }
    if !modules.join("modules.dep").is_file() {
        // modules = BASE/lib/modules/KVER
        let kver = modules.file_name().and_then(|s| s.to_str()).unwrap_or("").to_string();
        let base = modules
            .parent()
            .and_then(Path::parent)
            .and_then(Path::parent)
            .ok_or_else(|| {
                Error::Config(format!(
                    "{}: expected a …/lib/modules/KVER directory",
                    modules.display()
                ))
            })?;
        // Debian's 7.x modules package ships no modules.order or modules.builtin: depmod warns
        // and still writes modules.dep, so its output is shown only when it fails.
        let out = Command::new("depmod")
            .arg("-b")
            .arg(base)
            .arg(&kver)
            .output()
            .map_err(|e| Error::Tool(format!("depmod: {e} (install kmod)")))?;
        if !out.status.success() || !modules.join("modules.dep").is_file() {
            return Err(Error::Tool(format!(
                "depmod -b {} {kver} failed ({}): {}",
                base.display(),
                out.status,
                String::from_utf8_lossy(&out.stderr).trim()
            )));
        }
    }
    Ok(PreparedKernel {
        vmlinux,
        modules: modules.to_path_buf(),
        package,
    })
}

/// Hold the cache's lock (`cache/.lock`, an exclusive `flock`) until the guard drops: two
/// `lrugen kernel` runs started together (`scripts/regen-kernel-*.sh` boot two at a time) would
/// otherwise download into the same directory, unpack into the same `root.tmp` and remove each
/// other's files, and update the sid lists at once.
fn lock_cache(cache: &Path) -> Result<std::fs::File, Error> {
    std::fs::create_dir_all(cache).map_err(|e| Error::Io(format!("mkdir {}: {e}", cache.display())))?;
    let path = cache.join(".lock");
    let f = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|e| Error::Io(format!("{}: {e}", path.display())))?;
    // `File::lock` would do, but it needs Rust 1.89 and the workspace's MSRV is 1.85.
    use std::os::fd::AsRawFd;
    // SAFETY: flock on a descriptor `f` owns and keeps open; the lock goes with the descriptor.
    if unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX) } != 0 {
        let e = std::io::Error::last_os_error();
        return Err(Error::Io(format!("flock {}: {e}", path.display())));
    }
    Ok(f)
}

/// Make a kernel bootable: resolve, download, unpack, extract, depmod; one process at a time per
/// cache directory.
pub fn prepare(src: &KernelSource, cache: &Path) -> Result<PreparedKernel, Error> {
    if let KernelSource::Prepared(k) = src {
        return Ok(k.clone());
    }
    let _lock = lock_cache(cache)?;
    let (packages, apt_options) = match src {
        KernelSource::Prepared(k) => return Ok(k.clone()),
        KernelSource::Image { image, modules } => {
            let out = cache.join("user");
            std::fs::create_dir_all(&out).map_err(|e| Error::Io(e.to_string()))?;
            let _ = std::fs::remove_file(out.join("vmlinux"));
            return finish(image, modules, &out, None);
        }
        KernelSource::Debian { series } => {
            let opts = match Series::parse(series)?.archive() {
                Archive::System => Vec::new(),
                Archive::Sid => SidApt::new(cache).options(),
            };
            (resolve(series, cache)?, opts)
        }
        // A 7.x image package from sid brings its modules package along.
        KernelSource::Package(p) => match modules_package(p) {
            Some(m) => (vec![p.clone(), m], SidApt::new(cache).options()),
            None => (vec![p.clone()], Vec::new()),
        },
    };
    if matches!(src, KernelSource::Package(_))
        && !apt_options.is_empty()
        && !cache.join(&packages[0]).join("root").is_dir()
    {
        // A sid package named by the user: the lists must exist (resolve makes them otherwise).
        SidApt::new(cache).update()?;
    }
    let root = fetch(&packages, &apt_options, cache)?;
    let (image, modules) = locate(&root)?;
    finish(&image, &modules, &cache.join(&packages[0]), Some(packages[0].clone()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A second preparation in the same cache waits for the first: it neither downloads nor
    /// unpacks while another holds `cache/.lock`.
    #[test]
    fn prepare_waits_for_the_cache_lock() {
        let dir = std::env::temp_dir().join(format!("lrugen-lock-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let modules = dir.join("tree/lib/modules/6.1.0-test");
        std::fs::create_dir_all(&modules).unwrap();
        std::fs::write(modules.join("modules.dep"), "").unwrap();
        let image = dir.join("tree/vmlinuz");
        std::fs::write(&image, b"\x7fELF not really").unwrap();
        let cache = dir.join("cache");
        let held = lock_cache(&cache).unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        let src = KernelSource::Image {
            image: image.clone(),
            modules: modules.clone(),
        };
        let c = cache.clone();
        let t = std::thread::spawn(move || {
            let r = prepare(&src, &c);
            tx.send(()).unwrap();
            r
        });
        assert!(
            rx.recv_timeout(std::time::Duration::from_millis(300)).is_err(),
            "prepare ran while another held the cache's lock"
        );
        assert!(!cache.join("user/vmlinux").exists());
        drop(held);
        let k = t.join().unwrap().unwrap();
        assert_eq!(std::fs::read(&k.vmlinux).unwrap(), b"\x7fELF not really");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn newest_sorts_numbers_as_numbers() {
        let s = "linux-image-6.1.0-9-amd64-unsigned - Linux 6.1\n\
                 linux-image-6.1.0-57-amd64-unsigned - Linux 6.1\n\
                 linux-image-6.1.0-10-amd64-unsigned - Linux 6.1\n";
        assert_eq!(newest(s).as_deref(), Some("linux-image-6.1.0-57-amd64-unsigned"));
        assert_eq!(newest(""), None);
        assert_eq!(
            select(Series::V6_1, s),
            Some(vec!["linux-image-6.1.0-57-amd64-unsigned".to_string()])
        );
        // 7.10 is newer than 7.9, 7.2.13 newer than 7.2.9.
        assert!(version_key("linux-binary-7.10.1+deb14-amd64") > version_key("linux-binary-7.9.20+deb14-amd64"));
        assert!(version_key("linux-binary-7.2.13+deb14-amd64") > version_key("linux-binary-7.2.9+deb14-amd64"));
        assert!(version_key("linux-binary-7.2.9+deb15-amd64") > version_key("linux-binary-7.2.9+deb14-amd64"));
    }

    #[test]
    fn series_names() {
        assert_eq!(Series::parse("6.1").unwrap(), Series::V6_1);
        assert_eq!(Series::parse("6.12").unwrap(), Series::V6_12);
        assert_eq!(Series::parse("7").unwrap(), Series::V7 { minor: None });
        assert_eq!(Series::parse("7.x").unwrap(), Series::V7 { minor: None });
        assert_eq!(Series::parse("7.2").unwrap(), Series::V7 { minor: Some(2) });
        for bad in ["5.10", "6", "7.", "7.y", "7.+2", "7.2.1", "", "sid"] {
            let e = Series::parse(bad).unwrap_err().to_string();
            assert!(e.contains(&format!("'{bad}'")) && e.contains("6.12"), "{bad}: {e}");
        }
        assert_eq!(Series::V6_1.archive(), Archive::System);
        assert_eq!(Series::V6_12.archive(), Archive::System);
        assert_eq!(Series::V7 { minor: None }.archive(), Archive::Sid);
        assert_eq!(
            series_pattern("7").unwrap(),
            r"^linux-(binary|modules)-7\.[0-9]+\.[0-9]+\+deb[0-9]+-amd64$"
        );
        assert_eq!(
            series_pattern("7.2").unwrap(),
            r"^linux-(binary|modules)-7\.2\.[0-9]+\+deb[0-9]+-amd64$"
        );
    }

    /// `apt-cache search '^linux-(binary|modules)-7…'` as sid answers it, with the flavours that
    /// the pattern lets through and a newer image whose modules package is not in yet.
    const SID_SEARCH: &str = "\
linux-modules-7.2.13+deb14-amd64 - Linux 7.2.13 for 64-bit PCs (modules)
linux-modules-7.2.13+deb14-cloud-amd64 - Linux 7.2.13 for x86-64 cloud (modules)
linux-binary-7.2.13+deb14-amd64 - Linux 7.2.13 for 64-bit PCs (kernel image)
linux-binary-7.2.13+deb14-cloud-amd64 - Linux 7.2.13 for x86-64 cloud (kernel image)
linux-binary-7.2.13+deb14-rt-amd64 - Linux 7.2.13 for 64-bit PCs (kernel image)
linux-binary-7.2.9+deb14-amd64 - Linux 7.2.9 for 64-bit PCs (kernel image)
linux-modules-7.2.9+deb14-amd64 - Linux 7.2.9 for 64-bit PCs (modules)
linux-binary-7.1.4+deb14-amd64 - Linux 7.1.4 for 64-bit PCs (kernel image)
linux-modules-7.1.4+deb14-amd64 - Linux 7.1.4 for 64-bit PCs (modules)
linux-binary-7.3.1+deb14-amd64 - Linux 7.3.1 for 64-bit PCs (kernel image)
";

    #[test]
    fn sid_selection_pairs_the_image_with_its_modules() {
        let all = Series::V7 { minor: None };
        // 7.3.1 has no modules package yet: the newest complete one is 7.2.13, plain amd64.
        assert_eq!(
            select(all, SID_SEARCH),
            Some(vec![
                "linux-binary-7.2.13+deb14-amd64".to_string(),
                "linux-modules-7.2.13+deb14-amd64".to_string()
            ])
        );
        assert_eq!(
            select(Series::V7 { minor: Some(1) }, SID_SEARCH),
            Some(vec![
                "linux-binary-7.1.4+deb14-amd64".to_string(),
                "linux-modules-7.1.4+deb14-amd64".to_string()
            ])
        );
        assert_eq!(select(Series::V7 { minor: Some(3) }, SID_SEARCH), None);
        assert_eq!(select(Series::V7 { minor: Some(12) }, SID_SEARCH), None);
        // Flavours and debug packages are not images of the series.
        for n in [
            "linux-binary-7.2.13+deb14-cloud-amd64",
            "linux-binary-7.2.13+deb14-rt-amd64",
            "linux-image-7.2.13+deb14-amd64-dbg",
            "linux-modules-7.2.13+deb14-amd64",
            "linux-binary-7.2+deb14-amd64",
        ] {
            assert!(!all.matches(n), "{n}");
        }
        assert!(Series::V6_12.matches("linux-image-6.12.117+deb12-amd64-unsigned"));
        assert!(!Series::V6_12.matches("linux-image-6.12.117+deb12-amd64"));
        assert!(!Series::V6_1.matches("linux-image-6.1.0-57-cloud-amd64-unsigned"));
        // 6.1 and 6.12 images carry their modules.
        assert_eq!(select(Series::V6_1, SID_SEARCH), None);
        assert_eq!(
            modules_package("linux-binary-7.2.13+deb14-amd64").as_deref(),
            Some("linux-modules-7.2.13+deb14-amd64")
        );
        assert_eq!(modules_package("linux-image-6.1.0-57-amd64-unsigned"), None);
    }

    #[test]
    fn sid_apt_is_private() {
        let apt = SidApt {
            dir: PathBuf::from("/c/apt-sid"),
            mirror: "http://mirror.example/debian/".into(),
        };
        let list = apt.source_list();
        let entries: Vec<&str> = list.lines().filter(|l| !l.starts_with('#')).collect();
        assert_eq!(
            entries,
            ["deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://mirror.example/debian sid main"]
        );
        let o = apt.options();
        assert!(o.chunks(2).all(|c| c[0] == "-o"), "{o:?}");
        let set: Vec<&str> = o.iter().skip(1).step_by(2).map(String::as_str).collect();
        for want in [
            "Dir::Etc::sourcelist=/c/apt-sid/sources.list",
            "Dir::Etc::sourceparts=-",
            "Dir::State::Lists=/c/apt-sid/lists",
            "Dir::Cache=/c/apt-sid/cache",
            "Dir::Cache::pkgcache=",
            "Dir::Cache::srcpkgcache=",
        ] {
            assert!(set.contains(&want), "missing {want} in {set:?}");
        }
        // Nothing points at the system's state.
        assert!(
            set.iter().all(|s| !s.contains("/var/") && !s.contains("/etc/")),
            "{set:?}"
        );
    }

    #[test]
    fn unreachable_sid_is_an_update_failure() {
        // apt-get update exits 0 with these when the mirror cannot be reached.
        assert!(update_failure(
            "W: Failed to fetch http://127.0.0.1:9/debian/dists/sid/InRelease  Could not connect to 127.0.0.1:9"
        ));
        assert!(update_failure(
            "W: Some index files failed to download. They have been ignored, or old ones used instead."
        ));
        assert!(update_failure(
            "E: The repository 'http://x/debian sid Release' does not have a Release file."
        ));
        assert!(!update_failure(
            "Get:1 http://deb.debian.org/debian sid InRelease [193 kB]"
        ));
        assert!(!update_failure(
            "W: http://x/debian/dists/sid/InRelease: Key is stored in legacy trusted.gpg"
        ));
    }

    /// A mirror that refuses connections (a closed port on the loopback): without lists the
    /// update fails with a clear error; with lists from an earlier update they are used.
    #[test]
    fn unreachable_sid_is_a_clear_error() {
        if Command::new("apt-get").arg("--version").output().is_err() {
            eprintln!("no apt-get: skipped");
            return;
        }
        let t = std::env::temp_dir().join(format!("lrugen-sid-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&t);
        let apt = SidApt {
            dir: t.join("apt-sid"),
            mirror: "http://127.0.0.1:9/debian".into(),
        };
        let e = apt.update().unwrap_err().to_string();
        assert!(
            e.contains("cannot reach Debian sid at http://127.0.0.1:9/debian"),
            "{e}"
        );
        assert!(e.contains("Failed to fetch") || e.contains("apt-get update"), "{e}");
        assert_eq!(
            std::fs::read_to_string(apt.dir.join("sources.list")).unwrap(),
            apt.source_list()
        );
        // Lists of an earlier update, a day old: a warning, and they are used.
        let old = apt
            .dir
            .join("lists/127.0.0.1:9_debian_dists_sid_main_binary-amd64_Packages");
        std::fs::write(&old, "").unwrap();
        let f = std::fs::File::options().write(true).open(&old).unwrap();
        f.set_modified(std::time::SystemTime::now() - std::time::Duration::from_secs(86_400))
            .unwrap();
        assert!(apt.update().is_ok());
        let _ = std::fs::remove_dir_all(&t);
    }

    #[test]
    fn locate_finds_both_layouts() {
        let t = std::env::temp_dir().join(format!("lrugen-locate-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&t);
        // Debian 12: boot/vmlinuz-KVER + lib/modules/KVER.
        let a = t.join("a");
        std::fs::create_dir_all(a.join("boot")).unwrap();
        std::fs::create_dir_all(a.join("lib/modules/6.1.0-57-amd64/kernel")).unwrap();
        std::fs::write(a.join("boot/vmlinuz-6.1.0-57-amd64"), b"x").unwrap();
        let (img, m) = locate(&a).unwrap();
        assert_eq!(img, a.join("boot/vmlinuz-6.1.0-57-amd64"));
        assert_eq!(m, a.join("lib/modules/6.1.0-57-amd64"));
        // 7.x: usr/lib/modules/KVER/{vmlinuz,kernel/}.
        let b = t.join("b");
        std::fs::create_dir_all(b.join("usr/lib/modules/7.2.13+deb14-amd64/kernel")).unwrap();
        let e = locate(&b).unwrap_err().to_string();
        assert!(e.contains("no kernel image"), "{e}");
        std::fs::write(b.join("usr/lib/modules/7.2.13+deb14-amd64/vmlinuz"), b"x").unwrap();
        let (img, m) = locate(&b).unwrap();
        assert_eq!(img, b.join("usr/lib/modules/7.2.13+deb14-amd64/vmlinuz"));
        assert_eq!(m, b.join("usr/lib/modules/7.2.13+deb14-amd64"));
        let _ = std::fs::remove_dir_all(&t);
    }
}
