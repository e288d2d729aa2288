//! Trace formats and their detection from file names.

use std::fmt;
use std::path::Path;
use std::str::FromStr;

/// A trace format this crate reads. Either may be zstd-compressed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TraceFormat {
    /// ARC `.lis` text: `start_block n_blocks ignored request_number` per line.
    Arc,
    /// libCacheSim `oracleGeneral`: packed 24-byte little-endian records.
    OracleGeneral,
}

impl TraceFormat {
    /// Every format, for listings.
    pub const ALL: [TraceFormat; 2] = [TraceFormat::Arc, TraceFormat::OracleGeneral];

    /// The format implied by a file name, or `None` when the name is not one
    /// of the known forms: `.lis`, `.lis.zst` (ARC) and `.oracleGeneral`,
    /// `.oracleGeneral.bin`, `.oracleGeneral.zst`, `.oracleGeneral.bin.zst`
    /// (oracleGeneral). Matching is ASCII case-insensitive.
    pub fn from_path(path: &Path) -> Option<TraceFormat> {
        let name = path.file_name()?.to_str()?.to_ascii_lowercase();
        let name = name.strip_suffix(".zst").unwrap_or(&name);
        if name.ends_with(".lis") {
            return Some(TraceFormat::Arc);
        }
        let name = name.strip_suffix(".bin").unwrap_or(name);
        if name.ends_with(".oraclegeneral") {
            return Some(TraceFormat::OracleGeneral);
        }
        None
    }

    /// The short name accepted by [`FromStr`]: `arc` or `oracleGeneral`.
    pub fn name(self) -> &'static str {
        match self {
            TraceFormat::Arc => "arc",
            TraceFormat::OracleGeneral => "oracleGeneral",
        }
    }
}

impl fmt::Display for TraceFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Parses `arc` / `lis` or `oracleGeneral` / `oracle` (ASCII
/// case-insensitive). The error lists the accepted names.
impl FromStr for TraceFormat {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.to_ascii_lowercase().as_str() {
            "arc" | "lis" => Ok(TraceFormat::Arc),
            "oraclegeneral" | "oracle" => Ok(TraceFormat::OracleGeneral),
            _ => Err(format!(
                "unknown trace format \"{s}\"; known: arc (alias lis), oracleGeneral (alias oracle)"
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
        assert_eq!(f("x.csv"), None);
        assert_eq!(f("x.zst"), None);
        assert_eq!(f("x.bin"), None);
        assert_eq!(f("lis"), None);
        assert_eq!(f(""), None);
    }

    #[test]
    fn parses_names() {
        for f in TraceFormat::ALL {
            assert_eq!(f.name().parse::<TraceFormat>(), Ok(f));
        }
        assert!("csv".parse::<TraceFormat>().unwrap_err().contains("known"));
    }
}
