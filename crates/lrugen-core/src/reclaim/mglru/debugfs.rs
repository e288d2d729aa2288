// SPDX-License-Identifier: GPL-2.0-only
//! `/sys/kernel/debug/lru_gen` (read-write) and `/sys/kernel/debug/lru_gen_full` (read-only):
//! the printer, a parser for the text real kernels print, and the write-command parser
//! (`mm/vmscan.c`: `lru_gen_seq_show`, `lru_gen_seq_show_full`, `lru_gen_seq_write`, `run_cmd`;
//! `kernel-mglru.md` §11, §14, §17.1 rows 26–29).
//!
//! # Reading: [`show`]
//!
//! Prints byte for byte what the kernel of the chosen [`Profile`] prints, every line ending in
//! `\n`, and every generation, tier and mm-stats line ending in its last marker character (a space
//! when the marker is blank, so those lines end with a space):
//!
//! | | [`Profile::V6_1`] (Debian 6.1.192) | [`Profile::V6_17`] (≈6.17) |
//! |---|---|---|
//! | header | `memcg %5hu %s` (16-bit id) | same (with `lru_gen_memcg_id_u64`, on in the 7.2 preset: `memcg %llu %s`, unpadded, as 7.x prints it) |
//! | first row of `lru_gen` | `min_seq[anon]` | `min(min_seq[anon], min_seq[file])` |
//! | first row of `lru_gen_full` | `max_seq − 3` (0 if `max_seq < 4`) | same |
//! | tier markers (max_seq / min_seq or stats / other) | `RT ` / `rep` / blanks | `RTx` / `rep` / `xxx` |
//! | `p` of tier `t` | `protected[hist][type][t − 1]` (tier 0 prints 0) | `protected[hist][type][t]` |
//! | mm-stats line | always; six `LOYNFA` / `loynfa` / blanks | only with a walk state; four `TYFA` / `tyfa` / `xxxx` |
//!
//! # Parsing: [`parse`] and [`detect_format`]
//!
//! Reads what 6.1, 6.12 and 7.x kernels print (both files), telling the formats apart from the
//! text itself ([`Format`]): 6.1 has blank tier markers and six mm stats; 6.12 has `RTx`/`xxx`
//! and four `TYFA` stats; 7.x prints the same body under an unpadded `memcg %llu %s` header
//! carrying the 64-bit cgroup id. Our own [`Profile::V6_17`] output has the 6.12 body and
//! header, so it is read as [`Format::V6_12`]. The parser never panics.
//!
//! # Writing: [`parse_commands`] and [`commands`]
//!
//! Splits the written text into commands exactly as `lru_gen_seq_write` does and scans each with
//! the kernel's own `sscanf` rules, so that what the kernel accepts, rejects or silently
//! reinterprets is reproduced here (see [`Command`] for the profile differences). Checks that need
//! the live state (memcg and node ids, generation numbers) belong to the executor; the helpers
//! [`check_age`], [`check_evict`] and [`eviction_done`] hold the kernel's sequence-number rules.

use super::pid::protected_idx;
use super::state::{
    gen_from_seq, hist_from_seq, mm_stat, LruGen, Profile, MAX_NR_GENS, MAX_NR_HIST_GENS, MAX_NR_TIERS, MIN_NR_GENS,
    SWAPPINESS_ANON_ONLY,
};
use crate::mm::folio::{ANON, FILE};
use std::fmt::{self, Write as _};

// ---------------------------------------------------------------------------------------------
// Reading: the printer
// ---------------------------------------------------------------------------------------------

/// One lruvec to print.
#[derive(Clone, Copy, Debug)]
pub struct LruvecView<'a> {
    /// `mem_cgroup_id()` of its memcg (printed as `%5hu`, i.e. truncated to 16 bits); 0 when the
    /// memory controller is disabled.
    pub memcg_id: u64,
    /// The cgroup path (`cgroup_path()`, e.g. `/` or `/t`); empty when memcg is disabled.
    pub path: &'a str,
    /// Node id.
    pub node: usize,
    /// Whether `node` is `first_memory_node` (only then is the `memcg` header printed).
    pub first_node: bool,
    /// The generations.
    pub lg: &'a LruGen,
}

/// Clock: jiffies now and `HZ` (Debian: 250) for `jiffies_to_msecs(now − birth)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Clock {
    /// `jiffies` at the time of the read.
    pub jiffies: u64,
    /// `CONFIG_HZ`.
    pub hz: u64,
}

/// `jiffies_to_msecs` of a 64-bit kernel built with `HZ = hz`: exact for the usual divisors of
/// 1000, rounded up otherwise; the `unsigned long` arithmetic wraps and the result is truncated
/// to the function's `unsigned int`. `hz == 0` (not a kernel configuration) is taken as 1000.
pub fn jiffies_to_msecs(j: u64, hz: u64) -> u32 {
    const MSEC_PER_SEC: u64 = 1000;
    let hz = if hz == 0 { MSEC_PER_SEC } else { hz };
    let ms = if hz <= MSEC_PER_SEC && MSEC_PER_SEC % hz == 0 {
        (MSEC_PER_SEC / hz).wrapping_mul(j)
    } else if hz > MSEC_PER_SEC && hz % MSEC_PER_SEC == 0 {
        let d = hz / MSEC_PER_SEC;
        j.wrapping_add(d - 1) / d
    } else {
        // HZ_TO_MSEC_NUM / HZ_TO_MSEC_DEN: 1000 / HZ in lowest terms, then DIV_ROUND_UP
        let g = gcd(MSEC_PER_SEC, hz);
        let (num, den) = (MSEC_PER_SEC / g, hz / g);
        j.wrapping_mul(num).wrapping_add(den - 1) / den
    };
    ms as u32
}

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// Markers of one profile's `lru_gen_full`.
struct Markers {
    /// Tier fields of the `max_seq` generation.
    rt: &'static [u8; 3],
    /// Tier fields without statistics.
    none: &'static [u8; 3],
    /// mm stats of `max_seq` with one history slot.
    mm_upper: &'static [u8],
    /// mm stats of older generations with `CONFIG_LRU_GEN_STATS`.
    mm_lower: &'static [u8],
    /// mm stats otherwise.
    mm_none: &'static [u8],
    /// Which of [`super::state::MmState::stats`]'s six slots each printed stat reads.
    mm_idx: &'static [usize],
}

const MARKERS_6_1: Markers = Markers {
    rt: b"RT ",
    none: b"   ",
    mm_upper: b"LOYNFA",
    mm_lower: b"loynfa",
    mm_none: b"      ",
    mm_idx: &[0, 1, 2, 3, 4, 5],
};

const MARKERS_MAINLINE: Markers = Markers {
    rt: b"RTx",
    none: b"xxx",
    mm_upper: b"TYFA",
    mm_lower: b"tyfa",
    mm_none: b"xxxx",
    mm_idx: &mm_stat::MAINLINE,
};

