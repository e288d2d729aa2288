// SPDX-License-Identifier: GPL-2.0-only
//! Output directories written whole or not at all (`lrugen exp --out`, `lrugen kernel --out`).
//!
//! [`Staging::prepare`] checks the target before any work starts (an existing file, a path under
//! a file, a place that cannot be written: an error naming the flag and what was expected, and
//! nothing written) and creates the *partial directory* `NAME.partial` beside the target, where
//! the outputs are written. [`Staging::commit`] then writes the marker file that says lrugen wrote
//! the directory (`.lrugen-exp.json`, `.lrugen-kernel.json`: the command, lrugen's version, what
//! the output is of, and the files written) and moves the result into place:
//!
//! * a new or empty target: the partial directory is renamed to it;
//! * a directory the same command wrote (its marker, and no file the marker does not list): it is
//!   replaced whole, so no stale file of an earlier run stays mixed with the new ones;
//! * any other non-empty directory is refused, unless `--force`: then the new files are moved into
//!   it (files of the same names replaced, the files an earlier lrugen run listed removed, other
//!   files kept).
//!
//! A failure drops the [`Staging`], which removes the partial directory (and the parent folders it
//! created). An interrupted run keeps it ([`Staging::keep`]) for `--resume`, which checks that the
//! marker's identity (e.g. the experiment file's hash) and lrugen's version are the same.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The suffix of the partial directory beside the target.
pub const PARTIAL_SUFFIX: &str = ".partial";

/// lrugen's version, as markers record it.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// Which command writes a directory, and the name of its marker file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Kind {
    /// The command, as the messages name it (`lrugen exp`).
    pub command: &'static str,
    /// The marker file's name in the directories it writes.
    pub marker: &'static str,
    /// Whether an interrupted run can be resumed (otherwise a stale partial directory of this
    /// kind, left by a killed run, is removed and started afresh).
    pub resumable: bool,
}

/// `lrugen exp --out`.
pub const EXP: Kind = Kind {
    command: "lrugen exp",
    marker: ".lrugen-exp.json",
    resumable: true,
};

/// `lrugen exp --shard K/N --out`: one slice of an experiment's matrix, its finished cells and a
/// copy of the experiment file, for `lrugen exp merge`.
pub const SHARD: Kind = Kind {
    command: "lrugen exp --shard",
    marker: ".lrugen-exp-shard.json",
    resumable: true,
};

/// `lrugen kernel --out`.
pub const KERNEL: Kind = Kind {
    command: "lrugen kernel",
    marker: ".lrugen-kernel.json",
    resumable: false,
};

/// `lrugen explain --out`.
pub const EXPLAIN: Kind = Kind {
    command: "lrugen explain",
    marker: ".lrugen-explain.json",
    resumable: false,
};

/// `lrugen mrc --out`.
pub const MRC: Kind = Kind {
    command: "lrugen mrc",
    marker: ".lrugen-mrc.json",
    resumable: false,
};

const KINDS: [Kind; 5] = [EXP, SHARD, KERNEL, EXPLAIN, MRC];

/// The marker file's content.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Marker {
    /// The command that wrote the directory.
    pub written_by: String,
    /// lrugen's version.
    pub lrugen_version: String,
    /// false in a partial directory (a run under way or interrupted).
    pub complete: bool,
    /// What the output is of (for `lrugen exp`: the experiment's name, its file and the file's
    /// hash), compared by `--resume`.
    pub of: BTreeMap<String, String>,
    /// The files written, relative, `/`-separated, sorted (the marker itself not included).
    #[serde(default)]
    pub files: Vec<String>,
}

/// FNV-1a, 64 bits: the hash markers record of an input file (to tell a changed file, not to
/// resist an adversary).
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// What to prepare.
#[derive(Clone, Debug)]
pub struct Request<'a> {
    /// The flag that named the target (`--out`), for the messages.
    pub flag: &'a str,
    /// The target directory, as given.
    pub target: &'a Path,
    /// The command writing it.
    pub kind: Kind,
    /// What the output is of (recorded in the marker, compared on resume).
    pub of: BTreeMap<String, String>,
    /// `--force`: write into a non-empty directory lrugen did not write; discard an interrupted
    /// run's partial directory instead of refusing to start over it.
    pub force: bool,
    /// `--resume`: continue in the partial directory an interrupted run left.
    pub resume: bool,
}

