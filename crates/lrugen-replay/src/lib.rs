// SPDX-License-Identifier: GPL-2.0-only
//! The op file: lrugen's operation stream in a compact text form that the guest replayer reads.
//!
//! ```text
//! lrugen-ops 1
//! window 1000              # print miss counts every 1000 measured accesses
//! file 0 data/file0 16384  # file id, path relative to the data mount, pages
//! file 1 data/file1 512 normal  # optional advice: random (the default) or normal
//! anon 4096                # an anonymous region of 4096 pages (optional)
//! r 0 123                  # buffered pread of page 123 of file 0
//! p 0 123                  # buffered pwrite of the whole page 123 of file 0
//! m 0 123                  # a load from page 123 of file 0 through a shared mmap
//! l 17                     # a load from anon page 17
//! s 17                     # a store to anon page 17
//! w 0                      # measure from here on (lines before are warm-up, e.g. populating)
//! ```
//!
//! Blank lines and `#` comments are ignored. Without a `w` line every access is measured.
//! This module has no dependencies so the host side (`lrugen-kernel`) writes what the guest reads.

use std::fmt;

/// The largest file or anon region an op file may declare, in pages (16 TiB): the replayer maps
/// and tracks them whole.
pub const MAX_PAGES: u64 = 1 << 32;

/// One operation of the replay.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReplayOp {
    /// Buffered `pread` of one 4 KiB page.
    Read { file: u32, index: u64 },
    /// Buffered `pwrite` of one whole 4 KiB page (an uncached page is not read first).
    Write { file: u32, index: u64 },
    /// A load from one page of a file mapped shared and read-only.
    MmapLoad { file: u32, index: u64 },
    /// A load from an anon page.
    Load { vpn: u64 },
    /// A store to an anon page.
    Store { vpn: u64 },
    /// Measurement starts here.
    MeasureStart,
}

/// The access-pattern advice a file is opened and mapped with.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FileAdvice {
    /// `POSIX_FADV_RANDOM` on the descriptor, `MADV_RANDOM` on the mapping: no read-ahead, no
    /// mmap read-around, and (from 6.3, `vma_has_recency`) young PTEs of the mapping ignored.
    #[default]
    Random,
    /// `POSIX_FADV_NORMAL` and `MADV_NORMAL`: the kernel's default read-ahead (as large as the
    /// disk's `read_ahead_kb`) and read-around.
    Normal,
}

impl FileAdvice {
    /// The word in a `file` line.
    pub fn name(self) -> &'static str {
        match self {
            FileAdvice::Random => "random",
            FileAdvice::Normal => "normal",
        }
    }
}

/// A file the ops name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReplayFile {
    /// Id used by ops.
    pub id: u32,
    /// Path relative to the data directory given to the replayer.
    pub path: String,
    /// Size in pages.
    pub pages: u64,
    /// Advice.
    pub advice: FileAdvice,
}

/// A parsed op file.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OpFile {
    /// Measured accesses per reported window (0: one window).
    pub window: u64,
    /// Files.
    pub files: Vec<ReplayFile>,
    /// Anon region size in pages (0: none).
    pub anon_pages: u64,
    /// The ops.
    pub ops: Vec<ReplayOp>,
}

/// A malformed op file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpFileError {
    /// 1-based line.
    pub line: usize,
    /// What was wrong.
    pub msg: String,
}

impl fmt::Display for OpFileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "op file line {}: {}", self.line, self.msg)
    }
}

impl std::error::Error for OpFileError {}

