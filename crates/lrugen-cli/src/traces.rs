// SPDX-License-Identifier: GPL-2.0-only
//! `lrugen traces`: the public traces the tests, examples and benchmarks use (`list`, `fetch`
//! with a SHA-256 check and an atomic write), and the small synthetic trace shipped in
//! `examples/traces/` (`generate`, the command that wrote it).

use crate::checks::count;
use crate::out::outln;
use clap::{Args, Subcommand};
use lrugen::workload::dist::{mix64, Dist, Sampler};
use sha2::{Digest, Sha256};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Options of `lrugen traces`.
#[derive(Args)]
pub struct TracesArgs {
    #[command(subcommand)]
    cmd: TracesCmd,
}

#[derive(Subcommand)]
enum TracesCmd {
    /// List the public traces `fetch` gets: name, size, source and the work to cite.
    List,
    /// Download public traces from their sources, check their SHA-256 and write each atomically
    /// (a temporary file renamed into place) as DIR/arc/OLTP.lis.zst and so on; a trace already
    /// there with the right checksum is kept.
    Fetch {
        /// Traces to fetch (`lrugen traces list`), or `all`.
        #[arg(value_name = "NAME", required = true)]
        names: Vec<String>,
        /// Where to put them (default: $LRUGEN_TRACES_DIR, else ./traces). The tests look in
        /// $LRUGEN_TRACES_DIR, ../shared/traces and ./traces of the repository.
        #[arg(long, value_name = "DIR")]
        dir: Option<PathBuf>,
    },
    /// Write a synthetic ARC-format trace (zstd-compressed): REQUESTS lines `start n 0 i` whose
    /// starts follow DIST over KEYS extents of 8 blocks, n consecutive blocks each (1 for most,
    /// up to 8). With the defaults it writes examples/traces/synthetic.lis.zst byte for byte.
    Generate {
        /// Output file (refused if it exists).
        #[arg(value_name = "FILE")]
        file: PathBuf,
        /// Requests (lines).
        #[arg(long, value_name = "N", default_value_t = 25_000, value_parser = count, allow_negative_numbers = true)]
        requests: u64,
        /// Distinct extents the requests start in.
        #[arg(long, value_name = "N", default_value_t = 10_000, value_parser = count, allow_negative_numbers = true)]
        keys: u64,
        /// Distribution of the extents: uniform or zipf:THETA.
        #[arg(long, default_value = "zipf:0.9")]
        dist: String,
        /// Seed.
        #[arg(long, value_name = "N", default_value_t = 1, value_parser = count, allow_negative_numbers = true)]
        seed: u64,
    },
}

/// A public trace: where it comes from and what it must hash to.
pub struct Trace {
    /// Name on the command line.
    pub name: &'static str,
    /// Path under the traces folder (the layout of the project's shared traces).
    pub file: &'static str,
    /// GitHub repository, commit and path of the file.
    pub repo: &'static str,
    pub commit: &'static str,
    pub path: &'static str,
    /// Size in bytes.
    pub size: u64,
    /// SHA-256 of the file, hex.
    pub sha256: &'static str,
    /// What it is.
    pub what: &'static str,
    /// The condition of use: the work to cite.
    pub cite: &'static str,
}

const ARC_REPO: &str = "moka-rs/cache-trace";
const ARC_COMMIT: &str = "ef0a9de8cf0202a1f2fee186a0af497774b0f0a9";
const ARC_CITE: &str = "N. Megiddo and D. S. Modha, \"ARC: A Self-Tuning, Low Overhead Replacement Cache\", \
                        USENIX FAST 2003";
const CP_REPO: &str = "1a1a11a/libCacheSim";
const CP_COMMIT: &str = "aa0fc40914b2b786f4b9f4dafb099f8f332b216a";
const CP_CITE: &str = "C. Waldspurger et al., \"Efficient MRC Construction with SHARDS\", USENIX FAST 2015";