/// How the result goes into place.
#[derive(Clone, Debug, PartialEq)]
enum Mode {
    /// The target does not exist (or is an empty directory): rename the partial directory.
    New,
    /// The target is a directory the same command wrote: replace it whole.
    Replace,
    /// `--force` into a foreign directory: move the files in; remove those an earlier lrugen run
    /// listed (`old`).
    Merge { old: Vec<String> },
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum State {
    Live,
    Kept,
    Done,
}

/// A partial directory on its way to becoming the target (see the module's documentation).
#[derive(Debug)]
pub struct Staging {
    flag: String,
    kind: Kind,
    given: PathBuf,
    target: PathBuf,
    partial: PathBuf,
    mode: Mode,
    created: Vec<PathBuf>,
    resumed: bool,
    marker: Marker,
    state: State,
}

/// Every file under `dir`, relative and `/`-separated, sorted; `skip` (a top-level name) left out.
pub fn list_files(dir: &Path, skip: &str) -> std::io::Result<Vec<String>> {
    fn walk(base: &Path, rel: &str, skip: &str, out: &mut Vec<String>) -> std::io::Result<()> {
        let here = if rel.is_empty() {
            base.to_path_buf()
        } else {
            base.join(rel)
        };
        for e in std::fs::read_dir(&here)? {
            let e = e?;
            let name = e.file_name().to_string_lossy().into_owned();
            if rel.is_empty() && name == skip {
                continue;
            }
            let r = if rel.is_empty() { name } else { format!("{rel}/{name}") };
            if e.file_type()?.is_dir() {
                walk(base, &r, skip, out)?;
            } else {
                out.push(r);
            }
        }
        Ok(())
    }
    let mut out = Vec::new();
    walk(dir, "", skip, &mut out)?;
    out.sort();
    Ok(out)
}

fn read_marker(dir: &Path, marker: &str) -> Option<Marker> {
    let text = std::fs::read_to_string(dir.join(marker)).ok()?;
    serde_json::from_str(&text).ok()
}

/// The marker `kind` wrote in `dir`, if there is a readable one.
pub fn marker_in(dir: &Path, kind: &Kind) -> Option<Marker> {
    read_marker(dir, kind.marker)
}

/// `DIR.partial`, where the outputs for `DIR` are written first.
pub fn partial_of(target: &Path) -> PathBuf {
    let mut p = target.as_os_str().to_owned();
    p.push(PARTIAL_SUFFIX);
    PathBuf::from(p)
}

/// Which lrugen command's marker `dir` holds, if any.
fn marker_of(dir: &Path) -> Option<(Kind, Marker)> {
    KINDS.iter().find_map(|k| read_marker(dir, k.marker).map(|m| (*k, m)))
}

fn write_marker(dir: &Path, kind: &Kind, m: &Marker) -> std::io::Result<()> {
    let mut text = serde_json::to_string_pretty(m).map_err(std::io::Error::other)?;
    text.push('\n');
    let tmp = dir.join(format!("{}.tmp", kind.marker));
    std::fs::write(&tmp, text)?;
    std::fs::rename(&tmp, dir.join(kind.marker))
}

/// A list for a message: the first few names, and how many more.
fn some_of(names: &[String]) -> String {
    let mut s = names.iter().take(3).cloned().collect::<Vec<_>>().join(", ");
    if names.len() > 3 {
        s.push_str(&format!(" and {} more", names.len() - 3));
    }
    s
}

impl Staging {
    /// Check the target and create the partial directory (or, with `resume`, find it). Errors name
    /// the flag, the path and what was expected; on error nothing is left behind.
    pub fn prepare(req: Request<'_>) -> Result<Staging, String> {
        let flag = req.flag;
        let shown = req.target.to_path_buf();
        let at = |msg: String| format!("{flag} {}: {msg}", shown.display());
        let Some(name) = req
            .target
            .file_name()
            .filter(|_| !req.target.ends_with(".."))
            .map(|n| n.to_os_string())
        else {
            return Err(at(
                "expected a directory path that ends in a name (such as results/run1)".into(),
            ));
        };
        let target = std::path::absolute(req.target).map_err(|e| at(format!("cannot resolve the path: {e}")))?;
        let parent = target
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_else(|| PathBuf::from("/"));
        // The nearest existing ancestor must be a directory.
        let mut a = parent.clone();
        loop {
            match std::fs::metadata(&a) {
                Ok(md) if md.is_dir() => break,
                Ok(_) => {
                    return Err(at(format!(
                        "{} is a file: expected a directory path (no part of it a file)",
                        a.display()
                    )))
                }
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotADirectory => {}
                Err(e) => return Err(at(format!("cannot look at {}: {e}", a.display()))),
            }
            if !a.pop() {
                break;
            }
        }
        let mut mode = Mode::New;
        match std::fs::metadata(&target) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(at(format!("cannot look at it: {e}"))),
            Ok(md) if !md.is_dir() => {
                return Err(at(format!(
                    "is a file: expected a directory (a new one, an empty one, or one {} wrote)",
                    req.kind.command
                )))
            }
            Ok(md) => {
                #[cfg(unix)]
                {
                    use std::os::unix::fs::MetadataExt;
                    if std::fs::metadata(&parent).is_ok_and(|p| p.dev() != md.dev()) {
                        return Err(at(
                            "is a mount point: expected a directory that can be replaced (give a folder inside it)"
                                .into(),
                        ));
                    }
                }
                #[cfg(not(unix))]
                let _ = md;
                let entries = list_files(&target, "").map_err(|e| at(format!("cannot read it: {e}")))?;
                let empty = std::fs::read_dir(&target)
                    .map_err(|e| at(format!("cannot read it: {e}")))?
                    .next()
                    .is_none();
                if !empty {
                    let found = marker_of(&target);
                    let ours = found.as_ref().filter(|(k, _)| *k == req.kind).map(|(_, m)| m);
                    let strangers: Vec<String> = match ours {
                        Some(m) => entries
                            .iter()
                            .filter(|f| f.as_str() != req.kind.marker && !m.files.contains(f))
                            .cloned()
                            .collect(),
                        None => entries.clone(),
                    };
                    if strangers.is_empty() && ours.is_some() {
                        mode = Mode::Replace;
                    } else if req.force {
                        mode = Mode::Merge {
                            old: ours.map(|m| m.files.clone()).unwrap_or_default(),
                        };
                    } else {
                        let why = match (&found, ours) {
                            (Some(_), Some(_)) => format!(
                                "holds files {} did not write ({})",
                                req.kind.command,
                                some_of(&strangers)
                            ),
                            (Some((k, _)), None) => format!("was written by {}, not {}", k.command, req.kind.command),
                            (None, _) => format!(
                                "is not empty and was not written by {} (it has no {})",
                                req.kind.command, req.kind.marker
                            ),
                        };
                        return Err(at(format!(
                            "{why}: expected a new or empty directory, or one {} wrote (replaced whole); \
                             give --force to write into it (files of the same names are replaced, the others kept)",
                            req.kind.command
                        )));
                    }
                }
                if matches!(mode, Mode::Merge { .. }) {
                    // Nothing will be renamed over it: its own files must be writable.
                    let probe = target.join(format!(".lrugen-probe-{}", std::process::id()));
                    std::fs::write(&probe, b"")
                        .and_then(|_| std::fs::remove_file(&probe))
                        .map_err(|e| at(format!("cannot write into it: {e}: expected a writable directory")))?;
                }
            }
        }
        let mut pname = name.clone();
        pname.push(PARTIAL_SUFFIX);
        let partial = parent.join(&pname);
        let pshown = partial.display().to_string();
        let mut marker = Marker {
            written_by: req.kind.command.into(),
            lrugen_version: VERSION.into(),
            complete: false,
            of: req.of.clone(),
            files: Vec::new(),
        };
        let mut resumed = false;
        match std::fs::symlink_metadata(&partial) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                if req.resume {
                    let done = if target.is_dir() && read_marker(&target, req.kind.marker).is_some() {
                        format!(" ({} holds a complete run)", shown.display())
                    } else {
                        String::new()
                    };
                    return Err(format!(
                        "--resume: nothing to resume: expected the partial directory {pshown} of an interrupted \
                         run, and there is none{done}"
                    ));
                }
            }
            Err(e) => return Err(at(format!("cannot look at {pshown}: {e}"))),
            Ok(md) => {
                let theirs = if md.is_dir() {
                    read_marker(&partial, req.kind.marker)
                } else {
                    None
                };
                let Some(old) = theirs.filter(|m| m.written_by == req.kind.command) else {
                    return Err(at(format!(
                        "{pshown} exists and was not written by {}: expected no such file or directory \
                         (lrugen writes its results there first; remove it or choose another {flag})",
                        req.kind.command
                    )));
                };
                if req.resume {
                    if old.lrugen_version != VERSION {
                        return Err(format!(
                            "--resume: {pshown} was written by lrugen {}, this is lrugen {VERSION}: expected the \
                             same version (give --force without --resume to start over)",
                            old.lrugen_version
                        ));
                    }
                    if old.of != req.of {
                        let diff: Vec<String> = req
                            .of
                            .iter()
                            .filter(|(k, v)| old.of.get(*k) != Some(*v))
                            .map(|(k, v)| {
                                format!("{k} was {}, is now {v}", old.of.get(k).map_or("(none)", String::as_str))
                            })
                            .collect();
                        return Err(format!(
                            "--resume: {pshown} is of another run ({}): expected the same experiment file \
                             (give --force without --resume to start over)",
                            diff.join("; ")
                        ));
                    }
                    resumed = true;
                } else if req.force || !req.kind.resumable {
                    std::fs::remove_dir_all(&partial)
                        .map_err(|e| at(format!("cannot remove the earlier {pshown}: {e}")))?;
                } else {
                    return Err(at(format!(
                        "{pshown} holds an interrupted run of {}: continue it with --resume, or give --force \
                         to start over (its finished cells are discarded)",
                        req.kind.command
                    )));
                }
            }
        }
        let mut created = Vec::new();
        if !resumed {
            // Create the missing parents (remembered, to be removed on failure), then the partial
            // directory and its marker: this is the check that the place is writable.
            let mut missing = Vec::new();
            let mut p = parent.clone();
            while !p.exists() {
                missing.push(p.clone());
                if !p.pop() {
                    break;
                }
            }
            let undo = |created: &[PathBuf]| {
                for d in created.iter().rev() {
                    let _ = std::fs::remove_dir(d);
                }
            };
            for d in missing.into_iter().rev() {
                match std::fs::create_dir(&d) {
                    // another process (a shard beside this one) made it meanwhile: not ours to undo
                    Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && d.is_dir() => continue,
                    Err(e) => {
                        undo(&created);
                        return Err(at(format!(
                            "cannot create {}: {e}: expected a path where a directory can be created",
                            d.display()
                        )));
                    }
                    Ok(()) => created.push(d),
                }
            }
            if let Err(e) = std::fs::create_dir(&partial) {
                undo(&created);
                return Err(at(format!(
                    "cannot create {pshown}: {e}: expected a place where a directory can be created beside it"
                )));
            }
            if let Err(e) = write_marker(&partial, &req.kind, &marker) {
                let _ = std::fs::remove_dir_all(&partial);
                undo(&created);
                return Err(at(format!(
                    "cannot write into {pshown}: {e}: expected a writable directory"
                )));
            }
        } else {
            marker.complete = false;
        }
        Ok(Staging {
            flag: flag.into(),
            kind: req.kind,
            given: shown,
            target,
            partial,
            mode,
            created,
            resumed,
            marker,
            state: State::Live,
        })
    }

    /// The directory to write into (the partial directory).
    pub fn dir(&self) -> &Path {
        &self.partial
    }

    /// The target as given (relative if it was).
    pub fn given(&self) -> &Path {
        &self.given
    }

    /// Whether this continues an interrupted run's partial directory.
    pub fn resumed(&self) -> bool {
        self.resumed
    }

    /// Leave the partial directory as it is (an interrupted run, to be resumed); returns its path.
    pub fn keep(mut self) -> PathBuf {
        self.state = State::Kept;
        self.partial.clone()
    }

    /// Write the marker and move the partial directory's files into place (see the module's
    /// documentation). On error the partial directory is removed and the target left as it was
    /// where it can be.
    pub fn commit(mut self) -> Result<(), String> {
        let at = |msg: String| format!("{} {}: {msg}", self.flag, self.given.display());
        let files = list_files(&self.partial, self.kind.marker)
            .map_err(|e| at(format!("cannot read {}: {e}", self.partial.display())))?;
        self.marker.complete = true;
        self.marker.files = files.clone();
        write_marker(&self.partial, &self.kind, &self.marker).map_err(|e| {
            at(format!(
                "cannot write {}: {e}",
                self.partial.join(self.kind.marker).display()
            ))
        })?;
        match &self.mode {
            Mode::New | Mode::Replace => {
                let mut old = None;
                if self.target.is_dir() {
                    if self.mode == Mode::New {
                        // an empty directory
                        std::fs::remove_dir(&self.target).map_err(|e| at(format!("cannot replace it: {e}")))?;
                    } else {
                        let mut n = self.partial.clone().into_os_string();
                        n.push(format!(".old-{}", std::process::id()));
                        let o = PathBuf::from(n);
                        std::fs::rename(&self.target, &o).map_err(|e| at(format!("cannot replace it: {e}")))?;
                        old = Some(o);
                    }
                }
                if let Err(e) = std::fs::rename(&self.partial, &self.target) {
                    if let Some(o) = &old {
                        let _ = std::fs::rename(o, &self.target);
                    }
                    return Err(at(format!("cannot move {} into place: {e}", self.partial.display())));
                }
                if let Some(o) = old {
                    let _ = std::fs::remove_dir_all(o);
                }
            }
            Mode::Merge { old } => {
                for f in old.iter().filter(|f| !files.contains(f)) {
                    let _ = std::fs::remove_file(self.target.join(f));
                }
                let mut all = files.clone();
                all.push(self.kind.marker.to_string());
                for f in &all {
                    let to = self.target.join(f);
                    if let Some(d) = to.parent() {
                        std::fs::create_dir_all(d).map_err(|e| at(format!("cannot create {}: {e}", d.display())))?;
                    }
                    std::fs::rename(self.partial.join(f), &to)
                        .map_err(|e| at(format!("cannot move {f} into it: {e}")))?;
                }
                let _ = std::fs::remove_dir_all(&self.partial);
            }
        }
        self.state = State::Done;
        Ok(())
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        // A resumed partial directory was there before this run: leave it (with the cells this
        // run added) rather than lose an earlier run's work.
        if self.state == State::Live && !self.resumed {
            let _ = std::fs::remove_dir_all(&self.partial);
            for d in self.created.iter().rev() {
                let _ = std::fs::remove_dir(d);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req<'a>(target: &'a Path, force: bool, resume: bool) -> Request<'a> {
        Request {
            flag: "--out",
            target,
            kind: EXP,
            of: BTreeMap::from([("experiment".to_string(), "t".to_string())]),
            force,
            resume,
        }
    }

    fn names(dir: &Path) -> Vec<String> {
        list_files(dir, "").unwrap()
    }

    #[test]
    fn fnv1a64_known_values() {
        assert_eq!(fnv1a64(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a64(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a64(b"foobar"), 0x8594_4171_f739_67e8);
    }

    #[test]
    fn new_target_then_replaced_whole() {
        let d = tempfile::tempdir().unwrap();
        let t = d.path().join("a/b/out");
        let s = Staging::prepare(req(&t, false, false)).unwrap();
        std::fs::write(s.dir().join("one.txt"), "1").unwrap();
        s.commit().unwrap();
        assert_eq!(names(&t), [".lrugen-exp.json", "one.txt"]);
        let m = read_marker(&t, EXP.marker).unwrap();
        assert!(m.complete);
        assert_eq!(m.files, ["one.txt"]);
        // a second run replaces it whole: one.txt does not stay
        let s = Staging::prepare(req(&t, false, false)).unwrap();
        std::fs::create_dir(s.dir().join("sub")).unwrap();
        std::fs::write(s.dir().join("sub/two.txt"), "2").unwrap();
        s.commit().unwrap();
        assert_eq!(names(&t), [".lrugen-exp.json", "sub/two.txt"]);
        assert_eq!(
            names(d.path()),
            [".lrugen-exp.json", "sub/two.txt"].map(|f| format!("a/b/out/{f}"))
        );
    }

    /// Shards started together create their common missing parents at the same time: each
    /// takes the other's directory as made (the race once failed the Python recipe's test with
    /// "cannot create …slices: File exists").
    #[test]
    fn siblings_prepared_at_once_share_their_new_parents() {
        for round in 0..20 {
            let d = tempfile::tempdir().unwrap();
            let targets: Vec<PathBuf> = (0..8)
                .map(|k| d.path().join(format!("r{round}/p/q.slices/{k}")))
                .collect();
            let barrier = std::sync::Barrier::new(targets.len());
            std::thread::scope(|sc| {
                for t in &targets {
                    let barrier = &barrier;
                    sc.spawn(move || {
                        barrier.wait();
                        let s = Staging::prepare(req(t, false, false)).unwrap();
                        std::fs::write(s.dir().join("one.txt"), "1").unwrap();
                        s.commit().unwrap();
                    });
                }
            });
            for t in &targets {
                assert_eq!(names(t), [".lrugen-exp.json", "one.txt"]);
            }
        }
    }

    #[test]
    fn a_failed_run_leaves_nothing() {
        let d = tempfile::tempdir().unwrap();
        let t = d.path().join("x/y/out");
        let s = Staging::prepare(req(&t, false, false)).unwrap();
        std::fs::write(s.dir().join("half.txt"), "1").unwrap();
        drop(s);
        assert!(names(d.path()).is_empty());
        assert!(!d.path().join("x").exists());
    }

    #[test]
    fn foreign_directories_need_force_and_keep_their_files() {
        let d = tempfile::tempdir().unwrap();
        let t = d.path().join("out");
        std::fs::create_dir(&t).unwrap();
        std::fs::write(t.join("mine.txt"), "user").unwrap();
        let e = Staging::prepare(req(&t, false, false)).unwrap_err();
        assert!(
            e.starts_with("--out ") && e.contains("--force") && e.contains("not written by"),
            "{e}"
        );
        assert_eq!(names(d.path()), ["out/mine.txt"]);
        let s = Staging::prepare(req(&t, true, false)).unwrap();
        std::fs::write(s.dir().join("r.txt"), "1").unwrap();
        s.commit().unwrap();
        assert_eq!(names(&t), [".lrugen-exp.json", "mine.txt", "r.txt"]);
        // still mixed: a run without --force refuses it, naming the stranger
        let e = Staging::prepare(req(&t, false, false)).unwrap_err();
        assert!(e.contains("mine.txt"), "{e}");
        // with --force again, the earlier lrugen file is removed, the user's kept
        let s = Staging::prepare(req(&t, true, false)).unwrap();
        std::fs::write(s.dir().join("q.txt"), "1").unwrap();
        s.commit().unwrap();
        assert_eq!(names(&t), [".lrugen-exp.json", "mine.txt", "q.txt"]);
    }

    #[test]
    fn files_and_paths_under_files_are_refused() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("f");
        std::fs::write(&f, "x").unwrap();
        let e = Staging::prepare(req(&f, true, false)).unwrap_err();
        assert!(e.contains("is a file: expected a directory"), "{e}");
        let e = Staging::prepare(req(&f.join("sub/out"), true, false)).unwrap_err();
        assert!(e.contains("is a file: expected a directory path"), "{e}");
        let e = Staging::prepare(req(Path::new(".."), false, false)).unwrap_err();
        assert!(e.contains("ends in a name"), "{e}");
        assert_eq!(names(d.path()), ["f"]);
    }

    #[test]
    fn resume_checks_identity_and_presence() {
        let d = tempfile::tempdir().unwrap();
        let t = d.path().join("out");
        let e = Staging::prepare(req(&t, false, true)).unwrap_err();
        assert!(e.starts_with("--resume: nothing to resume"), "{e}");
        let s = Staging::prepare(req(&t, false, false)).unwrap();
        std::fs::write(s.dir().join("c0"), "1").unwrap();
        let p = s.keep();
        // without --resume or --force: refused
        let e = Staging::prepare(req(&t, false, false)).unwrap_err();
        assert!(e.contains("--resume") && e.contains("interrupted"), "{e}");
        // another experiment: refused
        let mut r = req(&t, false, true);
        r.of.insert("experiment".into(), "u".into());
        let e = Staging::prepare(r).unwrap_err();
        assert!(e.contains("experiment was t, is now u"), "{e}");
        // the same: resumed, its files kept; dropping a resumed staging keeps them too
        let s = Staging::prepare(req(&t, false, true)).unwrap();
        assert!(s.resumed() && s.dir().join("c0").exists());
        drop(s);
        assert!(p.join("c0").exists());
        // --force starts over
        let s = Staging::prepare(req(&t, true, false)).unwrap();
        assert!(!s.dir().join("c0").exists());
        drop(s);
        assert!(names(d.path()).is_empty());
    }
}