fn markers(profile: Profile) -> &'static Markers {
    if profile.switches.mm_stats_tyfa {
        &MARKERS_MAINLINE
    } else {
        &MARKERS_6_1
    }
}

/// Everything of one read that is the same for all lruvecs.
#[derive(Clone, Copy)]
struct ShowCtx {
    profile: Profile,
    full: bool,
    clock: Clock,
    nr_hist: usize,
    has_mm_state: bool,
}

/// Prints `lru_gen` (`full = false`) or `lru_gen_full` (`full = true`) for `views`, in order, as
/// the kernel of `profile` does (`lru_gen_seq_show` once per lruvec).
///
/// `nr_hist` is `NR_HIST_GENS`: 1, or 4 with `CONFIG_LRU_GEN_STATS` (other values are clamped
/// to 1..=4). `has_mm_state` says whether the lruvec has a page-table walk state; mainline prints
/// the mm-stats line only then, while 6.1 has no such condition and always prints it (the
/// argument is ignored for [`Profile::V6_1`]).
pub fn show(
    out: &mut String,
    profile: Profile,
    full: bool,
    views: &[LruvecView<'_>],
    clock: Clock,
    nr_hist: usize,
    has_mm_state: bool,
) {
    let ctx = ShowCtx {
        profile,
        full,
        clock,
        nr_hist: nr_hist.clamp(1, MAX_NR_HIST_GENS),
        has_mm_state,
    };
    for v in views {
        show_lruvec(out, ctx, v);
    }
}

/// Σ over zones of `max(nr_pages, 0)` in `unsigned long` arithmetic.
fn gen_size(lg: &LruGen, gen: usize, ty: usize) -> u64 {
    lg.nr_pages[gen][ty]
        .iter()
        .fold(0u64, |acc, &n| acc.wrapping_add(n.max(0) as u64))
}

/// The first generation a read prints.
fn first_row(profile: Profile, full: bool, lg: &LruGen) -> u64 {
    if !full {
        if profile.switches.aging_feedback_rework {
            // evictable_min_seq(min_seq, MAX_SWAPPINESS / 2): both types
            lg.min_seq[ANON].min(lg.min_seq[FILE])
        } else {
            lg.min_seq[ANON]
        }
    } else if lg.max_seq >= MAX_NR_GENS as u64 {
        lg.max_seq - MAX_NR_GENS as u64 + 1
    } else {
        0
    }
}

fn show_lruvec(out: &mut String, ctx: ShowCtx, v: &LruvecView<'_>) {
    let lg = v.lg;
    if v.first_node {
        if ctx.profile.switches.lru_gen_memcg_id_u64 {
            // 7.x: `%llu` of the 64-bit id, unpadded (what the 7.2 guest prints, `memcg 28 /t`)
            let _ = writeln!(out, "memcg {} {}", v.memcg_id, v.path);
        } else {
            // `%5hu` of an unsigned short id
            let _ = writeln!(out, "memcg {:>5} {}", v.memcg_id as u16, v.path);
        }
    }
    let _ = writeln!(out, " node {:>5}", v.node as i32);

    for seq in first_row(ctx.profile, ctx.full, lg)..=lg.max_seq {
        let gen = gen_from_seq(seq);
        let birth = lg.timestamps[gen];
        let age = jiffies_to_msecs(ctx.clock.jiffies.wrapping_sub(birth), ctx.clock.hz);
        let _ = write!(out, " {seq:>10} {age:>10}");
        for ty in [ANON, FILE] {
            let mark = if ctx.full && seq < lg.min_seq[ty] { 'x' } else { ' ' };
            let _ = write!(out, " {:>10}{}", gen_size(lg, gen, ty), mark);
        }
        out.push('\n');
        if ctx.full {
            show_full(out, ctx, lg, seq);
        }
    }
}

/// The tier lines and the mm-stats line under generation `seq` (`lru_gen_seq_show_full`).
fn show_full(out: &mut String, ctx: ShowCtx, lg: &LruGen, seq: u64) {
    let m = markers(ctx.profile);
    let hist = hist_from_seq(seq, ctx.nr_hist);
    for tier in 0..MAX_NR_TIERS {
        let _ = write!(out, "            {tier:>10}");
        for ty in [ANON, FILE] {
            let (s, n): (&[u8; 3], [u64; 3]) = if seq == lg.max_seq {
                (m.rt, [lg.avg_refaulted[ty][tier], lg.avg_total[ty][tier], 0])
            } else if seq == lg.min_seq[ty] || ctx.nr_hist > 1 {
                let p = protected_idx(&ctx.profile.switches, tier).map_or(0, |i| lg.protected[hist][ty][i]);
                (b"rep", [lg.refaulted[hist][ty][tier], lg.evicted[hist][ty][tier], p])
            } else {
                (m.none, [0; 3])
            };
            for (v, c) in n.iter().zip(s) {
                let _ = write!(out, " {v:>10}{}", *c as char);
            }
        }
        out.push('\n');
    }

    if ctx.profile.switches.mm_stats_tyfa && !ctx.has_mm_state {
        return;
    }
    out.push_str("                      ");
    for (i, &k) in m.mm_idx.iter().enumerate() {
        let (c, n) = if seq == lg.max_seq && ctx.nr_hist == 1 {
            (m.mm_upper[i], lg.mm_state.stats[hist][k])
        } else if seq != lg.max_seq && ctx.nr_hist > 1 {
            (m.mm_lower[i], lg.mm_state.stats[hist][k])
        } else {
            (m.mm_none[i], 0)
        };
        let _ = write!(out, " {n:>10}{}", c as char);
    }
    out.push('\n');
}

// ---------------------------------------------------------------------------------------------
// Reading: the parser
// ---------------------------------------------------------------------------------------------

/// The text format of a real kernel's `lru_gen`/`lru_gen_full`, as told apart by
/// [`detect_format`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Format {
    /// 6.1: `memcg %5hu %s`; tier markers `RT ` / `rep` / blanks; six mm stats `LOYNFA`.
    V6_1,
    /// 6.12 (also 6.13–6.17 and our [`Profile::V6_17`]): `memcg %5hu %s`; tier markers
    /// `RTx` / `rep` / `xxx`; four mm stats `TYFA`.
    V6_12,
    /// 7.x: the 6.12 body under `memcg %llu %s` (64-bit cgroup id, unpadded, e.g. `memcg 28 /t`).
    V7,
}

/// One tier line of `lru_gen_full`: for anon then file, three `(value, marker)` fields
/// (`R`/`T`/`x`, `r`/`e`/`p`, `x`, or `' '` when blank).
pub type TierRow = [[(u64, char); 3]; 2];