/// The traces of the project's shared traces folder, from their public sources.
pub const TRACES: [Trace; 5] = [
    Trace {
        name: "OLTP",
        file: "arc/OLTP.lis.zst",
        repo: ARC_REPO,
        commit: ARC_COMMIT,
        path: "arc/OLTP.lis.zst",
        size: 2_375_325,
        sha256: "2a81096104b6de28aae54558b764bb32fe2ac3beb8a7dcdee1259af8798d3531",
        what: "ARC paper, a database's disk accesses: 914,145 requests, 186,880 pages",
        cite: ARC_CITE,
    },
    Trace {
        name: "P3",
        file: "arc/P3.lis.zst",
        repo: ARC_REPO,
        commit: ARC_COMMIT,
        path: "arc/P3.lis.zst",
        size: 1_455_039,
        sha256: "4110048c690756400675b14f200989fae351b62147705dac9637bbcff6d29751",
        what: "ARC paper, an NT workstation: 3,912,296 requests, 762,543 pages",
        cite: ARC_CITE,
    },
    Trace {
        name: "P12",
        file: "arc/P12.lis.zst",
        repo: ARC_REPO,
        commit: ARC_COMMIT,
        path: "arc/P12.lis.zst",
        size: 3_277_887,
        sha256: "4de315e55e14518618427828312fb07ae275abf301ab8d15c41e3ea1cf6aaad0",
        what: "ARC paper, an NT workstation: 13,208,930 requests, 3,153,310 pages",
        cite: ARC_CITE,
    },
    Trace {
        name: "cloudphysics",
        file: "cloudphysics/cloudPhysicsIO.oracleGeneral.bin",
        repo: CP_REPO,
        commit: CP_COMMIT,
        path: "data/cloudPhysicsIO.oracleGeneral.bin",
        size: 2_732_928,
        sha256: "65438dd7b2d3dec7ffe8a5c9348045da92de3311f339b7b59c9a0a44e6050dea",
        what: "CloudPhysics block I/O sample, libCacheSim oracleGeneral: 113,872 requests",
        cite: CP_CITE,
    },
    Trace {
        name: "cloudphysics-csv",
        file: "cloudphysics/cloudPhysicsIO.csv",
        repo: CP_REPO,
        commit: CP_COMMIT,
        path: "data/cloudPhysicsIO.csv",
        size: 3_116_791,
        sha256: "987ff2213050e47d24e8ba6e010d4b3127e51aafef6a76a8a6d43d13b9156fa1",
        what: "the same CloudPhysics sample as csv (version,time,op,size,lbn)",
        cite: CP_CITE,
    },
];

impl Trace {
    /// Where the file is downloaded from. `LRUGEN_TRACES_BASE_URL` replaces the host part
    /// (`https://raw.githubusercontent.com`), for a mirror or a test server.
    pub fn url(&self) -> String {
        let base =
            std::env::var("LRUGEN_TRACES_BASE_URL").unwrap_or_else(|_| "https://raw.githubusercontent.com".into());
        format!(
            "{}/{}/{}/{}",
            base.trim_end_matches('/'),
            self.repo,
            self.commit,
            self.path
        )
    }

    /// The public source, as a person reads it.
    pub fn source(&self) -> String {
        format!(
            "{} in the public GitHub repository {} (commit {})",
            self.path,
            self.repo,
            &self.commit[..12]
        )
    }
}

/// The trace named `name` (ASCII case-insensitive), or an error listing the names.
fn find(name: &str) -> Result<&'static Trace, String> {
    TRACES
        .iter()
        .find(|t| t.name.eq_ignore_ascii_case(name))
        .ok_or_else(|| {
            format!(
                "unknown trace '{name}': expected one of {} or all (see `lrugen traces list`)",
                TRACES.iter().map(|t| t.name).collect::<Vec<_>>().join(", ")
            )
        })
}