impl OpFile {
    /// Serialize.
    pub fn to_text(&self) -> String {
        use fmt::Write as _;
        let mut s = String::with_capacity(16 * self.ops.len() + 64);
        s.push_str("lrugen-ops 1\n");
        let _ = writeln!(s, "window {}", self.window);
        for f in &self.files {
            let _ = match f.advice {
                FileAdvice::Random => writeln!(s, "file {} {} {}", f.id, f.path, f.pages),
                a => writeln!(s, "file {} {} {} {}", f.id, f.path, f.pages, a.name()),
            };
        }
        if self.anon_pages > 0 {
            let _ = writeln!(s, "anon {}", self.anon_pages);
        }
        for op in &self.ops {
            let _ = match op {
                ReplayOp::Read { file, index } => writeln!(s, "r {file} {index}"),
                ReplayOp::Write { file, index } => writeln!(s, "p {file} {index}"),
                ReplayOp::MmapLoad { file, index } => writeln!(s, "m {file} {index}"),
                ReplayOp::Load { vpn } => writeln!(s, "l {vpn}"),
                ReplayOp::Store { vpn } => writeln!(s, "s {vpn}"),
                ReplayOp::MeasureStart => writeln!(s, "w 0"),
            };
        }
        s
    }

    /// Whether some op writes file `id` (the replayer then opens it read-write and the guest
    /// mounts the data disk read-write).
    pub fn writes(&self, id: u32) -> bool {
        self.ops
            .iter()
            .any(|o| matches!(o, ReplayOp::Write { file, .. } if *file == id))
    }

    /// Parse, checking that every op names a declared file and stays within its size.
    pub fn parse(text: &str) -> Result<OpFile, OpFileError> {
        let mut out = OpFile::default();
        let mut seen_header = false;
        let mut seen_anon = false;
        for (i, raw) in text.lines().enumerate() {
            let line = i + 1;
            let err = |msg: String| OpFileError { line, msg };
            let l = raw.split('#').next().unwrap_or("").trim();
            if l.is_empty() {
                continue;
            }
            let mut it = l.split_ascii_whitespace();
            let kw = it.next().unwrap_or("");
            let mut num = |what: &str| -> Result<u64, OpFileError> {
                let t = it.next().ok_or_else(|| err(format!("missing {what} after '{kw}'")))?;
                t.parse::<u64>()
                    .map_err(|_| err(format!("expected {what} (a number), found '{t}'")))
            };
            if !seen_header {
                if l != "lrugen-ops 1" {
                    return Err(err(format!("expected header 'lrugen-ops 1', found '{l}'")));
                }
                seen_header = true;
                continue;
            }
            let file_ok = |out: &OpFile, file: u64, index: u64| -> Result<u32, OpFileError> {
                let f = out
                    .files
                    .iter()
                    .find(|f| f.id as u64 == file)
                    .ok_or_else(|| err(format!("file {file} is not declared")))?;
                if index >= f.pages {
                    return Err(err(format!("page {index} is beyond file {file} ({} pages)", f.pages)));
                }
                Ok(file as u32)
            };
            match kw {
                "window" => out.window = num("window size")?,
                "anon" => {
                    if seen_anon {
                        return Err(err("anon region declared twice (an op file has one)".into()));
                    }
                    seen_anon = true;
                    let n = num("anon pages")?;
                    if n > MAX_PAGES {
                        return Err(err(format!("anon region of {n} pages: at most {MAX_PAGES} (16 TiB)")));
                    }
                    out.anon_pages = n;
                }
                "file" => {
                    let id = num("file id")?;
                    let path = it.next().ok_or_else(|| err("missing file path".into()))?.to_string();
                    let pages = it
                        .next()
                        .and_then(|t| t.parse::<u64>().ok())
                        .ok_or_else(|| err("expected the file's size in pages".into()))?;
                    if id > u32::MAX as u64 {
                        return Err(err(format!("file id {id} too large")));
                    }
                    if pages > MAX_PAGES {
                        return Err(err(format!("file of {pages} pages: at most {MAX_PAGES} (16 TiB)")));
                    }
                    let advice = match it.next() {
                        None | Some("random") => FileAdvice::Random,
                        Some("normal") => FileAdvice::Normal,
                        Some(t) => {
                            return Err(err(format!(
                                "expected the file's advice (random or normal) after its size, found '{t}'"
                            )))
                        }
                    };
                    if let Some(t) = it.next() {
                        return Err(err(format!("unexpected '{t}' after the file's advice")));
                    }
                    if out.files.iter().any(|f| f.id as u64 == id) {
                        return Err(err(format!("file id {id} declared twice")));
                    }
                    out.files.push(ReplayFile {
                        id: id as u32,
                        path,
                        pages,
                        advice,
                    });
                }
                "r" | "m" | "p" => {
                    let file = num("file id")?;
                    let index = num("page index")?;
                    let file = file_ok(&out, file, index)?;
                    out.ops.push(match kw {
                        "r" => ReplayOp::Read { file, index },
                        "p" => ReplayOp::Write { file, index },
                        _ => ReplayOp::MmapLoad { file, index },
                    });
                }
                "l" | "s" => {
                    let vpn = num("anon page")?;
                    if vpn >= out.anon_pages {
                        return Err(err(format!(
                            "anon page {vpn} is beyond the region ({} pages)",
                            out.anon_pages
                        )));
                    }
                    out.ops.push(if kw == "l" {
                        ReplayOp::Load { vpn }
                    } else {
                        ReplayOp::Store { vpn }
                    });
                }
                "w" => out.ops.push(ReplayOp::MeasureStart),
                _ => {
                    return Err(err(format!(
                        "unknown op '{kw}': expected r, p, m, l, s, w, file, anon or window"
                    )))
                }
            }
        }
        if !seen_header {
            return Err(OpFileError {
                line: 1,
                msg: "empty op file".into(),
            });
        }
        Ok(out)
    }
}