/// One generation line of a parsed read, with the lines under it in `lru_gen_full`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParsedGen {
    /// Sequence number.
    pub seq: u64,
    /// Age in milliseconds.
    pub age_ms: u64,
    /// Pages of anon and file.
    pub pages: [u64; 2],
    /// Per type: false when marked `x` (a slot older than that type's `min_seq`). Only
    /// `lru_gen_full` prints the mark, so in `lru_gen` both are always true.
    pub live: [bool; 2],
    /// `lru_gen_full`: the tier lines in order (index = tier). Real reads have four; a fragment
    /// may have fewer. `None` in `lru_gen`.
    pub tiers: Option<Vec<TierRow>>,
    /// `lru_gen_full`: the mm-stats line as `(value, marker)` pairs: six in 6.1, four since
    /// 6.12; `None` when absent.
    pub mm_stats: Option<Vec<(u64, char)>>,
}

/// One lruvec (one `node` section) of a parsed read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParsedLruvec {
    /// The id of the last `memcg` header: the 16-bit memcg id (6.x) or the cgroup id (7.x).
    pub memcg_id: u64,
    /// The cgroup path of that header (empty when memcg is disabled).
    pub path: String,
    /// Node id.
    pub node: usize,
    /// The generation lines, in order (consecutive sequence numbers).
    pub gens: Vec<ParsedGen>,
}

/// Why a text is not a `lru_gen` read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    /// 1-based line number (one past the last line for an error at the end of the text).
    pub line: usize,
    /// What the parser expected there.
    pub expected: String,
    /// What it found (the offending line or token, quoted and shortened).
    pub found: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "line {}: expected {}, found {}",
            self.line, self.expected, self.found
        )
    }
}

impl std::error::Error for ParseError {}

/// A number with the marker character printed right after it (`None`: blank).
type Field = (u64, Option<u8>);

/// How the id of a `memcg` header is laid out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Header {
    /// `%5hu` (6.x).
    Padded,
    /// `%llu` (7.x).
    Unpadded,
    /// Either (a five-digit id not above 65535).
    Either,
}

/// One classified line.
#[derive(Clone, Debug)]
enum Raw<'a> {
    Blank,
    Memcg { id: u64, path: &'a str, header: Header },
    Node(usize),
    Gen { seq: u64, age: u64, pages: [Field; 2] },
    Tier { tier: u64, fields: [Field; 6] },
    Mm(Vec<Field>),
}

/// Body evidence: which generation of markers a line uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Body {
    Old,
    New,
}

const GRAMMAR_LINE: &str = "a `memcg` header, a ` node` line, a generation line (4 fields), \
                            a tier line (7 fields) or an mm-stats line (4 or 6 fields)";

fn quote(s: &str) -> String {
    const MAX: usize = 72;
    let t = s.trim_end();
    if t.chars().count() > MAX {
        format!("`{}…`", t.chars().take(MAX).collect::<String>())
    } else {
        format!("`{t}`")
    }
}

fn perr(line: usize, expected: impl Into<String>, found: impl Into<String>) -> ParseError {
    ParseError {
        line,
        expected: expected.into(),
        found: found.into(),
    }
}

fn marker_char(m: Option<u8>) -> char {
    m.map_or(' ', char::from)
}

/// Why a line is not part of the format: what was expected, and what was found (quoted).
type LineErr = (String, String);

/// A whitespace-separated token: digits and at most one marker character.
fn parse_field(tok: &str) -> Result<Field, LineErr> {
    let b = tok.as_bytes();
    let nd = b.iter().take_while(|c| c.is_ascii_digit()).count();
    if nd == 0 {
        return Err(("a number".into(), quote(tok)));
    }
    if b.len() > nd + 1 {
        return Err(("a number with at most one marker character".into(), quote(tok)));
    }
    let v = tok[..nd]
        .parse::<u64>()
        .map_err(|_| ("a number below 2^64".to_string(), quote(tok)))?;
    Ok((v, b.get(nd).copied()))
}

fn parse_memcg(line: &str) -> Result<Raw<'_>, LineErr> {
    const EXPECTED: &str = "`memcg <id> <path>` (`memcg %5hu %s` or `memcg %llu %s`)";
    let bad = |what: &str| Err((format!("{EXPECTED}{what}"), quote(line)));
    let Some(rest) = line.trim_start().strip_prefix("memcg") else {
        return bad("");
    };
    let spaces = rest.bytes().take_while(|&c| c == b' ').count();
    let rest = &rest[spaces..];
    let nd = rest.bytes().take_while(u8::is_ascii_digit).count();
    if spaces == 0 || nd == 0 {
        return bad("");
    }
    let Ok(id) = rest[..nd].parse::<u64>() else {
        return bad(" with an id below 2^64");
    };
    let after = &rest[nd..];
    let path = if after.is_empty() {
        ""
    } else if let Some(p) = after.strip_prefix(' ') {
        p
    } else {
        return bad(" with a space after the id");
    };
    let header = if nd < 5 {
        if spaces == 1 {
            Header::Unpadded
        } else if spaces == 6 - nd {
            Header::Padded
        } else {
            return bad(" with the id right-aligned in 5 columns or unpadded");
        }
    } else if spaces != 1 {
        return bad(" with one space before an id of 5 or more digits");
    } else if nd == 5 && id <= u64::from(u16::MAX) {
        Header::Either
    } else {
        Header::Unpadded
    };
    Ok(Raw::Memcg { id, path, header })
}

fn parse_node(line: &str) -> Result<Raw<'_>, LineErr> {
    let bad = |what: &str| Err((format!("` node <id>` (` node %5d`){what}"), quote(line)));
    let Some(rest) = line.trim_start().strip_prefix("node") else {
        return bad("");
    };
    let t = rest.trim_start_matches(' ');
    if t.len() == rest.len() {
        return bad("");
    }
    let nd = t.bytes().take_while(u8::is_ascii_digit).count();
    if nd == 0 || !t[nd..].trim().is_empty() {
        return bad("");
    }
    match t[..nd].parse::<u64>().ok().and_then(|n| usize::try_from(n).ok()) {
        Some(node) => Ok(Raw::Node(node)),
        None => bad(" with a node id that fits"),
    }
}

/// Classifies one line.
fn classify(line: &str) -> Result<Raw<'_>, LineErr> {
    let t = line.trim_start();
    if t.is_empty() {
        return Ok(Raw::Blank);
    }
    if t.starts_with("memcg") {
        return parse_memcg(line);
    }
    if t.starts_with("node") {
        return parse_node(line);
    }
    let toks: Vec<&str> = line.split_ascii_whitespace().collect();
    let fields = toks
        .iter()
        .map(|t| parse_field(t))
        .collect::<Result<Vec<Field>, LineErr>>()?;
    match fields.len() {
        4 if fields[0].1.is_none() => {
            if fields[1].1.is_some() {
                return Err((
                    "a generation line ` seq age anon file` with an unmarked age".into(),
                    quote(toks[1]),
                ));
            }
            for (f, tok) in fields[2..].iter().zip(&toks[2..]) {
                if !matches!(f.1, None | Some(b'x')) {
                    return Err(("a page count marked `x` or unmarked".into(), quote(tok)));
                }
            }
            Ok(Raw::Gen {
                seq: fields[0].0,
                age: fields[1].0,
                pages: [fields[2], fields[3]],
            })
        }
        4 | 6 => Ok(Raw::Mm(fields)),
        7 => {
            if fields[0].1.is_some() {
                return Err(("an unmarked tier number".into(), quote(toks[0])));
            }
            let mut f = [(0, None); 6];
            f.copy_from_slice(&fields[1..]);
            Ok(Raw::Tier {
                tier: fields[0].0,
                fields: f,
            })
        }
        n => Err((GRAMMAR_LINE.into(), format!("a line of {n} fields: {}", quote(line)))),
    }
}