/// Run `lrugen traces`.
pub fn cmd_traces(a: TracesArgs) -> Result<(), String> {
    match a.cmd {
        TracesCmd::List => {
            list();
            Ok(())
        }
        TracesCmd::Fetch { names, dir } => {
            let dir = dir
                .or_else(|| std::env::var_os("LRUGEN_TRACES_DIR").map(PathBuf::from))
                .unwrap_or_else(|| PathBuf::from("traces"));
            let mut wanted: Vec<&Trace> = Vec::new();
            for n in &names {
                if n.eq_ignore_ascii_case("all") {
                    wanted.extend(TRACES.iter());
                } else {
                    wanted.push(find(n)?);
                }
            }
            wanted.dedup_by_key(|t| t.name);
            for t in wanted {
                fetch(t, &dir)?;
            }
            Ok(())
        }
        TracesCmd::Generate {
            file,
            requests,
            keys,
            dist,
            seed,
        } => generate(&file, requests, keys, &dist, seed),
    }
}

fn list() {
    outln!("{:<18} {:>9}  {:<46}  source", "name", "size", "file");
    for t in &TRACES {
        outln!(
            "{:<18} {:>6} KiB  {:<46}  {}",
            t.name,
            lrugen::report::thousands((t.size / 1024) as i64),
            t.file,
            t.source()
        );
        outln!("{:<18} {:>9}  {}; cite {}", "", "", t.what, t.cite);
    }
    outln!("\nlrugen traces fetch NAME... [--dir DIR] downloads them (checked against their SHA-256).");
}

/// Hex of a digest.
fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// SHA-256 of a file, hex.
fn sha256_file(path: &Path) -> std::io::Result<String> {
    let mut f = std::fs::File::open(path)?;
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = f.read(&mut buf)?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
    }
    Ok(hex(&h.finalize()))
}

/// A temporary file that is removed unless it was renamed into place.
struct Partial(PathBuf);

impl Drop for Partial {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// The folders [`MadeDirs::create`] made, removed (deepest first, if empty) unless kept.
struct MadeDirs(Vec<PathBuf>);

impl MadeDirs {
    /// `create_dir_all(dir)`, remembering which folders it made.
    fn create(dir: &Path) -> std::io::Result<MadeDirs> {
        let mut missing = Vec::new();
        let mut d = Some(dir);
        while let Some(p) = d.filter(|p| !p.as_os_str().is_empty() && !p.exists()) {
            missing.push(p.to_path_buf());
            d = p.parent();
        }
        let made = MadeDirs(missing);
        std::fs::create_dir_all(dir)?;
        Ok(made)
    }

