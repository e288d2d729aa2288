//! Trace formats and their detection from file names and first bytes.

use std::fmt;
use std::path::Path;
use std::str::FromStr;

use crate::iolog::{IOLOG_V2_HEADER, IOLOG_V3_HEADER};
use crate::lcs::LCS_MAGIC;
use crate::lrugentr::LRUGENTR_MAGIC;

/// A trace format this crate reads. Any of them may be zstd-compressed as a
/// whole (detected from the zstd magic bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TraceFormat {
    /// ARC `.lis` text: `start_block n_blocks ignored request_number` per line.
    Arc,
    /// libCacheSim `oracleGeneral`: packed 24-byte little-endian records.
    OracleGeneral,
    /// fio iolog, version 2 or 3 (told by the first line).
    Iolog,
    /// valgrind lackey memory trace (`--tool=lackey --trace-mem=yes`).
    Lackey,
    /// Delimited text with libCacheSim's column parameters
    /// ([`crate::CsvParams`]).
    Csv,
    /// libCacheSim `lcs`: a header, then records of version 1..8.
    Lcs,
    /// lrugen's own compact binary trace (`LRUGENTR`).
    Lrugen,
    /// Flat little-endian `u32` page indices, one per reference, no header (`.index32`).
    Index32,
    /// Flat little-endian `u64` page indices, one per reference, no header (`.index64`).
    Index64,
}

impl TraceFormat {
    /// Every format, for listings.
    pub const ALL: [TraceFormat; 9] = [
        TraceFormat::Arc,
        TraceFormat::OracleGeneral,
        TraceFormat::Iolog,
        TraceFormat::Lackey,
        TraceFormat::Csv,
        TraceFormat::Lcs,
        TraceFormat::Lrugen,
        TraceFormat::Index32,
        TraceFormat::Index64,
    ];

    /// The format implied by a file name, or `None` when the name is not one
    /// of the known forms (each optionally followed by `.zst`): `.lis` (ARC),
    /// `.oracleGeneral`, `.oracleGeneral.bin` (oracleGeneral), `.iolog`
    /// (fio), `.lackey` (valgrind), `.csv`, `.lcs`, `.lrugen`, `.index32`, `.index64`. Matching is
    /// ASCII case-insensitive.
    pub fn from_path(path: &Path) -> Option<TraceFormat> {
        let name = path.file_name()?.to_str()?.to_ascii_lowercase();
        let name = name.strip_suffix(".zst").unwrap_or(&name);
        let by_ext = [
            (".lis", TraceFormat::Arc),
            (".iolog", TraceFormat::Iolog),
            (".lackey", TraceFormat::Lackey),
            (".csv", TraceFormat::Csv),
            (".lcs", TraceFormat::Lcs),
            (".lrugen", TraceFormat::Lrugen),
            (".index32", TraceFormat::Index32),
            (".index64", TraceFormat::Index64),
        ];
        for (ext, f) in by_ext {
            if name.ends_with(ext) && name.len() > ext.len() {
                return Some(f);
            }
        }
        let name = name.strip_suffix(".bin").unwrap_or(name);
        if name.ends_with(".oraclegeneral") {
            return Some(TraceFormat::OracleGeneral);
        }
        None
    }

    /// The format announced by the first bytes of a (decompressed) trace when
    /// it has a magic number or a fixed first line: `LRUGENTR`, the lcs start
    /// magic, `fio version 2 iolog` / `fio version 3 iolog`. These take
    /// precedence over the file name.
    pub fn from_magic(head: &[u8]) -> Option<TraceFormat> {
        if head.starts_with(&LRUGENTR_MAGIC) {
            return Some(TraceFormat::Lrugen);
        }
        if head.starts_with(&LCS_MAGIC.to_le_bytes()) {
            return Some(TraceFormat::Lcs);
        }
        let first = head.split(|&c| c == b'\n').next().unwrap_or(b"");
        let first = first.trim_ascii_end();
        if first == IOLOG_V2_HEADER.as_bytes() || first == IOLOG_V3_HEADER.as_bytes() {
            return Some(TraceFormat::Iolog);
        }
        None
    }

    /// A guess from the first bytes when neither magic nor name tells: a
    /// first line that is a valgrind `==pid==` line or a lackey access (lackey),
    /// or the CloudPhysics csv header.
    pub fn sniff(head: &[u8]) -> Option<TraceFormat> {
        if crate::csv::sniff(head) {
            Some(TraceFormat::Csv)
        } else if crate::lackey::sniff(head) {
            Some(TraceFormat::Lackey)
        } else {
            None
        }
    }