fn triple(f: &[Field]) -> [Option<u8>; 3] {
    [f[0].1, f[1].1, f[2].1]
}

const T_RT_BLANK: [Option<u8>; 3] = [Some(b'R'), Some(b'T'), None];
const T_BLANK: [Option<u8>; 3] = [None, None, None];
const T_RTX: [Option<u8>; 3] = [Some(b'R'), Some(b'T'), Some(b'x')];
const T_XXX: [Option<u8>; 3] = [Some(b'x'), Some(b'x'), Some(b'x')];
const T_REP: [Option<u8>; 3] = [Some(b'r'), Some(b'e'), Some(b'p')];

fn marker_string(m: impl IntoIterator<Item = Option<u8>>) -> String {
    format!("`{}`", m.into_iter().map(marker_char).collect::<String>())
}

/// Which format a tier line's markers belong to (`Some`), or `None` for `rep` (both).
fn tier_body(fields: &[Field; 6]) -> Result<Option<Body>, LineErr> {
    let mut body = None;
    for half in [&fields[..3], &fields[3..]] {
        let b = match triple(half) {
            T_REP => None,
            T_RT_BLANK | T_BLANK => Some(Body::Old),
            T_RTX | T_XXX => Some(Body::New),
            t => {
                return Err((
                    "tier markers `RT `, `rep` or blank (6.1), or `RTx`, `rep` or `xxx` (6.12+)".into(),
                    marker_string(t),
                ))
            }
        };
        match (body, b) {
            (Some(x), Some(y)) if x != y => {
                return Err((
                    "the same marker style (6.1 or 6.12+) for anon and file".into(),
                    format!(
                        "{} and {}",
                        marker_string(triple(&fields[..3])),
                        marker_string(triple(&fields[3..]))
                    ),
                ))
            }
            (None, Some(_)) => body = b,
            _ => {}
        }
    }
    Ok(body)
}

/// Checks an mm-stats line's markers: all from one of the profile's three sets.
fn check_mm(fields: &[Field]) -> Result<Body, LineErr> {
    let (body, sets): (Body, [&str; 3]) = match fields.len() {
        6 => (Body::Old, ["LOYNFA", "loynfa", "      "]),
        _ => (Body::New, ["TYFA", "tyfa", "xxxx"]),
    };
    let got: Vec<u8> = fields.iter().map(|f| f.1.unwrap_or(b' ')).collect();
    if sets.iter().any(|s| s.as_bytes() == got.as_slice()) {
        Ok(body)
    } else {
        Err((
            format!("mm-stats markers `{}`, `{}` or `{}`", sets[0], sets[1], sets[2]),
            marker_string(fields.iter().map(|f| f.1)),
        ))
    }
}