/// Marker lines the replayer prints (parsed by `lrugen-kernel`).
pub const WINDOW_PREFIX: &str = "lrugen-replay window";
/// The final line.
pub const TOTAL_PREFIX: &str = "lrugen-replay total";
/// A file dumped by the replayer (options `--end NAME=PATH`, after the last access, and
/// `--every NAME=PATH`, after each full window): `lrugen-replay dump NAME ACCESSES`, the file's
/// text, then [`DUMP_END`]. `ACCESSES` counts the measured accesses done so far.
pub const DUMP_PREFIX: &str = "lrugen-replay dump";
/// See [`DUMP_PREFIX`].
pub const DUMP_END: &str = "lrugen-replay dump-end";

#[cfg(test)]
mod tests {
    use super::*;

    /// Fuzzing found a second `anon` line accepted: one shrinking the region left earlier stores
    /// beyond it (and the printed file did not parse back).
    #[test]
    fn one_anon_region() {
        let e = OpFile::parse("lrugen-ops 1\nanon 3\ns 2\nanon 2\n").unwrap_err();
        assert_eq!(
            (e.line, e.msg.as_str()),
            (4, "anon region declared twice (an op file has one)")
        );
        assert!(OpFile::parse("lrugen-ops 1\nanon 3\nanon 3\n").is_err());
        assert_eq!(OpFile::parse("lrugen-ops 1\nanon 3\ns 2\n").unwrap().anon_pages, 3);
    }

    #[test]
    fn round_trip() {
        let f = OpFile {
            window: 2,
            files: vec![
                ReplayFile {
                    id: 0,
                    path: "file0".into(),
                    pages: 8,
                    advice: FileAdvice::Random,
                },
                ReplayFile {
                    id: 1,
                    path: "file1".into(),
                    pages: 2,
                    advice: FileAdvice::Normal,
                },
            ],
            anon_pages: 4,
            ops: vec![
                ReplayOp::Store { vpn: 3 },
                ReplayOp::MeasureStart,
                ReplayOp::Read { file: 0, index: 7 },
                ReplayOp::MmapLoad { file: 0, index: 1 },
                ReplayOp::Load { vpn: 0 },
                ReplayOp::Write { file: 0, index: 7 },
            ],
        };
        let text = f.to_text();
        assert!(text.ends_with("l 0\np 0 7\n"), "{text}");
        assert_eq!(OpFile::parse(&text).unwrap(), f);
        assert!(text.contains("file 0 file0 8\nfile 1 file1 2 normal\n"), "{text}");
        assert!(f.writes(0));
        assert!(!f.writes(1));
        let e = OpFile::parse("lrugen-ops 1\nfile 0 f 4 sequential\n").unwrap_err();
        assert_eq!(e.line, 2);
        assert!(e.msg.contains("random or normal"), "{e}");
        let e = OpFile::parse("lrugen-ops 1\nfile 0 f 4 normal x\n").unwrap_err();
        assert!(e.msg.contains("unexpected 'x'"), "{e}");
    }