    fn keep(mut self) {
        self.0.clear();
    }
}

impl Drop for MadeDirs {
    fn drop(&mut self) {
        for d in &self.0 {
            let _ = std::fs::remove_dir(d);
        }
    }
}

/// Download `t` into `dir/t.file`: into a temporary file beside it, hashed on the way, renamed
/// into place once its size and SHA-256 are right.
fn fetch(t: &Trace, dir: &Path) -> Result<(), String> {
    let dest = dir.join(t.file);
    if dest.is_file() {
        let have = sha256_file(&dest).map_err(|e| format!("{}: {e}", dest.display()))?;
        if have == t.sha256 {
            eprintln!("{}: already there ({}), checksum matches", t.name, dest.display());
            return Ok(());
        }
        return Err(format!(
            "{}: exists with SHA-256 {have}, expected {} ({} from {}); remove it to fetch again",
            dest.display(),
            t.sha256,
            t.name,
            t.source()
        ));
    }
    let parent = dest.parent().unwrap_or(dir);
    let url = t.url();
    eprintln!("{}: downloading {url} ...", t.name);
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_connect(Some(Duration::from_secs(30)))
        .timeout_global(Some(Duration::from_secs(600)))
        .build()
        .into();
    let no_network = |why: String| {
        format!(
            "{}: cannot download {url}: {why}. Without network, copy {} to {} (SHA-256 {})",
            t.name,
            t.source(),
            dest.display(),
            t.sha256
        )
    };
    let mut resp = agent.get(&url).call().map_err(|e| no_network(e.to_string()))?;
    // the folders are made once the source answers, and removed again if nothing is written
    let made = MadeDirs::create(parent)
        .map_err(|e| format!("--dir {}: cannot create {}: {e}", dir.display(), parent.display()))?;
    let tmp = Partial(parent.join(format!(
        ".{}.part-{}",
        dest.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(),
        std::process::id()
    )));
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&tmp.0)
        .map_err(|e| format!("{}: {e}", tmp.0.display()))?;
    // one byte more than expected shows a file that is too long
    let mut body = resp.body_mut().with_config().limit(t.size + 1).reader();
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    let mut got = 0u64;
    loop {
        let n = match body.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) if got >= t.size => {
                return Err(format!(
                    "{}: {url} is longer than the {} bytes expected ({e})",
                    t.name, t.size
                ))
            }
            Err(e) => return Err(no_network(format!("reading after {got} bytes: {e}"))),
        };
        got += n as u64;
        h.update(&buf[..n]);
        file.write_all(&buf[..n])
            .map_err(|e| format!("{}: {e}", tmp.0.display()))?;
    }
    let sum = hex(&h.finalize());
    if got != t.size || sum != t.sha256 {
        return Err(format!(
            "{}: {url} gave {got} bytes with SHA-256 {sum}, expected {} bytes with SHA-256 {}; \
             nothing written",
            t.name, t.size, t.sha256
        ));
    }
    file.sync_all().map_err(|e| format!("{}: {e}", tmp.0.display()))?;
    drop(file);
    std::fs::rename(&tmp.0, &dest).map_err(|e| format!("{}: {e}", dest.display()))?;
    made.keep();
    eprintln!(
        "{}: wrote {} ({got} bytes, SHA-256 checked); cite {}",
        t.name,
        dest.display(),
        t.cite
    );
    Ok(())
}

/// The text of the synthetic trace (see `lrugen traces generate --help`).
pub fn synthetic(requests: u64, keys: u64, dist: Dist, seed: u64) -> String {
    let mut s = Sampler::new(dist, keys, seed);
    let mut text = String::with_capacity(requests as usize * 16);
    for i in 0..requests {
        let extent = s.next_key();
        // most requests are one block, some a short sequential run inside the extent
        let r = mix64(seed ^ i.wrapping_mul(0x9e37_79b9_7f4a_7c15));
        let n = if r % 4 == 0 { 2 + (r >> 8) % 7 } else { 1 };
        let start = extent * 8 + (r >> 16) % (9 - n);
        text.push_str(&format!("{start} {n} 0 {i}\n"));
    }
    text
}

fn generate(file: &Path, requests: u64, keys: u64, dist: &str, seed: u64) -> Result<(), String> {
    let dist: Dist = dist.parse().map_err(|e| format!("--dist: {e}"))?;
    if keys == 0 || keys > u64::MAX / 8 {
        return Err(format!("--keys: expected 1..={}, found {keys}", u64::MAX / 8));
    }
    if requests == 0 || requests > 100_000_000 {
        return Err(format!("--requests: expected 1..=100,000,000, found {requests}"));
    }
    if file.exists() {
        return Err(format!("{}: exists (remove it first)", file.display()));
    }
    let text = synthetic(requests, keys, dist, seed);
    let data = if file.extension().is_some_and(|e| e == "zst") {
        zstd::encode_all(text.as_bytes(), 19).map_err(|e| format!("zstd: {e}"))?
    } else {
        text.into_bytes()
    };
    let parent = match file.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let tmp = Partial(parent.join(format!(".lrugen-trace.part-{}", std::process::id())));
    std::fs::write(&tmp.0, &data).map_err(|e| format!("{}: {e}", file.display()))?;
    std::fs::rename(&tmp.0, file).map_err(|e| format!("{}: {e}", file.display()))?;
    eprintln!("wrote {} ({requests} requests, {} bytes)", file.display(), data.len());
    Ok(())
}