/// What the lines say about the format, or the first line that contradicts earlier ones.
fn detect_raw(lines: &[(usize, &str, Raw<'_>)]) -> Result<Option<Format>, ParseError> {
    let mut body: Option<(Body, usize)> = None;
    let mut header: Option<(Header, usize)> = None;
    for (ln, text, raw) in lines {
        let b = match raw {
            Raw::Tier { fields, .. } => tier_body(fields).ok().flatten(),
            Raw::Mm(fields) => check_mm(fields).ok(),
            Raw::Memcg {
                header: h @ (Header::Padded | Header::Unpadded),
                ..
            } => {
                match header {
                    Some((prev, at)) if prev != *h => {
                        return Err(perr(
                            *ln,
                            format!(
                                "a `memcg` header laid out like the one on line {at} ({})",
                                if prev == Header::Padded {
                                    "`%5hu`, 6.x"
                                } else {
                                    "`%llu`, 7.x"
                                }
                            ),
                            quote(text),
                        ))
                    }
                    None => header = Some((*h, *ln)),
                    _ => {}
                }
                None
            }
            _ => None,
        };
        if let Some(b) = b {
            match body {
                Some((prev, at)) if prev != b => {
                    return Err(perr(
                        *ln,
                        format!(
                            "the markers of the {} format, as on line {at}",
                            if prev == Body::Old { "6.1" } else { "6.12+" }
                        ),
                        quote(text),
                    ))
                }
                None => body = Some((b, *ln)),
                _ => {}
            }
        }
    }
    Ok(match (body, header) {
        (Some((Body::Old, bl)), Some((Header::Unpadded, hl))) => {
            let (ln, text) = lines
                .iter()
                .find(|(l, ..)| *l == bl.max(hl))
                .map(|(l, t, _)| (*l, *t))
                .unwrap_or((bl.max(hl), ""));
            return Err(perr(
                ln,
                "a 6.1 body under a `memcg %5hu` header, or a 6.12+ body under `memcg %llu`",
                quote(text),
            ));
        }
        (Some((Body::Old, _)), _) => Some(Format::V6_1),
        (Some((Body::New, _)), Some((Header::Unpadded, _))) => Some(Format::V7),
        (Some((Body::New, _)), _) => Some(Format::V6_12),
        (None, Some((Header::Unpadded, _))) => Some(Format::V7),
        // the plain `lru_gen` of 6.1 and 6.12 are the same text: report the older
        (None, Some((Header::Padded, _))) => Some(Format::V6_1),
        (None, _) => None,
    })
}

fn classify_all(text: &str) -> Vec<(usize, &str, Result<Raw<'_>, LineErr>)> {
    text.lines().enumerate().map(|(i, l)| (i + 1, l, classify(l))).collect()
}

/// Tells the format of a `lru_gen`/`lru_gen_full` text (or fragment) from its markers and
/// headers: blank tier markers or six mm stats → [`Format::V6_1`]; `RTx`/`xxx` markers or four
/// mm stats → [`Format::V6_12`], or [`Format::V7`] under an unpadded `memcg` header. Without
/// tier or mm lines (the plain `lru_gen`, identical in 6.1 and 6.12) a padded header gives
/// [`Format::V6_1`] and an unpadded one [`Format::V7`]. `None` when nothing tells (no headers
/// and no full-file lines) or when lines contradict each other. Lines that are not part of the
/// format are ignored here (see [`parse`] for a strict reading).
pub fn detect_format(text: &str) -> Option<Format> {
    let lines: Vec<(usize, &str, Raw<'_>)> = classify_all(text)
        .into_iter()
        .filter_map(|(n, l, r)| r.ok().map(|r| (n, l, r)))
        .collect();
    detect_raw(&lines).ok().flatten()
}

/// Parses what a kernel printed in `lru_gen` or `lru_gen_full` (any of the [`Format`]s, told
/// from the text), strictly: every line must be a `memcg` header, a ` node` line (one must follow
/// each header), a generation line (consecutive sequence numbers within a node), a tier line
/// (tiers 0, 1, … in order under a generation) or an mm-stats line (after the tier lines), with
/// the markers of one format throughout. Blank lines are skipped. Counts are not enforced: a
/// fragment with fewer tier lines, or without an mm-stats line, is accepted. Never panics.
pub fn parse(text: &str) -> Result<Vec<ParsedLruvec>, ParseError> {
    let mut lines = Vec::new();
    for (ln, l, r) in classify_all(text) {
        match r {
            Ok(raw) => lines.push((ln, l, raw)),
            Err((expected, found)) => return Err(perr(ln, expected, found)),
        }
    }
    let format = detect_raw(&lines)?;
    let end_line = text.lines().count() + 1;

    let mut out = Vec::new();
    let mut memcg: Option<(u64, String)> = None;
    let mut pending_header: Option<usize> = None;
    let mut cur: Option<ParsedLruvec> = None;
    // the line of the current ` node`: the kernel prints at least MIN_NR_GENS generations under
    // each, so a node line followed by no generation line is no kernel's output
    let mut node_line = 0usize;
    let no_gens = |cur: &Option<ParsedLruvec>, node_line: usize, ln: usize, found: String| {
        cur.as_ref().filter(|lv| lv.gens.is_empty()).map(|_| {
            perr(
                ln,
                format!("a generation line after the ` node` line of line {node_line}"),
                found,
            )
        })
    };

    for (ln, text, raw) in lines {
        let need_node = |what: &str| {
            perr(
                ln,
                format!(
                    "a ` node` line after the `memcg` header of line {}",
                    pending_header.unwrap_or(0)
                ),
                what.to_string(),
            )
        };
        match raw {
            Raw::Blank => {}
            Raw::Memcg { id, path, header } => {
                if pending_header.is_some() {
                    return Err(need_node(&quote(text)));
                }
                let ok = match format {
                    Some(Format::V6_1 | Format::V6_12) => header != Header::Unpadded,
                    Some(Format::V7) => header != Header::Padded,
                    None => true,
                };
                if !ok {
                    return Err(perr(
                        ln,
                        "a `memcg` header of the same layout as the others",
                        quote(text),
                    ));
                }
                if let Some(e) = no_gens(&cur, node_line, ln, quote(text)) {
                    return Err(e);
                }
                out.extend(cur.take());
                memcg = Some((id, path.to_string()));
                pending_header = Some(ln);
            }
            Raw::Node(node) => {
                let Some((id, path)) = &memcg else {
                    return Err(perr(ln, "a `memcg` header before the first ` node` line", quote(text)));
                };
                if let Some(e) = no_gens(&cur, node_line, ln, quote(text)) {
                    return Err(e);
                }
                node_line = ln;
                out.extend(cur.take());
                cur = Some(ParsedLruvec {
                    memcg_id: *id,
                    path: path.clone(),
                    node,
                    gens: Vec::new(),
                });
                pending_header = None;
            }
            Raw::Gen { seq, age, pages } => {
                if pending_header.is_some() {
                    return Err(need_node(&quote(text)));
                }
                let Some(lv) = cur.as_mut() else {
                    return Err(perr(ln, "a `memcg` header and a ` node` line first", quote(text)));
                };
                if let Some(prev) = lv.gens.last() {
                    if prev.seq.checked_add(1) != Some(seq) {
                        return Err(perr(
                            ln,
                            format!("generation {} after generation {}", prev.seq.wrapping_add(1), prev.seq),
                            quote(text),
                        ));
                    }
                }
                lv.gens.push(ParsedGen {
                    seq,
                    age_ms: age,
                    pages: [pages[0].0, pages[1].0],
                    live: [pages[0].1.is_none(), pages[1].1.is_none()],
                    tiers: None,
                    mm_stats: None,
                });
            }
            Raw::Tier { tier, fields } => {
                let Some(g) = cur.as_mut().and_then(|lv| lv.gens.last_mut()) else {
                    return Err(perr(ln, "a generation line before the tier lines", quote(text)));
                };
                if g.mm_stats.is_some() {
                    return Err(perr(ln, "a generation line after the mm-stats line", quote(text)));
                }
                let tiers = g.tiers.get_or_insert_with(Vec::new);
                if tiers.len() >= MAX_NR_TIERS || tier != tiers.len() as u64 {
                    let want = if tiers.len() >= MAX_NR_TIERS {
                        format!("at most {MAX_NR_TIERS} tier lines")
                    } else {
                        format!("tier {}", tiers.len())
                    };
                    return Err(perr(ln, want, quote(text)));
                }
                let body = tier_body(&fields).map_err(|(e, f)| perr(ln, e, f))?;
                let clash = matches!(
                    (format, body),
                    (Some(Format::V6_1), Some(Body::New)) | (Some(Format::V6_12 | Format::V7), Some(Body::Old))
                );
                if clash {
                    return Err(perr(ln, "tier markers of the same format as the rest", quote(text)));
                }
                let mut row = [[(0, ' '); 3]; 2];
                for (i, f) in fields.iter().enumerate() {
                    row[i / 3][i % 3] = (f.0, marker_char(f.1));
                }
                tiers.push(row);
            }
            Raw::Mm(fields) => {
                let Some(g) = cur.as_mut().and_then(|lv| lv.gens.last_mut()) else {
                    return Err(perr(ln, "a generation line before the mm-stats line", quote(text)));
                };
                if g.tiers.is_none() {
                    return Err(perr(ln, "tier lines before the mm-stats line", quote(text)));
                }
                if g.mm_stats.is_some() {
                    return Err(perr(ln, "one mm-stats line per generation", quote(text)));
                }
                let body = check_mm(&fields).map_err(|(e, f)| perr(ln, e, f))?;
                let want = match format {
                    Some(Format::V6_1) => Some(Body::Old),
                    Some(Format::V6_12 | Format::V7) => Some(Body::New),
                    None => None,
                };
                if want.is_some_and(|w| w != body) {
                    return Err(perr(
                        ln,
                        if want == Some(Body::Old) {
                            "six mm stats (6.1)"
                        } else {
                            "four mm stats (6.12+)"
                        },
                        quote(text),
                    ));
                }
                g.mm_stats = Some(fields.iter().map(|f| (f.0, marker_char(f.1))).collect());
            }
        }
    }
    if let Some(h) = pending_header {
        return Err(perr(
            end_line,
            format!("a ` node` line after the `memcg` header of line {h}"),
            "end of text",
        ));
    }
    if let Some(e) = no_gens(&cur, node_line, end_line, "end of text".to_string()) {
        return Err(e);
    }
    out.extend(cur);
    Ok(out)
}

// ---------------------------------------------------------------------------------------------
// Writing: commands
// ---------------------------------------------------------------------------------------------

/// One command written to `lru_gen`.
///
/// Numbers are what the kernel's `sscanf` stores: decimal digits only, wrapping modulo 2^64 and
/// then truncated to the field's C type (`%u` → 32 bits for the memcg and node ids, `%lu` → 64
/// bits for the generation and `opt`; 7.x, which is not a profile here, reads the memcg id as a
/// 64-bit cgroup id with `%llu`). The executor must still check them against the live
/// state (`run_cmd`): the node must exist (`-EINVAL`), the memcg id must name a live memcg whose
/// id it is (`-EINVAL`; 6.x memcg ids are 16-bit, so any larger value fails), and the generation
/// rules of [`check_age`] and [`check_evict`] apply.
///
/// `swappiness` is `None` when the kernel would use `get_swappiness(lruvec)`. For `+` in the 6.1
/// profile the field is the admin guide's `can_swap`, but 6.1 parses and range-checks it exactly
/// as a swappiness (0..=200) and only then converts the resolved value to a bool; so it is kept
/// here as that swappiness (`Some(0)`: no swap, `Some(v > 0)`: swap, `None`: whether
/// `get_swappiness` is non-zero) and [`check_age`] does the conversion.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Command {
    /// `+ memcg_id node_id max_gen [swappiness [force_scan]]`: create a generation.
    Age {
        /// memcg id.
        memcg_id: u64,
        /// Node id.
        node: usize,
        /// `max_gen_nr`: must be the current `max_seq` (6.1 ignores smaller values; see [`check_age`]).
        max_gen: u64,
        /// Swappiness (6.1: `can_swap` as a swappiness), or `None` for the lruvec's default.
        swappiness: Option<u32>,
        /// `force_scan`: `opt != 0`; true when `opt` is absent.
        force_scan: bool,
    },
    /// `- memcg_id node_id min_gen [swappiness [nr_to_reclaim]]`: evict generations ≤ `min_gen`.
    Evict {
        /// memcg id.
        memcg_id: u64,
        /// Node id.
        node: usize,
        /// `min_gen_nr`: evict up to this generation (at most `max_seq − 2`).
        min_gen: u64,
        /// Swappiness (mainline: 201 for `max`, anon only), or `None` for the lruvec's default.
        swappiness: Option<u32>,
        /// Page budget; `u64::MAX` (`ULONG_MAX`) when absent.
        nr_to_reclaim: u64,
    },
}

impl Command {
    /// The memcg id.
    pub fn memcg_id(&self) -> u64 {
        match *self {
            Command::Age { memcg_id, .. } | Command::Evict { memcg_id, .. } => memcg_id,
        }
    }
    /// The node id.
    pub fn node(&self) -> usize {
        match *self {
            Command::Age { node, .. } | Command::Evict { node, .. } => node,
        }
    }
    /// The swappiness given, if any.
    pub fn swappiness(&self) -> Option<u32> {
        match *self {
            Command::Age { swappiness, .. } | Command::Evict { swappiness, .. } => swappiness,
        }
    }
}

/// The command as it could be written (`+ 2 0 7`, `- 2 0 5 200 1024`): absent fields stay absent,
/// and the text parses back to the same command under the profile it was parsed with.
impl fmt::Display for Command {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (c, gen, opt) = match *self {
            Command::Age {
                max_gen, force_scan, ..
            } => ('+', max_gen, (!force_scan).then_some(0)),
            Command::Evict {
                min_gen, nr_to_reclaim, ..
            } => ('-', min_gen, (nr_to_reclaim != u64::MAX).then_some(nr_to_reclaim)),
        };
        write!(f, "{c} {} {} {gen}", self.memcg_id(), self.node())?;
        match (self.swappiness(), opt) {
            (None, None) => Ok(()),
            (Some(s), None) => write!(f, " {s}"),
            (Some(s), Some(o)) => write!(f, " {s} {o}"),
            // only 6.1 gives `opt` without a swappiness: `(unsigned int)-1`, negative as an `int`
            // (`-1` itself is not a `%u`, and mainline has no way to write this command)
            (None, Some(o)) => write!(f, " {} {o}", u32::MAX),
        }
    }
}

/// The errors `lru_gen_seq_write` and `run_cmd` return (as `-errno`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Errno {
    /// Invalid argument: syntax, ranges, unknown memcg or node, generation out of range.
    EINVAL,
    /// Result out of range: 6.1 `+` without `force_scan` when four generations already exist.
    ERANGE,
    /// File exists: mainline `+` when no generation was created.
    EEXIST,
    /// Interrupted: `-` stopped by a signal.
    EINTR,
    /// Out of memory: no buffer or walk state.
    ENOMEM,
    /// Device or resource busy: `rmdir` of a cgroup with tasks or online children.
    EBUSY,
    /// No such file or directory: a cgroup that was removed, or never made.
    ENOENT,
    /// No such process: `cgroup.procs` naming no live task.
    ESRCH,
    /// No such device: a write to a file of a removed cgroup (`kernfs`).
    ENODEV,
}