    #[test]
    fn sizes_the_replayer_cannot_map_and_duplicate_files_are_refused() {
        let head = "lrugen-ops 1\nwindow 0\n";
        let e = OpFile::parse(&format!("{head}file 0 f 4294967297\n")).unwrap_err();
        assert_eq!(e.line, 3);
        assert!(e.msg.contains("at most 4294967296"), "{e}");
        let e = OpFile::parse(&format!("{head}anon 99999999999\n")).unwrap_err();
        assert!(e.msg.contains("anon region of 99999999999 pages"), "{e}");
        let e = OpFile::parse(&format!("{head}file 0 f 4\nfile 0 g 8\n")).unwrap_err();
        assert_eq!((e.line, e.msg.as_str()), (4, "file id 0 declared twice"));
    }

    #[test]
    fn write_op_errors_name_the_line() {
        let head = "lrugen-ops 1\nwindow 0\nfile 0 f 4\n";
        let e = OpFile::parse(&format!("{head}p 0 1\np 0 4\n")).unwrap_err();
        assert_eq!(e.line, 5);
        assert!(e.msg.contains("page 4 is beyond file 0 (4 pages)"), "{e}");
        let e = OpFile::parse(&format!("{head}\np 2 0\n")).unwrap_err();
        assert_eq!(e.line, 5);
        assert!(e.msg.contains("file 2 is not declared"), "{e}");
        let e = OpFile::parse(&format!("{head}p 0\n")).unwrap_err();
        assert_eq!((e.line, e.msg.as_str()), (4, "missing page index after 'p'"));
        let e = OpFile::parse(&format!("{head}p 0 x1\n")).unwrap_err();
        assert_eq!(
            e.to_string(),
            "op file line 4: expected page index (a number), found 'x1'"
        );
        assert_eq!(
            OpFile::parse(&format!("{head}p 0 3 # a comment\n")).unwrap().ops,
            [ReplayOp::Write { file: 0, index: 3 }]
        );
    }

    #[test]
    fn errors_name_the_line() {
        let e = OpFile::parse("lrugen-ops 1\nfile 0 f 4\nr 0 4\n").unwrap_err();
        assert_eq!(e.line, 3);
        assert!(e.msg.contains("beyond"), "{e}");
        let e = OpFile::parse("lrugen-ops 1\nr 1 0\n").unwrap_err();
        assert!(e.msg.contains("not declared"), "{e}");
        assert!(OpFile::parse("hello\n").is_err());
        assert!(OpFile::parse("lrugen-ops 1\nx 1\n")
            .unwrap_err()
            .msg
            .contains("unknown op"));
    }

    /// Any line soup gives an op file or an error naming a line of the input, never a panic. A
    /// fixed xorshift sequence of lines built from the format's own words keeps it reproducible.
    #[test]
    fn garbage_never_panics() {
        const WORDS: &[&str] = &[
            "lrugen-ops",
            "1",
            "0",
            "4294967295",
            "4294967296",
            "18446744073709551615",
            "18446744073709551616",
            "-1",
            "window",
            "anon",
            "file",
            "f",
            "r",
            "p",
            "m",
            "l",
            "s",
            "w",
            "#",
            "é",
            "x1",
        ];
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut next = |n: usize| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % n as u64) as usize
        };
        for _ in 0..3000 {
            let mut text = String::from(if next(4) == 0 { "" } else { "lrugen-ops 1\n" });
            let nlines = next(8);
            for _ in 0..nlines {
                for _ in 0..next(5) {
                    text.push_str(WORDS[next(WORDS.len())]);
                    text.push(if next(5) == 0 { '\t' } else { ' ' });
                }
                text.push_str(if next(6) == 0 { "\r\n" } else { "\n" });
            }
            match OpFile::parse(&text) {
                Ok(f) => assert_eq!(OpFile::parse(&f.to_text()).as_ref(), Ok(&f), "{text:?}"),
                Err(e) => assert!(e.line >= 1 && e.line <= text.lines().count().max(1), "{e} in {text:?}"),
            }
        }
    }
}
