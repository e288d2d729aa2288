// SPDX-License-Identifier: GPL-2.0-only
//! Sizes as people write them: `64M`, `1G`, `1000p`. One parser for the command line and for
//! experiment files, so that a size means the same wherever it is written.

/// Bytes in a page.
const PAGE: u64 = 4096;

/// Parse a size: a number with an optional suffix `K`, `M`, `G`, `T` (binary; `KiB`/`KB` and the
/// like are accepted too) or `p` (pages). A bare number is bytes. Returns pages (bytes rounded
/// down to whole pages).
pub fn parse_pages(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let (num, mult) = match t.char_indices().find(|(_, c)| !c.is_ascii_digit()) {
        None => (t, 1u64),
        Some((i, _)) => {
            let mult = match &t[i..] {
                "p" | "P" | "pages" => PAGE,
                "k" | "K" | "KiB" | "KB" => 1 << 10,
                "m" | "M" | "MiB" | "MB" => 1 << 20,
                "g" | "G" | "GiB" | "GB" => 1 << 30,
                "t" | "T" | "TiB" | "TB" => 1 << 40,
                other => {
                    return Err(format!(
                        "bad size '{s}': unknown unit '{other}' (expected K, M, G, T or p for pages)"
                    ))
                }
            };
            (&t[..i], mult)
        }
    };
    let n: u64 = num
        .parse()
        .map_err(|_| format!("bad size '{s}': expected a number with an optional unit, e.g. 64M"))?;
    let bytes = n.checked_mul(mult).ok_or_else(|| format!("size '{s}' is too large"))?;
    Ok(if mult == PAGE { n } else { bytes / PAGE })
}

/// Parse a size written in an experiment file as a string: as [`parse_pages`], but the unit is
/// required (a bare number in a string would be bytes there and pages as a TOML integer, a
/// 4096-fold trap).
pub fn parse_size_with_unit(s: &str) -> Result<u64, String> {
    let t = s.trim();
    if !t.is_empty() && t.chars().all(|c| c.is_ascii_digit()) {
        return Err(format!(
            "size \"{s}\" has no unit: write an integer for pages ({t}) or a string with a unit \
             (\"{t}K\", \"{t}M\", \"{t}p\")"
        ));
    }
    parse_pages(s)
}

/// Whether `s` looks like a size with a unit (digits followed by a unit of [`parse_pages`]).
pub fn looks_like_size(s: &str) -> bool {
    let t = s.trim();
    let digits = t.chars().take_while(|c| c.is_ascii_digit()).count();
    digits > 0 && digits < t.len() && parse_pages(t).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_pages("64M"), Ok(16_384));
        assert_eq!(parse_pages("1G"), Ok(262_144));
        assert_eq!(parse_pages("1000p"), Ok(1000));
        assert_eq!(parse_pages("8192"), Ok(2));
        assert!(parse_pages("12X").unwrap_err().contains("unknown unit"));
        assert!(parse_pages("M").unwrap_err().contains("expected a number"));
        assert!(parse_pages("99999999999T").unwrap_err().contains("too large"));
        assert!(parse_size_with_unit("8192").unwrap_err().contains("no unit"));
        assert_eq!(parse_size_with_unit("32M"), Ok(8192));
        assert!(looks_like_size("32M") && looks_like_size("10p"));
        assert!(!looks_like_size("zipf:0.9") && !looks_like_size("123") && !looks_like_size("M"));
    }
}