impl Errno {
    /// The positive errno value (Linux x86-64).
    pub fn code(self) -> i32 {
        match self {
            Errno::EINVAL => 22,
            Errno::ERANGE => 34,
            Errno::EEXIST => 17,
            Errno::EINTR => 4,
            Errno::ENOMEM => 12,
            Errno::EBUSY => 16,
            Errno::ENOENT => 2,
            Errno::ESRCH => 3,
            Errno::ENODEV => 19,
        }
    }
    /// The symbolic name.
    pub fn name(self) -> &'static str {
        match self {
            Errno::EINVAL => "EINVAL",
            Errno::ERANGE => "ERANGE",
            Errno::EEXIST => "EEXIST",
            Errno::EINTR => "EINTR",
            Errno::EBUSY => "EBUSY",
            Errno::ENOENT => "ENOENT",
            Errno::ESRCH => "ESRCH",
            Errno::ENODEV => "ENODEV",
            Errno::ENOMEM => "ENOMEM",
        }
    }
    /// `strerror` text.
    pub fn description(self) -> &'static str {
        match self {
            Errno::EINVAL => "Invalid argument",
            Errno::ERANGE => "Numerical result out of range",
            Errno::EEXIST => "File exists",
            Errno::EINTR => "Interrupted system call",
            Errno::ENOMEM => "Cannot allocate memory",
            Errno::EBUSY => "Device or resource busy",
            Errno::ENOENT => "No such file or directory",
            Errno::ESRCH => "No such process",
            Errno::ENODEV => "No such device",
        }
    }
}

impl fmt::Display for Errno {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.name(), self.description())
    }
}

/// A command the kernel would refuse.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CommandError {
    /// 0-based position of the command among the non-empty commands of the input; also the
    /// number of commands the kernel has already executed when it stops here.
    pub index: usize,
    /// The command as the kernel scanned it (leading spaces skipped; empty when there was none).
    pub command: String,
    /// What the write returns.
    pub errno: Errno,
    /// What was expected and what was found.
    pub reason: String,
}