    /// The short name accepted by [`FromStr`]: `arc`, `oracleGeneral`,
    /// `iolog`, `lackey`, `csv`, `lcs`, `lrugen`, `index32`, `index64`.
    pub fn name(self) -> &'static str {
        match self {
            TraceFormat::Arc => "arc",
            TraceFormat::OracleGeneral => "oracleGeneral",
            TraceFormat::Iolog => "iolog",
            TraceFormat::Lackey => "lackey",
            TraceFormat::Csv => "csv",
            TraceFormat::Lcs => "lcs",
            TraceFormat::Lrugen => "lrugen",
            TraceFormat::Index32 => "index32",
            TraceFormat::Index64 => "index64",
        }
    }
}

impl fmt::Display for TraceFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Parses a format name or alias (ASCII case-insensitive): `arc` / `lis`,
/// `oracleGeneral` / `oracle`, `iolog` / `fio`, `lackey` / `valgrind`, `csv`,
/// `lcs`, `lrugen` / `lrugentr`, `index32`, `index64`. The error lists the accepted names.
impl FromStr for TraceFormat {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.to_ascii_lowercase().as_str() {
            "arc" | "lis" => Ok(TraceFormat::Arc),
            "oraclegeneral" | "oracle" => Ok(TraceFormat::OracleGeneral),
            "iolog" | "fio" => Ok(TraceFormat::Iolog),
            "lackey" | "valgrind" => Ok(TraceFormat::Lackey),
            "csv" => Ok(TraceFormat::Csv),
            "lcs" => Ok(TraceFormat::Lcs),
            "lrugen" | "lrugentr" => Ok(TraceFormat::Lrugen),
            "index32" => Ok(TraceFormat::Index32),
            "index64" => Ok(TraceFormat::Index64),
            _ => Err(format!(
                "unknown trace format \"{s}\"; known: arc (alias lis), oracleGeneral (alias oracle), \
                 iolog (alias fio), lackey (alias valgrind), csv, lcs, lrugen, index32, index64 (flat \
                 little-endian page indices)"
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detects_from_names() {
        let f = |s: &str| TraceFormat::from_path(Path::new(s));
        assert_eq!(f("a/OLTP.lis"), Some(TraceFormat::Arc));
        assert_eq!(f("a/OLTP.lis.zst"), Some(TraceFormat::Arc));
        assert_eq!(f("x.oracleGeneral"), Some(TraceFormat::OracleGeneral));
        assert_eq!(f("x.oracleGeneral.bin"), Some(TraceFormat::OracleGeneral));
        assert_eq!(f("x.oracleGeneral.zst"), Some(TraceFormat::OracleGeneral));
        assert_eq!(f("x.oracleGeneral.bin.zst"), Some(TraceFormat::OracleGeneral));
        assert_eq!(f("x.csv"), Some(TraceFormat::Csv));
        assert_eq!(f("x.CSV.zst"), Some(TraceFormat::Csv));
        assert_eq!(f("z.iolog"), Some(TraceFormat::Iolog));
        assert_eq!(f("ls.lackey.zst"), Some(TraceFormat::Lackey));
        assert_eq!(f("t.lcs"), Some(TraceFormat::Lcs));
        assert_eq!(f("w.lrugen"), Some(TraceFormat::Lrugen));
        assert_eq!(f("p.index32"), Some(TraceFormat::Index32));
        assert_eq!(f("p.INDEX64.zst"), Some(TraceFormat::Index64));
        assert_eq!(f("x.zst"), None);
        assert_eq!(f("x.bin"), None);
        assert_eq!(f("lis"), None);
        assert_eq!(f(".lis"), None);
        assert_eq!(f(""), None);
    }

    #[test]
    fn detects_from_content() {
        assert_eq!(TraceFormat::from_magic(b"LRUGENTR\x01\x00"), Some(TraceFormat::Lrugen));
        assert_eq!(
            TraceFormat::from_magic(&LCS_MAGIC.to_le_bytes()),
            Some(TraceFormat::Lcs)
        );
        assert_eq!(
            TraceFormat::from_magic(b"fio version 3 iolog\n1 f add"),
            Some(TraceFormat::Iolog)
        );
        assert_eq!(
            TraceFormat::from_magic(b"fio version 2 iolog\r\n"),
            Some(TraceFormat::Iolog)
        );
        assert_eq!(TraceFormat::from_magic(b"fio version 4 iolog\n"), None);
        assert_eq!(TraceFormat::from_magic(b""), None);
        assert_eq!(
            TraceFormat::sniff(b"version,time,op,size,lbn\n1,2,28,512,7\n"),
            Some(TraceFormat::Csv)
        );
        assert_eq!(
            TraceFormat::sniff(b"==42== Lackey\nI  0400,3\n"),
            Some(TraceFormat::Lackey)
        );
        assert_eq!(TraceFormat::sniff(b"# Test samples\n"), None);
    }

    #[test]
    fn parses_names() {
        for f in TraceFormat::ALL {
            assert_eq!(f.name().parse::<TraceFormat>(), Ok(f));
        }
        assert!("tsv".parse::<TraceFormat>().unwrap_err().contains("known"));
    }
}
