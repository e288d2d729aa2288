// SPDX-License-Identifier: GPL-2.0-only
//! Debian kernel packages: resolve the newest name of a series, download it with `apt-get
//! download` (Debian's archive only), unpack it with `dpkg-deb -x`, extract `vmlinux`, run
//! `depmod -b`.

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

/// The `apt-cache search` pattern of a series.
pub fn series_pattern(series: &str) -> Result<&'static str, Error> {
    match series {
        "6.1" => Ok(r"^linux-image-6\.1\.0-[0-9]+-amd64-unsigned$"),
        "6.12" => Ok(r"^linux-image-6\.12\.[0-9]+\+deb[0-9]+-amd64-unsigned$"),
        _ => Err(Error::Config(format!(
            "unknown Debian kernel series '{series}': expected 6.1 or 6.12 (or give a package name or an image)"
        ))),
    }
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

/// Resolve the newest package of a series with `apt-cache search`.
pub fn resolve(series: &str) -> Result<String, Error> {
    let pat = series_pattern(series)?;
    let out = Command::new("apt-cache")
        .args(["search", pat])
        .output()
        .map_err(|e| Error::Tool(format!("apt-cache: {e}")))?;
    newest(&String::from_utf8_lossy(&out.stdout)).ok_or_else(|| {
        Error::Kernel(format!(
            "no package matches {pat} (run apt-get update; 6.1 and 6.12 are in bookworm-security)"
        ))
    })
}

/// Download (once) and unpack a package into `cache/<package>/`.
pub fn fetch(package: &str, cache: &Path) -> Result<PathBuf, Error> {
    let dir = cache.join(package);
    let root = dir.join("root");
    if root.join("boot").is_dir() {
        return Ok(root);
    }
    std::fs::create_dir_all(&dir).map_err(|e| Error::Io(format!("mkdir {}: {e}", dir.display())))?;
    let st = Command::new("apt-get")
        .args(["download", package])
        .current_dir(&dir)
        .status()
        .map_err(|e| Error::Tool(format!("apt-get: {e}")))?;
    if !st.success() {
        return Err(Error::Kernel(format!("apt-get download {package} failed ({st})")));
    }
    let deb = std::fs::read_dir(&dir)
        .map_err(|e| Error::Io(e.to_string()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| p.extension().is_some_and(|x| x == "deb"))
        .ok_or_else(|| Error::Kernel(format!("no .deb in {}", dir.display())))?;
    let tmp = dir.join("root.tmp");
    let _ = std::fs::remove_dir_all(&tmp);
    let st = Command::new("dpkg-deb")
        .arg("-x")
        .arg(&deb)
        .arg(&tmp)
        .status()
        .map_err(|e| Error::Tool(format!("dpkg-deb: {e}")))?;
    if !st.success() {
        return Err(Error::Kernel(format!("dpkg-deb -x {} failed", deb.display())));
    }
    std::fs::rename(&tmp, &root).map_err(|e| Error::Io(e.to_string()))?;
    Ok(root)
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
        let st = Command::new("depmod")
            .arg("-b")
            .arg(base)
            .arg(&kver)
            .status()
            .map_err(|e| Error::Tool(format!("depmod: {e} (install kmod)")))?;
        if !st.success() {
            return Err(Error::Tool(format!("depmod -b {} {kver} failed", base.display())));
        }
    }
    Ok(PreparedKernel {
        vmlinux,
        modules: modules.to_path_buf(),
        package,
    })
}

/// Make a kernel bootable: resolve, download, unpack, extract, depmod.
pub fn prepare(src: &KernelSource, cache: &Path) -> Result<PreparedKernel, Error> {
    let package = match src {
        KernelSource::Image { image, modules } => {
            let out = cache.join("user");
            std::fs::create_dir_all(&out).map_err(|e| Error::Io(e.to_string()))?;
            let _ = std::fs::remove_file(out.join("vmlinux"));
            return finish(image, modules, &out, None);
        }
        KernelSource::Debian { series } => resolve(series)?,
        KernelSource::Package(p) => p.clone(),
    };
    let root = fetch(&package, cache)?;
    let kver = std::fs::read_dir(root.join("lib/modules"))
        .map_err(|e| Error::Kernel(format!("{package}: no lib/modules: {e}")))?
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .next()
        .ok_or_else(|| Error::Kernel(format!("{package}: empty lib/modules")))?;
    let image = root.join(format!("boot/vmlinuz-{kver}"));
    finish(
        &image,
        &root.join("lib/modules").join(&kver),
        &cache.join(&package),
        Some(package),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn newest_sorts_numbers_as_numbers() {
        let s = "linux-image-6.1.0-9-amd64-unsigned - Linux 6.1\n\
                 linux-image-6.1.0-57-amd64-unsigned - Linux 6.1\n\
                 linux-image-6.1.0-10-amd64-unsigned - Linux 6.1\n";
        assert_eq!(newest(s).as_deref(), Some("linux-image-6.1.0-57-amd64-unsigned"));
        assert_eq!(newest(""), None);
        assert!(series_pattern("5.10").is_err());
    }
}