impl fmt::Display for CommandError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "lru_gen command {} `{}`: {}: {}",
            self.index,
            self.command.trim_end().escape_debug(),
            self.errno,
            self.reason
        )
    }
}

impl std::error::Error for CommandError {}

const GRAMMAR_CMD: &str = "`<+|-> <memcg_id> <node_id> <seq> [<swappiness> [<opt>]]`";

/// `isspace()` of the kernel's `_ctype` table: ASCII white space and Latin-1 NBSP (0xA0).
fn is_kspace(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r' | 0xa0)
}

/// Splits like `strsep(&next, ",;\n")` over the text up to its first NUL (the kernel copies the
/// write into a C string).
fn segments(input: &str) -> impl Iterator<Item = &[u8]> {
    let b = input.as_bytes();
    let b = &b[..b.iter().position(|&c| c == 0).unwrap_or(b.len())];
    b.split(|&c| matches!(c, b',' | b';' | b'\n'))
}

/// Iterator over the commands of one write, in order, as [`commands`] returns it. It yields the
/// commands until the first error, then that error, then stops: the kernel executes each command
/// before it scans the next one, so an executor applies the `Ok` items as they come and returns
/// the first `Err` (earlier commands stay applied). A write with no command at all yields one
/// `EINVAL` (the kernel's initial error value is returned unchanged).
pub struct Commands<'a> {
    segs: Box<dyn Iterator<Item = &'a [u8]> + 'a>,
    profile: Profile,
    index: usize,
    done: bool,
}

/// The commands of one write to `lru_gen` under `profile`; see [`Commands`].
pub fn commands(input: &str, profile: Profile) -> Commands<'_> {
    Commands {
        segs: Box::new(segments(input)),
        profile,
        index: 0,
        done: false,
    }
}

impl Iterator for Commands<'_> {
    type Item = Result<Command, CommandError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        for seg in self.segs.by_ref() {
            let start = seg.iter().position(|&c| !is_kspace(c)).unwrap_or(seg.len());
            let cur = &seg[start..];
            if cur.is_empty() {
                continue;
            }
            let index = self.index;
            self.index += 1;
            return Some(match scan_command(cur, self.profile) {
                Ok(c) => Ok(c),
                Err((errno, reason)) => {
                    self.done = true;
                    Err(CommandError {
                        index,
                        command: String::from_utf8_lossy(cur).into_owned(),
                        errno,
                        reason,
                    })
                }
            });
        }
        self.done = true;
        (self.index == 0).then(|| {
            Err(CommandError {
                index: 0,
                command: String::new(),
                errno: Errno::EINVAL,
                reason: format!("expected at least one command {GRAMMAR_CMD}, found none"),
            })
        })
    }
}

/// Parses a whole write to `lru_gen` (`lru_gen_seq_write` under `profile`): all commands, or the
/// first error. Commands are split on `,`, `;` and newlines; leading white space is skipped and
/// empty commands are ignored; each is `cmd memcg_id node_id seq [swappiness [opt]]` with nothing
/// after. Profile rules (§17.1 row 27): 6.1 takes swappiness as `%u` in 0..=200 (a value that is
/// negative as a C `int`, i.e. ≥ 2^31, means the default, as an absent one does); mainline takes
/// a token of at most 4 characters that is `max` (201) or an unsigned integer in C notation
/// (`kstrtouint` base 0: decimal, `0x` hex, `0` octal) in 0..=201. The kernel executes commands
/// before a failing one: use [`commands`] to apply them in order.
pub fn parse_commands(input: &str, profile: Profile) -> Result<Vec<Command>, CommandError> {
    commands(input, profile).collect()
}

/// A cursor with the kernel `vsscanf` conversions the write format uses.
struct Scan<'a> {
    s: &'a [u8],
    pos: usize,
}

impl<'a> Scan<'a> {
    /// White space in the format: skip any amount of white space.
    fn skip(&mut self) {
        while self.pos < self.s.len() && is_kspace(self.s[self.pos]) {
            self.pos += 1;
        }
    }

    /// `%u`/`%lu` (base 10): decimal digits, wrapping modulo 2^64; `None` (the conversion fails
    /// and scanning stops) at the end or before a non-digit.
    fn uint(&mut self) -> Option<u64> {
        self.skip();
        let start = self.pos;
        let mut v = 0u64;
        while let Some(&c) = self.s.get(self.pos).filter(|c| c.is_ascii_digit()) {
            v = v.wrapping_mul(10).wrapping_add(u64::from(c - b'0'));
            self.pos += 1;
        }
        (self.pos > start).then_some(v)
    }

    /// `%4s`: up to four non-space characters; `None` at the end.
    fn word4(&mut self) -> Option<&'a [u8]> {
        self.skip();
        let start = self.pos;
        while self.pos < self.s.len() && self.pos - start < 4 && !is_kspace(self.s[self.pos]) {
            self.pos += 1;
        }
        let s: &'a [u8] = self.s;
        (self.pos > start).then(|| &s[start..self.pos])
    }

    fn rest(&self) -> String {
        String::from_utf8_lossy(&self.s[self.pos.min(self.s.len())..]).into_owned()
    }
}

/// The swappiness field as scanned.
enum SwapTok<'a> {
    /// 6.1 `%u`.
    Num(u64),
    /// Mainline `%4s`.
    Word(&'a [u8]),
}

/// `kstrtouint(s, 0, &v)`: an optional `+`, then decimal, `0x`/`0X` hex (a hex digit must follow
/// the prefix) or `0` octal digits, then at most one newline and nothing else. `EINVAL` for no
/// digits or anything after them, `ERANGE` when the value does not fit in 32 bits.
pub fn kstrtouint(s: &[u8]) -> Result<u32, Errno> {
    let s = s.strip_prefix(b"+").unwrap_or(s);
    let (base, mut i): (u64, usize) = if s.first() == Some(&b'0') {
        let hex = s.get(1).is_some_and(|&c| c | 0x20 == b'x') && s.get(2).is_some_and(u8::is_ascii_hexdigit);
        if hex {
            (16, 2)
        } else {
            (8, 0)
        }
    } else {
        (10, 0)
    };
    let (start, mut v, mut overflow) = (i, 0u64, false);
    while let Some(&c) = s.get(i) {
        let d = match c {
            b'0'..=b'9' => u64::from(c - b'0'),
            _ if (b'a'..=b'f').contains(&(c | 0x20)) => u64::from((c | 0x20) - b'a' + 10),
            _ => break,
        };
        if d >= base {
            break;
        }
        if v > (u64::MAX - d) / base {
            overflow = true;
        }
        v = v.wrapping_mul(base).wrapping_add(d);
        i += 1;
    }
    if overflow {
        return Err(Errno::ERANGE);
    }
    if i == start {
        return Err(Errno::EINVAL);
    }
    if s.get(i) == Some(&b'\n') {
        i += 1;
    }
    if i != s.len() {
        return Err(Errno::EINVAL);
    }
    u32::try_from(v).map_err(|_| Errno::ERANGE)
}

