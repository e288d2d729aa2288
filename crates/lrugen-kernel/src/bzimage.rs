// SPDX-License-Identifier: GPL-2.0-only
//! The compressed payload of an x86 bzImage, per the boot protocol's setup header
//! (`Documentation/arch/x86/boot.rst`): `setup_sects` at 0x1f1 (0 means 4), `payload_offset` at
//! 0x248 and `payload_length` at 0x24c, both relative to the protected-mode code that starts at
//! `(setup_sects + 1) * 512`.

use crate::Error;
use std::io::Write as _;
use std::process::{Command, Stdio};

/// How the payload is compressed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Compression {
    /// xz (Debian 6.1).
    Xz,
    /// zstd (Debian 6.12 and later).
    Zstd,
    /// gzip.
    Gzip,
}

/// The compressed payload of `image`, and its compression.
pub fn payload(image: &[u8]) -> Result<(&[u8], Compression), Error> {
    let bad = |m: String| Error::Kernel(format!("not a bzImage: {m}"));
    if image.len() < 0x250 || &image[0x202..0x206] != b"HdrS" {
        return Err(bad("no 'HdrS' setup header magic at 0x202".into()));
    }
    let setup_sects = match image[0x1f1] {
        0 => 4,
        n => n as usize,
    };
    let le32 = |o: usize| u32::from_le_bytes(image[o..o + 4].try_into().unwrap()) as usize;
    let start = (setup_sects + 1) * 512 + le32(0x248);
    let len = le32(0x24c);
    let end = start.checked_add(len).filter(|&e| e <= image.len()).ok_or_else(|| {
        bad(format!(
            "payload {start:#x}+{len:#x} lies beyond the image ({:#x} bytes)",
            image.len()
        ))
    })?;
    let p = &image[start..end];
    let c = if p.starts_with(&[0xfd, b'7', b'z', b'X', b'Z', 0]) {
        Compression::Xz
    } else if p.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
        Compression::Zstd
    } else if p.starts_with(&[0x1f, 0x8b]) {
        Compression::Gzip
    } else {
        return Err(bad(format!(
            "unknown payload compression (first bytes {:02x?})",
            &p[..p.len().min(6)]
        )));
    };
    Ok((p, c))
}

/// Decompress the payload of `image` into the ELF `vmlinux`, with the host's `xz`, `zstd` or
/// `gzip`. The kernel's build appends the decompressed size (4 bytes) after the stream; it is
/// dropped.
pub fn extract_vmlinux(image: &[u8]) -> Result<Vec<u8>, Error> {
    let (p, c) = payload(image)?;
    let stream = &p[..p.len().saturating_sub(4)];
    let (tool, args): (&str, &[&str]) = match c {
        Compression::Xz => ("xz", &["-dc", "--single-stream"]),
        Compression::Zstd => ("zstd", &["-dcq"]),
        Compression::Gzip => ("gzip", &["-dc"]),
    };
    let mut child = Command::new(tool)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| Error::Tool(format!("{tool}: {e} (install xz-utils / zstd)")))?;
    let mut stdin = child.stdin.take().expect("piped");
    let data = stream.to_vec();
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&data);
    });
    let out = child
        .wait_with_output()
        .map_err(|e| Error::Tool(format!("{tool}: {e}")))?;
    let _ = writer.join();
    if !out.stdout.starts_with(b"\x7fELF") {
        return Err(Error::Tool(format!(
            "{tool} did not produce an ELF vmlinux ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    Ok(out.stdout)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A synthetic bzImage: 2 setup sectors after the boot sector, a payload at offset 0x40.
    pub fn synthetic(payload: &[u8]) -> Vec<u8> {
        let mut img = vec![0u8; 3 * 512 + 0x40 + payload.len() + 16];
        img[0x1f1] = 2;
        img[0x202..0x206].copy_from_slice(b"HdrS");
        img[0x248..0x24c].copy_from_slice(&0x40u32.to_le_bytes());
        img[0x24c..0x250].copy_from_slice(&(payload.len() as u32).to_le_bytes());
        img[3 * 512 + 0x40..3 * 512 + 0x40 + payload.len()].copy_from_slice(payload);
        img
    }

    #[test]
    fn finds_the_payload_and_its_compression() {
        let xz = [0xfd, b'7', b'z', b'X', b'Z', 0, 1, 2, 3];
        let img = synthetic(&xz);
        let (p, c) = payload(&img).unwrap();
        assert_eq!(p, &xz);
        assert_eq!(c, Compression::Xz);
        let zst = [0x28, 0xb5, 0x2f, 0xfd, 9];
        assert_eq!(payload(&synthetic(&zst)).unwrap(), (&zst[..], Compression::Zstd));
    }

    #[test]
    fn setup_sects_zero_means_four() {
        let mut img = vec![0u8; 5 * 512 + 8];
        img[0x202..0x206].copy_from_slice(b"HdrS");
        img[0x24c..0x250].copy_from_slice(&6u32.to_le_bytes());
        img[5 * 512..5 * 512 + 6].copy_from_slice(&[0x1f, 0x8b, 8, 0, 0, 0]);
        assert_eq!(payload(&img).unwrap().1, Compression::Gzip);
    }

    #[test]
    fn refuses_what_is_not_a_bzimage() {
        assert!(payload(&[0u8; 4096]).unwrap_err().to_string().contains("HdrS"));
        let mut img = synthetic(&[1, 2, 3, 4]);
        assert!(payload(&img).unwrap_err().to_string().contains("compression"));
        img[0x24c..0x250].copy_from_slice(&0xffffu32.to_le_bytes());
        assert!(payload(&img).unwrap_err().to_string().contains("beyond"));
    }

    #[test]
    fn extracts_a_gzip_payload_when_gzip_exists() {
        // Round trip through the host's gzip, if present (it is on every Debian machine).
        let Ok(mut child) = Command::new("gzip")
            .arg("-c")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
        else {
            return;
        };
        let mut elf = b"\x7fELF".to_vec();
        elf.extend(std::iter::repeat_n(7u8, 1000));
        child.stdin.take().unwrap().write_all(&elf).unwrap();
        let mut gz = child.wait_with_output().unwrap().stdout;
        gz.extend_from_slice(&(elf.len() as u32).to_le_bytes());
        assert_eq!(extract_vmlinux(&synthetic(&gz)).unwrap(), elf);
    }
}