/// Scans one command (`cur`: non-empty, leading spaces skipped) with the format
/// `"%c %u %u %lu %n %u %n %lu %n"` (6.1) or `"%c %u %u %lu %n %4s %n %lu %n"` (mainline), then
/// applies the checks of `lru_gen_seq_write` and the state-free ones of `run_cmd`.
fn scan_command(cur: &[u8], profile: Profile) -> Result<Command, (Errno, String)> {
    let einval = |reason: String| Err((Errno::EINVAL, reason));
    let cmd = cur[0];
    if cmd != b'+' && cmd != b'-' {
        // checked first (the kernel's errno is the same either way), so that the message quotes
        // the command as written rather than what follows its first character
        let text = String::from_utf8_lossy(cur);
        return einval(format!(
            "expected command `+` (aging) or `-` (eviction), found `{}` in {}",
            text.chars().next().unwrap_or('?').escape_debug(),
            quote(&text)
        ));
    }
    let mut sc = Scan { s: cur, pos: 1 };
    let names = ["memcg id", "node id", "generation number"];
    let mut nums = [0u64; 3];
    for (i, name) in names.iter().enumerate() {
        match sc.uint() {
            Some(v) => nums[i] = v,
            None => {
                let rest = sc.rest();
                let found = if rest.trim().is_empty() {
                    "nothing".to_string()
                } else {
                    quote(&rest)
                };
                return einval(format!(
                    "expected {GRAMMAR_CMD}: a {name} (unsigned decimal) after {} field(s), found {found}",
                    i + 1
                ));
            }
        }
    }
    sc.skip();
    let mut end = sc.pos;
    let tok = if profile.switches.swappiness_max {
        sc.word4().map(SwapTok::Word)
    } else {
        sc.uint().map(SwapTok::Num)
    };
    let mut opt = None;
    if tok.is_some() {
        sc.skip();
        end = sc.pos;
        opt = sc.uint();
        if opt.is_some() {
            sc.skip();
            end = sc.pos;
        }
    }
    if end < cur.len() {
        let extra = String::from_utf8_lossy(&cur[end..]).into_owned();
        return einval(format!(
            "expected {GRAMMAR_CMD} and nothing after it, found {}",
            quote(&extra)
        ));
    }

    let swappiness = match tok {
        None => None,
        Some(SwapTok::Num(v)) => {
            // `unsigned int` passed as `int`: negative means "use the default"
            let v = v as u32;
            if (v as i32) < 0 {
                None
            } else if v > 200 {
                return einval(format!("expected swappiness 0..=200, found {v}"));
            } else {
                Some(v)
            }
        }
        Some(SwapTok::Word(w)) => {
            let v = if w == b"max" {
                SWAPPINESS_ANON_ONLY
            } else {
                kstrtouint(w).map_err(|e| {
                    (
                        e,
                        format!(
                            "expected swappiness `max` or an unsigned integer (decimal, 0x hex or \
                             0 octal; at most 4 characters), found `{}`",
                            String::from_utf8_lossy(w)
                        ),
                    )
                })?
            };
            if v > SWAPPINESS_ANON_ONLY {
                return einval(format!("expected swappiness 0..=201 or `max`, found {v}"));
            }
            Some(v)
        }
    };
    let [memcg, nid, seq] = nums;
    // `%d` of an `int` before 7.x (the low 32 bits), `%llu` after (`lru_gen_memcg_id_u64`)
    let memcg_id = if profile.switches.lru_gen_memcg_id_u64 {
        memcg
    } else {
        u64::from(memcg as u32)
    };
    let node = nid as u32 as usize;
    match cmd {
        b'+' => Ok(Command::Age {
            memcg_id,
            node,
            max_gen: seq,
            swappiness,
            force_scan: opt.is_none_or(|o| o != 0),
        }),
        // `-`: anything else was refused above
        _ => Ok(Command::Evict {
            memcg_id,
            node,
            min_gen: seq,
            swappiness,
            nr_to_reclaim: opt.unwrap_or(u64::MAX),
        }),
    }
}

/// What `run_aging` does with a valid `+` command.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AgeCheck {
    /// 6.1: `max_gen < max_seq`, nothing to do, success.
    NoOp,
    /// Call `try_to_inc_max_seq(lruvec, max_seq, …)` (mainline: `-EEXIST` if it returns false).
    Run,
}

/// The generation checks of `run_aging` for `+ … max_gen` with the resolved swappiness (the
/// command's, or `get_swappiness` when it had none): `max_gen > max_seq` → `EINVAL`. 6.1 also
/// succeeds without doing anything when `max_gen < max_seq`, and returns `ERANGE` when
/// `!force_scan` and the type it may age (`can_swap = swappiness != 0`: anon, else file) already
/// has four generations.
pub fn check_age(
    profile: Profile,
    lg: &LruGen,
    max_gen: u64,
    swappiness: u32,
    force_scan: bool,
) -> Result<AgeCheck, Errno> {
    match profile.switches.aging_feedback_rework {
        false => {
            if max_gen < lg.max_seq {
                return Ok(AgeCheck::NoOp);
            }
            if max_gen > lg.max_seq {
                return Err(Errno::EINVAL);
            }
            let can_swap = swappiness != 0;
            let ty = if can_swap { ANON } else { FILE };
            if !force_scan && lg.min_seq[ty].wrapping_add(MAX_NR_GENS as u64 - 1) <= lg.max_seq {
                return Err(Errno::ERANGE);
            }
            Ok(AgeCheck::Run)
        }
        true => {
            if max_gen > lg.max_seq {
                Err(Errno::EINVAL)
            } else {
                Ok(AgeCheck::Run)
            }
        }
    }
}

/// The generation check of `run_eviction` for `- … min_gen`: the two youngest generations are
/// never evicted, so `min_gen + 2 > max_seq` → `EINVAL` (computed in wrapping `unsigned long`,
/// as the kernel does).
pub fn check_evict(lg: &LruGen, min_gen: u64) -> Result<(), Errno> {
    if min_gen.wrapping_add(MIN_NR_GENS) > lg.max_seq {
        Err(Errno::EINVAL)
    } else {
        Ok(())
    }
}

/// The loop condition of `run_eviction`: done once `min_gen` is older than what may be evicted —
/// 6.1: `min_seq[anon]` (`min_seq[file]` at swappiness 0); mainline: `evictable_min_seq`.
pub fn eviction_done(profile: Profile, lg: &LruGen, min_gen: u64, swappiness: u32) -> bool {
    let oldest = if profile.switches.aging_feedback_rework {
        super::evictable_min_seq(&profile.switches, lg, swappiness)
    } else {
        lg.min_seq[if swappiness != 0 { ANON } else { FILE }]
    };
    min_gen < oldest
}
