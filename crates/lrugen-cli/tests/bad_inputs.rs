// SPDX-License-Identifier: GPL-2.0-only
//! Bad inputs of `lrugen run`, `bench`, `kernel`, `mrc` and `traces`, as a table: each row is a command
//! line, the exit status it must end with (1: refused by lrugen, 2: refused by the argument
//! parser), and words its message must hold (the file, line or option at fault and what was
//! expected). Every row is also checked for no panic, and for nothing written: the command runs
//! in an empty working directory that must stay empty, and the fixture folder must not change.
//! The bad inputs of `exp` and `kernel` around their output directories (and `exp --resume`,
//! Ctrl-C) are a second table, in [`outputs`], whose cases set up a scratch folder each.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// One bad input. `{d}` in an argument or a needle is the fixture folder (its files are written
/// by [`fixtures`]).
struct Case {
    args: &'static [&'static str],
    code: i32,
    needles: &'static [&'static str],
}

const fn case(args: &'static [&'static str], code: i32, needles: &'static [&'static str]) -> Case {
    Case { args, code, needles }
}

/// The table. Items of issue #9 first, then each kind of bad input.
const CASES: &[Case] = &[
    // --- issue #9: checked before the run, never a panic
    case(
        &["run", "--debugfs-every", "0", "--policy", "mglru", "--accesses", "10"],
        1,
        &["--debugfs-every", "at least 1"],
    ),
    case(
        &["run", "--capacity", "1e18", "--accesses", "10"],
        1,
        &[
            "--capacity 1000000000000000000",
            "too large",
            "expected at most 2,147,483,647 pages",
        ],
    ),
    case(&["run", "--capacity", "-5"], 2, &["'-5'", "--capacity", "non-negative"]),
    case(&["run", "--accesses", "-1"], 2, &["--accesses", "non-negative"]),
    case(
        &["run", "--jobs", "-2", "--workload", "fio"],
        2,
        &["--jobs", "non-negative"],
    ),
    case(
        &["bench", "--capacity", "-5", "{d}/good.lis"],
        2,
        &["--capacity", "non-negative"],
    ),
    case(&["kernel", "--accesses", "-5"], 2, &["--accesses", "non-negative"]),
    case(
        &["kernel", "--ftrace-stacktrace", "--accesses", "10"],
        2,
        &["--ftrace-stacktrace", "--ftrace <EVENT>"],
    ),
    case(&["run", "--memcg-max", "-5M"], 1, &["--memcg-max", "'-5M'", "expected"]),
    // --- --ftrace: the model's reclaim trace
    case(
        &[
            "run",
            "--policy",
            "mglru",
            "--accesses",
            "10",
            "--ftrace",
            "sched/sched_switch",
        ],
        1,
        &[
            "--ftrace `sched/sched_switch`",
            "vmscan/mm_vmscan_lru_shrink_inactive",
            "try_to_inc_max_seq",
        ],
    ),
    case(
        &[
            "run",
            "--policy",
            "lru",
            "--accesses",
            "10",
            "--ftrace",
            "p:age try_to_inc_max_seq",
        ],
        1,
        &["--ftrace", "expected mglru or classic", "found lru"],
    ),
    case(
        &[
            "run",
            "--policy",
            "mglru",
            "--accesses",
            "10",
            "--output-format",
            "cachesim",
            "--ftrace",
            "p:age try_to_inc_max_seq",
        ],
        1,
        &["--ftrace with --output-format", "--ftrace-out FILE"],
    ),
    case(
        &["run", "--policy", "mglru", "--accesses", "10", "--ftrace-out", "t.txt"],
        2,
        &["--ftrace"],
    ),
    case(
        &[
            "run",
            "--policy",
            "mglru",
            "--accesses",
            "10",
            "--ftrace",
            "p:age try_to_inc_max_seq",
            "--ftrace-out",
            "no/such/dir/t.txt",
        ],
        1,
        &["--ftrace-out no/such/dir/t.txt", "no directory no/such/dir"],
    ),
    // --- --switch-at: writes to /sys/kernel/mm/lru_gen/enabled during a run
    case(
        &["run", "--policy", "mglru", "--accesses", "10", "--switch-at", "5:z"],
        1,
        &[
            "--switch-at '5:z'",
            "writing 'z'",
            "EINVAL",
            "expected y, n or a number",
        ],
    ),
    case(
        &["run", "--policy", "classic", "--accesses", "10", "--switch-at", "5: y"],
        1,
        &["--switch-at '5: y'", "writing ' y'", "EINVAL"],
    ),
    case(
        &["run", "--policy", "mglru", "--accesses", "10", "--switch-at", "5:0x"],
        1,
        &["writing '0x'", "EINVAL", "0x hex"],
    ),
    case(
        &["run", "--policy", "mglru", "--accesses", "10", "--switch-at", "5"],
        1,
        &["--switch-at '5'", "expected STEP:VALUE"],
    ),
    case(
        &["run", "--policy", "mglru", "--accesses", "10", "--switch-at", "-1:y"],
        1,
        &["--switch-at '-1:y'", "STEP '-1'", "non-negative"],
    ),
    case(
        &["run", "--policy", "classic,cache_ext:nope", "--accesses", "10"],
        1,
        &[
            "unknown cache_ext policy 'cache_ext:nope'",
            "cache_ext:mru",
            "cache_ext:get_scan",
        ],
    ),
    case(
        &[
            "run",
            "--policy",
            "cache_ext:mru",
            "--accesses",
            "10",
            "--switch-at",
            "5:y",
        ],
        1,
        &["switching", "mglru or classic"],
    ),
    case(
        &["run", "--policy", "lru,opt", "--accesses", "10", "--switch-at", "5:y"],
        1,
        &["--switch-at", "expected mglru or classic", "found lru,opt"],
    ),
    case(
        &[
            "run",
            "--policy",
            "mglru",
            "--accesses",
            "10",
            "--jobs",
            "2",
            "--switch-at",
            "5:n",
        ],
        1,
        &["--switch-at", "virtual-time engine"],
    ),
    case(
        &[
            "run",
            "--policy",
            "mglru",
            "--accesses",
            "10",
            "--debugfs-write",
            "garbage",
        ],
        1,
        &[
            "--debugfs-write",
            "`garbage`",
            "expected command `+` (aging) or `-` (eviction)",
        ],
    ),
    case(
        &[
            "run",
            "--policy",
            "mglru",
            "--accesses",
            "10",
            "--debugfs-write",
            "- 2 0",
        ],
        1,
        &["--debugfs-write", "`- 2 0`", "a generation number"],
    ),
    case(
        &[
            "run",
            "--policy",
            "mglru",
            "--accesses",
            "10",
            "--debugfs-write",
            "+ 7 0 3",
        ],
        1,
        &["--debugfs-write", "expected memcg id 1 (the root) or 2", "found 7"],
    ),
    case(
        &[
            "run",
            "--policy",
            "mglru",
            "--accesses",
            "10",
            "--debugfs-write",
            "+ 2 0 3; - 2 3 0",
        ],
        1,
        &["--debugfs-write", "command 1 `- 2 3 0`", "node id 0..1"],
    ),
    case(
        &[
            "run",
            "--policy",
            "mglru",
            "--accesses",
            "10",
            "--debugfs-write",
            "- 2 0 1 300",
        ],
        1,
        &["--debugfs-write", "swappiness"],
    ),
    case(
        &["run", "--policy", "mglru", "--accesses", "10", "--debugfs-write", ""],
        1,
        &["--debugfs-write", "at least one command"],
    ),
    case(
        &[
            "run",
            "--policy",
            "classic",
            "--accesses",
            "10",
            "--debugfs-write",
            "+ 2 0 3",
        ],
        1,
        &["--debugfs-write", "expected mglru among --policy"],
    ),
    case(
        &[
            "run",
            "--policy",
            "lru,opt",
            "--jobs",
            "4",
            "--workload",
            "fio",
            "--accesses",
            "100",
        ],
        1,
        &["--policy lru,opt", "4 tasks", "expected mglru or classic"],
    ),
    case(
        &["run", "--compressed-pct", "0", "--workload", "anon"],
        2,
        &["--compressed-pct", "1..=100"],
    ),
    case(
        &["run", "--compressed-pct", "101", "--workload", "anon"],
        2,
        &["--compressed-pct", "1..=100"],
    ),
    case(
        &["run", "--trace", "{d}/noname.bin"],
        1,
        &[
            "{d}/noname.bin",
            "cannot tell the trace format",
            "--format NAME",
            "index32",
        ],
    ),
    // a lackey trace is memory accesses: replaying it as file reads would reinterpret it
    case(
        &["run", "--trace", "{d}/good.lackey"],
        1,
        &["{d}/good.lackey", "lackey trace holds memory loads", "--access anon"],
    ),
    case(
        &["run", "--trace", "{d}/good.lackey", "--access", "mmap"],
        1,
        &[
            "{d}/good.lackey:1",
            "--access mmap cannot replay",
            "--access anon or mixed",
        ],
    ),
    case(
        &["run", "--trace", "{d}/good.lis", "--access", "anon"],
        1,
        &[
            "{d}/good.lis:1",
            "--access anon cannot replay",
            "read or write of a file",
        ],
    ),
    case(
        &["run", "--trace", "{d}/high.index32", "--access", "anon"],
        1,
        &["{d}/high.index32", "record 2", "only --access mixed"],
    ),
    case(
        &["run", "--trace", "{d}/good.lis", "--access", "swap"],
        2,
        &["--access", "unknown access \"swap\"", "file, mmap, anon or mixed"],
    ),
    case(&["run", "--access", "anon"], 2, &["--trace"]),
    case(
        &["explain", "--policy", "mglru"],
        1,
        &["--policy mglru", "expected two entries"],
    ),
    case(
        &["explain", "--policy", "mglru,lru", "--accesses", "10"],
        1,
        &["policy lru", "expected mglru or classic"],
    ),
    case(&["explain", "--memtier", "get"], 1, &["--memtier", "not taken"]),
    case(
        &["explain", "--exp", "{d}/missing-exp.toml"],
        1,
        &["{d}/missing-exp.toml"],
    ),
    case(
        &["explain", "--exp", "{d}/explain-mix.toml", "--policy", "mglru,lru"],
        1,
        &["--policy lru", "not a policy of {d}/explain-mix.toml", "classic, mglru"],
    ),
    case(
        &[
            "explain",
            "--exp",
            "{d}/explain-mix.toml",
            "--policy",
            "classic,classic",
        ],
        1,
        &["two different labels", "classic, mglru"],
    ),
    case(
        &["explain", "--exp", "{d}/explain-mix.toml", "--trace", "{d}/good.lis"],
        1,
        &["--exp {d}/explain-mix.toml", "not taken with it"],
    ),
    // --- control scripts (--ctl): the file, line and what was expected
    case(
        &["run", "--ctl", "{d}/missing-ctl.toml", "--accesses", "10"],
        1,
        &["{d}/missing-ctl.toml", "cannot read the control script"],
    ),
    case(
        &["run", "--ctl", "{d}/ctl-badfile.toml", "--accesses", "10"],
        1,
        &[
            "{d}/ctl-badfile.toml:3:",
            "unknown control file 'memory.maxx'",
            "expected one of",
        ],
    ),
    case(
        &["run", "--ctl", "{d}/ctl-novalue.toml", "--accesses", "10"],
        1,
        &["{d}/ctl-novalue.toml:4:", "needs `value`"],
    ),
    case(
        &[
            "run",
            "--ctl",
            "{d}/ctl-ok.toml",
            "--policy",
            "mglru,lru",
            "--accesses",
            "10",
        ],
        1,
        &["--ctl", "policy lru", "reference cache", "mglru, classic"],
    ),
    case(
        &[
            "run",
            "--ctl",
            "{d}/ctl-ok.toml",
            "--workload",
            "fio",
            "--jobs",
            "2",
            "--accesses",
            "10",
        ],
        1,
        &["control script", "engine"],
    ),
    case(
        &["run", "--ops", "{d}/tiny.ops", "--ctl", "{d}/ctl-enabled.toml"],
        1,
        &["--ctl", "{d}/ctl-enabled.toml", "writes enabled", "not with --ops"],
    ),
    case(&["explain", "--seeds", "0"], 1, &["--seeds", "at least 1"]),
    case(&["run", "--runtime-ms", "0"], 1, &["--runtime-ms", "at least 1 ms"]),
    case(
        &["run", "--trace", "{d}/high.index32"],
        1,
        &["{d}/high.index32", "record 2", "high bit"],
    ),
    case(
        &["run", "--trace", "{d}/cut.index64"],
        1,
        &["{d}/cut.index64", "record 2", "expected 8 bytes"],
    ),
    case(
        &["run", "--trace", "{d}/good.lis", "--format", "parquet"],
        2,
        &["--format", "unknown trace format \"parquet\"", "oracleGeneral"],
    ),
    case(&["run", "--format", "arc"], 2, &["--trace"]),
    case(
        &["kernel", "--out", "{d}/a-file", "--accesses", "10"],
        1,
        &["--out {d}/a-file", "is a file: expected a directory"],
    ),
    case(
        &["kernel", "--out", "{d}/a-file/sub", "--accesses", "10"],
        1,
        &[
            "--out {d}/a-file/sub",
            "{d}/a-file is a file: expected a directory path",
        ],
    ),
    case(
        &["kernel", "--access", "hotcold", "--size", "1M", "--accesses", "10"],
        1,
        &[
            "--access hotcold",
            "--size, 256 pages",
            "expected at least 256 accesses, found 10",
        ],
    ),
    case(
        &["kernel", "--lockstep", "2", "--accesses", "10"],
        1,
        &["--lockstep", "the workload has one task"],
    ),
    case(
        &["kernel", "--lockstep", "0", "--accesses", "10"],
        1,
        &["--lockstep", "expected accesses per round, 1 or more"],
    ),
    case(
        &["kernel", "--advice", "sequential"],
        1,
        &["--advice", "expected random or normal", "'sequential'"],
    ),
    case(
        &["kernel", "--dist", "gauss:0"],
        1,
        &["--dist", "gauss:0", "expected a percentage > 0"],
    ),
    case(
        &["kernel", "--ftrace", "vmscan"],
        2,
        &["--ftrace", "`vmscan`", "expected a tracepoint as SUBSYSTEM/EVENT"],
    ),
    case(
        &["kernel", "--ftrace", "p:age"],
        2,
        &["--ftrace", "`p:age`", "expected a kprobe as `p:NAME SYMBOL"],
    ),
    case(
        &["kernel", "--fixture", "{d}/a-file", "--accesses", "10"],
        1,
        &[
            "--fixture",
            "{d}/a-file: line 1 column ",
            "not a capture",
            "refusing to replace",
        ],
    ),
    case(
        &["kernel", "--fixture", "{d}/nodir/x.json", "--accesses", "10"],
        1,
        &["--fixture {d}/nodir/x.json", "no directory {d}/nodir"],
    ),
    case(
        &["kernel", "--fixture", "{d}", "--accesses", "10"],
        1,
        &["--fixture {d}", "is a directory, expected a file name"],
    ),
    // a trace's fixture keeps its op file; its target is checked before booting as any other's
    case(
        &["kernel", "--fixture", "{d}", "--trace", "{d}/good.lis"],
        1,
        &["--fixture {d}", "is a directory, expected a file name"],
    ),
    case(
        &["kernel", "--out", "/proc/lrugen-out", "--accesses", "10"],
        1,
        &["--out /proc/lrugen-out", "cannot create /proc/lrugen-out.partial"],
    ),
    // --- malformed trace lines and records, one per format: file, line or record, expectation
    case(
        &["run", "--trace", "{d}/bad.lis", "--capacity", "10"],
        1,
        &["{d}/bad.lis:3: expected ", "300 eight 0 3"],
    ),
    case(&["bench", "{d}/bad.lis"], 1, &["{d}/bad.lis:3: expected "]),
    case(
        &["bench", "{d}/good.lis", "{d}/bad.lis"],
        1,
        &["{d}/bad.lis:3: expected "],
    ),
    case(
        &["run", "--trace", "{d}/bad.iolog"],
        1,
        &["{d}/bad.iolog:3", "expected"],
    ),
    case(
        &["run", "--trace", "{d}/bad.lackey"],
        1,
        &["{d}/bad.lackey:2", "expected"],
    ),
    case(&["run", "--trace", "{d}/bad.csv"], 1, &["{d}/bad.csv:3", "expected"]),
    case(
        &["run", "--trace", "{d}/cut.oracleGeneral.bin"],
        1,
        &[
            "{d}/cut.oracleGeneral.bin",
            "record 2",
            "truncated",
            "expected 24 bytes",
        ],
    ),
    case(&["run", "--trace", "{d}/cut.lcs"], 1, &["{d}/cut.lcs", "expected"]),
    case(
        &["run", "--trace", "{d}/cut.lrugen"],
        1,
        &["{d}/cut.lrugen", "expected"],
    ),
    case(
        &["run", "--trace", "{d}/bad.lis", "--format", "oracleGeneral"],
        1,
        &["{d}/bad.lis", "truncated"],
    ),
    case(
        &["run", "--trace", "{d}/empty.lis"],
        1,
        &["{d}/empty.lis", "no request"],
    ),
    // --- missing files, directories given as files
    case(
        &["run", "--trace", "{d}/missing.lis"],
        1,
        &["{d}/missing.lis", "cannot open", "No such file"],
    ),
    case(&["bench", "{d}/missing.lis"], 1, &["{d}/missing.lis", "cannot open"]),
    case(&["run", "--trace", "{d}/adir.lis"], 1, &["{d}/adir.lis", "directory"]),
    case(&["bench", "{d}/adir.lis"], 1, &["{d}/adir.lis", "directory"]),
    case(
        &["kernel", "--trace", "{d}/missing.lis"],
        1,
        &["{d}/missing.lis", "cannot open"],
    ),
    case(&["kernel", "--exp", "{d}/missing.toml"], 1, &["{d}/missing.toml"]),
    case(
        &["kernel", "--exp", "{d}/switchat.toml"],
        1,
        &[
            "switchat.toml",
            "switch_at",
            "does not write /sys/kernel/mm/lru_gen/enabled",
        ],
    ),
    case(
        &["exp", "--out", "out", "{d}/badswitchat.toml"],
        1,
        &["badswitchat.toml:5", "writing 'z'", "EINVAL", "expected y, n"],
    ),
    // --- exp --shard K/N and exp merge (the slices themselves: tests/shard.rs)
    case(
        &["exp", "--shard", "3/3", "--out", "out", "{d}/badswitchat.toml"],
        2,
        &["--shard", "'3/3'", "expected 0 <= K < N", "0/3 .. 2/3"],
    ),
    case(
        &["exp", "--shard", "1/0", "--out", "out", "{d}/badswitchat.toml"],
        2,
        &["--shard", "'1/0'", "at least 1 slice"],
    ),
    case(
        &["exp", "--shard", "a/4", "--out", "out", "{d}/badswitchat.toml"],
        2,
        &["--shard", "'a'", "not a whole number", "expected K/N"],
    ),
    case(
        &["exp", "--shard", "2", "--out", "out", "{d}/badswitchat.toml"],
        2,
        &["--shard", "'2'", "expected K/N"],
    ),
    case(&["exp", "merge", "--out", "out"], 2, &["<DIR>", "required"]),
    case(
        &["exp", "merge", "{d}", "--out", "out"],
        1,
        &[
            "{d}",
            "not a slice",
            "expected the --out directory of a finished `lrugen exp FILE --shard K/N`",
        ],
    ),
    // --- bad sizes
    case(
        &["run", "--memory", "12X"],
        1,
        &["--memory", "'12X'", "unknown unit 'X'"],
    ),
    case(&["run", "--size", "M"], 1, &["--size", "expected a number"]),
    case(&["run", "--swap", "-1G"], 1, &["--swap", "'-1G'", "expected"]),
    case(
        &["run", "--memory", "99999999999999999999"],
        1,
        &["--memory", "expected"],
    ),
    case(
        &["run", "--memcg-max", "0", "--accesses", "10"],
        1,
        &["memory.max", "0 pages"],
    ),
    case(&["run", "--capacity", "0"], 1, &["--capacity", "0 pages"]),
    case(
        &["kernel", "--swap-size", "lots", "--swap", "disk"],
        1,
        &["--swap-size", "'lots'"],
    ),
    case(
        &["run", "--accesses", "1.5"],
        2,
        &["--accesses", "'1.5'", "whole number"],
    ),
    case(
        &["run", "--records", "1e30", "--workload", "ycsb"],
        2,
        &["--records", "too large"],
    ),
    // --- YCSB properties files (issue #12): file, line and what was expected
    case(
        &["run", "--ycsb", "{d}/ycsb-unknown", "--accesses", "10"],
        1,
        &[
            "{d}/ycsb-unknown:3",
            "unknown YCSB property 'readproprtion'",
            "readproportion",
        ],
    ),
    case(
        &["run", "--ycsb", "{d}/ycsb-badvalue", "--accesses", "10"],
        1,
        &["{d}/ycsb-badvalue:2", "updateproportion=lots", "expected a number"],
    ),
    case(
        &["run", "--ycsb", "{d}/ycsb-target", "--accesses", "10"],
        1,
        &["{d}/ycsb-target:2", "target=1000", "not modelled"],
    ),
    case(
        &["run", "--ycsb", "{d}/ycsb-fieldlen", "--accesses", "10"],
        1,
        &[
            "{d}/ycsb-fieldlen:1",
            "fieldlengthdistribution=zipfian",
            "expected constant",
        ],
    ),
    case(
        &["run", "--ycsb", "{d}/ycsb-records", "--accesses", "10"],
        1,
        &["{d}/ycsb-records:1", "recordcount=many", "whole number"],
    ),
    case(
        &["run", "--ycsb", "{d}/ycsb-class", "--accesses", "10"],
        1,
        &["{d}/ycsb-class:1", "CoreWorkload"],
    ),
    case(
        &["run", "--ycsb", "{d}/ycsb-dist", "--accesses", "10"],
        1,
        &["{d}/ycsb-dist:1", "sequential", "expected uniform, zipfian"],
    ),
    case(
        &["run", "--ycsb", "{d}/ycsb-escape", "--accesses", "10"],
        1,
        &["{d}/ycsb-escape:2", "\\u", "hexadecimal"],
    ),
    case(
        &["run", "--ycsb", "{d}/no-such-workload", "--accesses", "10"],
        1,
        &[
            "--ycsb {d}/no-such-workload",
            "preset a, b, c, d, e or f",
            "properties file",
        ],
    ),
    case(
        &[
            "run",
            "--ycsb",
            "b",
            "--ycsb-property",
            "requestdistribution",
            "--accesses",
            "10",
        ],
        1,
        &["--ycsb-property requestdistribution", "KEY=VALUE"],
    ),
    case(
        &[
            "run",
            "--ycsb",
            "b",
            "--ycsb-property",
            "maxscanlength=0",
            "--accesses",
            "10",
        ],
        1,
        &["--ycsb-property", "maxscanlength=0", "at least 1"],
    ),
    case(
        &["run", "--workload", "fio", "--ycsb", "b", "--accesses", "10"],
        1,
        &["--ycsb", "expected --workload ycsb"],
    ),
    // --- fio job files (issue #12): file, line and what was expected
    case(
        &["run", "--fio", "{d}/bs.fio"],
        1,
        &["{d}/bs.fio:3", "bs=16k", "only 4 KiB"],
    ),
    case(
        &["run", "--fio", "{d}/direct.fio"],
        1,
        &["{d}/direct.fio:4", "direct=1", "page cache"],
    ),
    case(
        &["run", "--fio", "{d}/unknown.fio"],
        1,
        &["{d}/unknown.fio:3", "'frobnicate'", "expected one of rw, bs"],
    ),
    case(
        &["run", "--fio", "{d}/nojob.fio"],
        1,
        &["{d}/nojob.fio", "no job section"],
    ),
    case(&["run", "--fio", "{d}/no-such.fio"], 1, &["--fio {d}/no-such.fio"]),
    case(
        &["run", "--fio", "{d}/bs.fio", "--workload", "fio"],
        2,
        &["--fio", "--workload"],
    ),
    // --- bad policies, profiles, lru_gen bits, workloads
    case(
        &["run", "--policy", "lfu", "--accesses", "10"],
        1,
        &["'lfu'", "mglru", "classic", "opt"],
    ),
    case(&["run", "--policy", ",", "--accesses", "10"], 1, &["policy"]),
    case(&["bench", "--policy", "lfu", "{d}/good.lis"], 1, &["'lfu'", "classic"]),
    case(
        &["run", "--kernel", "5.15", "--accesses", "10"],
        1,
        &["5.15", "mainline", "6.1"],
    ),
    case(
        &["run", "--profile", "6.2", "--accesses", "10"],
        1,
        &["--profile", "'6.2'", "6.12", "7.2", "mainline"],
    ),
    case(
        &["run", "--switch", "vma_has_recncy=false", "--accesses", "10"],
        1,
        &[
            "--switch vma_has_recncy=false",
            "unknown MGLRU switch",
            "vma_has_recency, memcg_lru",
        ],
    ),
    case(
        &["run", "--switch", "vma_has_recency=maybe", "--accesses", "10"],
        1,
        &[
            "--switch vma_has_recency=maybe",
            "expected true or false, found 'maybe'",
        ],
    ),
    case(
        &["run", "--switch", "vma_has_recency", "--accesses", "10"],
        1,
        &["--switch vma_has_recency", "expected NAME=true or NAME=false"],
    ),
    case(
        &["exp", "--out", "out", "{d}/badswitch.toml"],
        1,
        &[
            "badswitch.toml",
            "8",
            "unknown MGLRU switch 'vma_has_recncy'",
            "vma_has_recency",
        ],
    ),
    case(
        &["exp", "--out", "out", "{d}/badswitchvalue.toml"],
        1,
        &[
            "badswitchvalue.toml",
            "8",
            "switch 'vma_has_recency': expected true or false, found \"no\"",
        ],
    ),
    // --- MGLRU-FG: policies with a profile of their own, [mglru.fg]
    case(
        &["run", "--policy", "mglru@6.2", "--accesses", "10"],
        1,
        &["--policy mglru@6.2", "unknown kernel profile '6.2'", "7.2", "mglru-fg"],
    ),
    case(
        &[
            "run",
            "--policy",
            "mglru@mglru-fg+fg_refault_distance=maybe",
            "--accesses",
            "10",
        ],
        1,
        &["fg_refault_distance", "expected true or false, found 'maybe'"],
    ),
    case(
        &["run", "--policy", "mglru-fg3", "--accesses", "10"],
        1,
        &["'mglru-fg3'", "mglru-fg", "mglru@PROFILE"],
    ),
    case(
        &["exp", "--out", "out", "{d}/badfg.toml"],
        1,
        &["badfg.toml:12", "reset_refs 8 is not below refs_max 7"],
    ),
    case(
        &["exp", "--out", "out", "{d}/badfgkey.toml"],
        1,
        &["badfgkey.toml:12", "reset_ref", "reset_refs"],
    ),
    case(
        &["run", "--lru-gen-enabled", "0xzz", "--accesses", "10"],
        1,
        &["--lru-gen-enabled", "'0xzz'", "0x7"],
    ),
    // kstrtouint rules: after a 0 (octal) or 0x (hex) prefix come digits, not a sign
    case(
        &["run", "--lru-gen-enabled", "0+5", "--accesses", "10"],
        1,
        &["--lru-gen-enabled", "'0+5'"],
    ),
    case(
        &["kernel", "--lru-gen-enabled", "maybe"],
        1,
        &["--lru-gen-enabled", "'maybe'"],
    ),
    case(&["kernel", "--lru", "lfu"], 1, &["--lru", "expected mglru or classic"]),
    case(
        &["run", "--workload", "kernel"],
        1,
        &["unknown workload 'kernel'", "kernel-build"],
    ),
    case(&["run", "--dist", "pareto"], 1, &["--dist", "'pareto'", "zipf:"]),
    case(
        &["run", "--device", "floppy", "--jobs", "2"],
        1,
        &["--device", "floppy"],
    ),
    case(&["run", "--cpus", "0"], 1, &["--cpus", "at least 1"]),
    case(
        &["run", "--sched-slice-ns", "-750000"],
        2,
        &["--sched-slice-ns", "non-negative whole number"],
    ),
    case(
        &["run", "--sched-slice-ns", "18446744073709551615", "--cpus", "1"],
        2,
        &["--sched-slice-ns", "at most 4294967295"],
    ),
    case(&["run", "--jobs", "0"], 1, &["--jobs", "at least 1"]),
    case(
        &["run", "--swappiness", "300", "--accesses", "10"],
        1,
        &["swappiness", "0..=200"],
    ),
    case(&["run", "--page-cluster", "32"], 2, &["--page-cluster", "32", "0..=31"]),
    case(
        &["run", "--thp", "sometimes"],
        2,
        &["--thp", "sometimes", "always, madvise or never"],
    ),
    case(
        &["run", "--workload", "anon", "--write-ratio", "-0.5"],
        1,
        &["write ratio", "[0, 1]"],
    ),
    // --- lrugen kernel --matrix FILE.toml: every bad matrix file names its line and what was expected
    case(
        &["kernel", "--matrix", "{d}/mx-syntax.toml", "--list"],
        1,
        &["{d}/mx-syntax.toml:2:", "expected a TOML matrix file"],
    ),
    case(
        &["kernel", "--matrix", "{d}/mx-topkey.toml", "--list"],
        1,
        &[
            "{d}/mx-topkey.toml:1:1:",
            "unknown key 'repeat'",
            "expected name, description, series",
        ],
    ),
    case(
        &["kernel", "--matrix", "{d}/mx-option.toml", "--list"],
        1,
        &[
            "{d}/mx-option.toml:6:1:",
            "unknown option 'sise'",
            "one of lrugen kernel's options",
            "size",
        ],
    ),
    case(
        &["kernel", "--matrix", "{d}/mx-series.toml", "--list"],
        1,
        &[
            "{d}/mx-series.toml:1:18:",
            "series",
            "'5.10'",
            "expected 6.1, 6.12 or 7",
        ],
    ),
    case(
        &["kernel", "--matrix", "{d}/mx-policy.toml", "--list"],
        1,
        &[
            "{d}/mx-policy.toml:2:13:",
            "unknown policy 'lfu'",
            "expected mglru or classic",
        ],
    ),
    case(
        &["kernel", "--matrix", "{d}/mx-value.toml", "--list"],
        1,
        &[
            "{d}/mx-value.toml:6:1:",
            "scenario 'a' (6.1 mglru)",
            "--advice",
            "expected random or normal",
        ],
    ),
    case(
        &["kernel", "--matrix", "{d}/mx-repeats.toml", "--list"],
        1,
        &[
            "{d}/mx-repeats.toml:3:11:",
            "repeats",
            "expected at least 1 boot per cell, found 0",
        ],
    ),
    case(
        &["kernel", "--matrix", "{d}/mx-axis.toml", "--list"],
        1,
        &["{d}/mx-axis.toml:6:1:", "'lru' cannot be set here", "policies"],
    ),
    case(
        &[
            "kernel",
            "--matrix",
            "{d}/mx-ok.toml",
            "--only-series",
            "6.12",
            "--list",
        ],
        1,
        &["--only-series 6.12", "not in {d}/mx-ok.toml", "expected one of 6.1"],
    ),
    case(
        &["kernel", "--matrix", "{d}/mx-ok.toml", "--jobs", "0"],
        1,
        &["--jobs", "at least 1"],
    ),
    case(
        &["kernel", "--matrix", "{d}/mx-ok.toml", "--fixtures", "{d}/nodir"],
        1,
        &["--fixtures {d}/nodir", "no such directory"],
    ),
    case(
        &["kernel", "--matrix", "{d}/mx-ok.toml", "--access", "anon"],
        2,
        &["--matrix", "cannot be used with", "--access"],
    ),
    case(&["kernel", "--matrix", "{d}/missing.toml"], 1, &["{d}/missing.toml"]),
    case(&["kernel", "--list"], 2, &["--matrix"]),
    case(&["kernel", "--every", "0"], 1, &["--every"]),
    case(&["kernel", "--write-ratio", "-1"], 1, &["--write-ratio", "0..=1"]),
    // --- issue #9, bounded memory: over the memory budget, refused before the run
    case(
        &[
            "run",
            "--trace",
            "{d}/huge.lis",
            "--capacity",
            "1000",
            "--memory-budget",
            "64M",
        ],
        1,
        &[
            "--trace {d}/huge.lis:1",
            "over the memory budget of 64 MiB",
            "--memory-budget",
        ],
    ),
    case(
        &["bench", "--memory-budget", "64M", "{d}/huge.lis"],
        1,
        &["{d}/huge.lis:1", "page references", "over the memory budget of 64 MiB"],
    ),
    case(
        &[
            "run",
            "--workload",
            "ycsb",
            "--records",
            "1e9",
            "--memory-budget",
            "64M",
        ],
        1,
        &[
            "--records 1000000000",
            "over the memory budget of 64 MiB",
            "(--memory-budget)",
        ],
    ),
    case(
        &[
            "run",
            "--size",
            "1T",
            "--accesses",
            "1e6",
            "--policy",
            "mglru",
            "--memory-budget",
            "1G",
        ],
        1,
        &[
            "--size 1T (x --files 4)",
            "--accesses 1000000",
            "over the memory budget of 1.0 GiB",
        ],
    ),
    case(
        &["run", "--workload", "anon", "--size", "256G", "--memory-budget", "64M"],
        1,
        &["--size 256G", "over the memory budget"],
    ),
    case(
        &["run", "--memory-budget", "0"],
        1,
        &["--memory-budget 0", "at least one page"],
    ),
    case(
        &["run", "--memory-budget", "lots"],
        1,
        &["--memory-budget", "bad size 'lots'"],
    ),
    case(
        &["bench", "--memory-budget", "-1G", "{d}/good.lis"],
        1,
        &["--memory-budget", "'-1G'"],
    ),
    // --- lrugen mrc: policies, sizes, sampling rates (issue #16 item 3)
    case(
        &["mrc", "{d}/good.lis", "--policy", "lru,nope"],
        1,
        &["unknown policy 'nope'", "expected one of", "classic", "s3fifo"],
    ),
    case(
        &["mrc", "{d}/good.lis", "--sizes", "100,0"],
        2,
        &["--sizes", "'0'", "expected at least 1 page"],
    ),
    case(
        &["mrc", "{d}/good.lis", "--sizes", "10,x"],
        2,
        &["--sizes", "'x'", "non-negative whole number"],
    ),
    case(
        &["mrc", "{d}/good.lis", "--sizes", "10", "--points", "4"],
        2,
        &["--sizes", "--points", "cannot be used with"],
    ),
    case(
        &["mrc", "{d}/good.lis", "--points", "0"],
        1,
        &["--points", "expected at least 1 size"],
    ),
    case(
        &["mrc", "{d}/good.lis", "--policy", "mglru", "--mini", "0"],
        2,
        &["--mini", "'0'", "expected a sampling rate in (0, 1]"],
    ),
    case(
        &["mrc", "{d}/good.lis", "--mini", "1.5"],
        2,
        &["--mini", "'1.5'", "expected a sampling rate in (0, 1]"],
    ),
    case(
        &["mrc", "{d}/good.lis", "--shards", "-0.1"],
        2,
        &["--shards", "'-0.1'", "expected a sampling rate in (0, 1]"],
    ),
    case(
        &["mrc", "{d}/good.lis", "--shards", "half"],
        2,
        &["--shards", "not a number", "expected a sampling rate"],
    ),
    case(
        &["mrc", "{d}/good.lis", "--policy", "opt,mglru", "--shards", "0.1"],
        1,
        &["--shards", "expected lru among --policy", "found opt,mglru"],
    ),
    case(
        &["mrc", "{d}/good.lis", "--policy", "lru,opt", "--mini", "0.1"],
        1,
        &["--mini", "expected mglru, classic or a zoo policy", "found lru,opt"],
    ),
    case(
        &["mrc", "{d}/missing.lis", "--policy", "lru"],
        1,
        &["{d}/missing.lis", "cannot open"],
    ),
    // --- traces
    case(
        &["traces", "fetch", "OLTP2", "--dir", "{d}/t"],
        1,
        &["unknown trace 'OLTP2'", "OLTP, P3, P12"],
    ),
    case(&["traces", "generate", "{d}/good.lis"], 1, &["{d}/good.lis", "exists"]),
    case(
        &["traces", "generate", "{d}/g.lis", "--keys", "0"],
        1,
        &["--keys", "found 0"],
    ),
    case(&["traces", "generate", "{d}/g.lis", "--dist", "zipf:x"], 1, &["--dist"]),
];

fn lrugen(args: &[String], cwd: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lrugen"))
        .args(args)
        .current_dir(cwd)
        .env_remove("RUST_BACKTRACE")
        // nothing is downloaded: a fetch that got this far would be refused here at once
        .env("LRUGEN_TRACES_BASE_URL", "http://127.0.0.1:1")
        .output()
        .expect("run lrugen")
}

/// The fixture folder (written anew): malformed traces of each format, a directory named like a
/// trace, a plain file where a directory is expected.
fn fixtures() -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join("lrugen-bad-inputs");
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(d.join("adir.lis")).unwrap();
    let w = |name: &str, bytes: &[u8]| std::fs::write(d.join(name), bytes).unwrap();
    w("good.lis", b"100 8 0 1\n200 1 0 2\n");
    w(
        "ctl-badfile.toml",
        b"[[action]]\nat = 5\nwrite = \"memory.maxx\"\nvalue = \"1M\"\n",
    );
    w(
        "ctl-novalue.toml",
        b"# no value\n[[action]]\nat = 5\nwrite = \"memory.max\"\n",
    );
    w("ctl-ok.toml", b"[[action]]\nat = 5\nread = \"lru_gen\"\n");
    w(
        "ctl-enabled.toml",
        b"[[action]]\nat = 5\nwrite = \"enabled\"\nvalue = \"n\"\n",
    );
    w("tiny.ops", b"lrugen-ops 1\nwindow 5\nfile 0 file0 64\nr 0 1\nr 0 2\n");
    w(
        "explain-mix.toml",
        b"policies = [\"classic\", \"mglru\"]\nprofiles = [\"7.2\"]\n[memcg]\nmax = \"1M\"\n\
          [workload]\nkind = \"fio\"\ndist = \"zipf:0.9\"\nfile_pages = \"2M\"\naccesses = 100\n\
          [engine]\ncpus = 2\njobs = 2\n",
    );
    let exp = |switch: &str| {
        format!(
            "policies = [\"mglru\"]\n[memcg]\nmax = 1000\n[mglru]\nprofile = \"7.2\"\n\
             [mglru.switches]\n# the switch\n{switch}\n[workload]\nkind = \"anon\"\npages = 2000\n\
             write_ratio = 0.5\ndist = {{ kind = \"uniform\" }}\naccesses = 10\n"
        )
    };
    w("badswitch.toml", exp("vma_has_recncy = false").as_bytes());
    w("badswitchvalue.toml", exp("vma_has_recency = \"no\"").as_bytes());
    let fg = |line: &str| {
        format!(
            "policies = [\"mglru\"]\nprofiles = [\"mglru-fg\"]\n[memcg]\nmax = 1000\n[workload]\nkind = \"anon\"\n\
             pages = 2000\nwrite_ratio = 0.5\ndist = {{ kind = \"uniform\" }}\naccesses = 10\n[mglru.fg]\n{line}\n"
        )
    };
    let switch_at = |value: &str| {
        format!(
            "policies = [\"mglru\"]\n[memcg]\nmax = 1000\n[mglru]\nswitch_at = [{{ step = 5, value = \"{value}\" }}]\n\
             [workload]\nkind = \"anon\"\npages = 2000\nwrite_ratio = 0.5\ndist = {{ kind = \"uniform\" }}\naccesses = 10\n"
        )
    };
    w("badswitchat.toml", switch_at("z").as_bytes());
    w("switchat.toml", switch_at("n").as_bytes());
    w("badfg.toml", fg("reset_refs = 8").as_bytes());
    w("badfgkey.toml", fg("reset_ref = 0").as_bytes());
    let mx = |extra: &str| {
        format!("series = [\"6.1\"]\npolicies = [\"mglru\"]\n[[scenario]]\nname = \"a\"\naccesses = 100\n{extra}")
    };
    w("mx-ok.toml", mx("").as_bytes());
    w("mx-syntax.toml", b"series = [\"6.1\"]\npolicies = [\"mglru\"\n");
    w("mx-topkey.toml", format!("repeat = 2\n{}", mx("")).as_bytes());
    w("mx-option.toml", mx("sise = \"4M\"\n").as_bytes());
    w(
        "mx-series.toml",
        mx("").replace("[\"6.1\"]", "[\"6.1\", \"5.10\"]").as_bytes(),
    );
    w("mx-policy.toml", mx("").replace("[\"mglru\"]", "[\"lfu\"]").as_bytes());
    w("mx-value.toml", mx("advice = \"sequential\"\n").as_bytes());
    w(
        "mx-repeats.toml",
        mx("")
            .replacen("[[scenario]]", "repeats = 0\n[[scenario]]", 1)
            .as_bytes(),
    );
    w("mx-axis.toml", mx("lru = \"classic\"\n").as_bytes());
    w("bad.lis", b"100 8 0 1\n200 1 0 2\n300 eight 0 3\n400 1 0 4\n");
    w("bs.fio", b"[j]\nsize=1m\nbs=16k\n");
    w("direct.fio", b"[global]\ndirect=0\n[j]\ndirect=1\nsize=1m\n");
    w("unknown.fio", b"[j]\nsize=1m\nfrobnicate=1\n");
    w("nojob.fio", b"[global]\nsize=1m\n");
    w("ycsb-unknown", b"recordcount=1000\n# typo below\nreadproprtion=0.5\n");
    w("ycsb-badvalue", b"readproportion=0.5\nupdateproportion=lots\n");
    w("ycsb-target", b"recordcount=1000\ntarget=1000\n");
    w("ycsb-fieldlen", b"fieldlengthdistribution=zipfian\n");
    w("ycsb-records", b"recordcount=many\n");
    w("ycsb-class", b"workload=site.ycsb.workloads.TimeSeriesWorkload\n");
    w("ycsb-dist", b"requestdistribution=sequential\n");
    w("ycsb-escape", b"recordcount=100\nfieldnameprefix=\\u00zz\n");
    w("empty.lis", b"");
    // one ARC line asking for a run of 10^11 blocks
    w("huge.lis", b"0 99999999999 0 0\n");
    w("noname.bin", b"\x01\x02\x03 not a trace of any kind\n");
    w("a-file", b"not a directory\n");
    w(
        "bad.iolog",
        b"fio version 2 iolog\n/data/a add\n/data/a read many 4096\n",
    );
    w("bad.lackey", b" L 04222cac,4\n L zz-not-hex,4\n");
    w("good.lackey", b" L 04222cac,4\n S 04222cb0,8\n");
    w("high.index32", &[1, 0, 0, 0, 2, 0, 0, 0x80]);
    w("cut.index64", &[1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0]);
    w(
        "bad.csv",
        b"version,time,op,size,lbn\n1,5633898,2a,512,42932745\n1,5633898,2a,lots,42932746\n",
    );
    let rec = |id: u64| {
        let mut b = 1u32.to_le_bytes().to_vec();
        b.extend_from_slice(&id.to_le_bytes());
        b.extend_from_slice(&4096u32.to_le_bytes());
        b.extend_from_slice(&(-1i64).to_le_bytes());
        b
    };
    let mut oracle = rec(1);
    oracle.extend_from_slice(&rec(2)[..10]);
    w("cut.oracleGeneral.bin", &oracle);
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("../lrugen-trace/tests/data");
    let lcs = std::fs::read(data.join("tiny-v1.lcs")).unwrap();
    w("cut.lcs", &lcs[..lcs.len() - 7]);
    let lrugen = std::fs::read(data.join("tiny.lrugen")).unwrap();
    w("cut.lrugen", &lrugen[..lrugen.len() - 5]);
    d
}

/// Every path under `dir`, sorted.
fn tree(dir: &Path) -> Vec<PathBuf> {
    let mut v = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            v.extend(tree(&p));
        }
        v.push(p);
    }
    v.sort();
    v
}

#[test]
fn bad_inputs_are_refused_clearly_and_leave_nothing_behind() {
    assert!(CASES.len() >= 40, "the table has {} rows", CASES.len());
    let d = fixtures();
    let ds = d.to_str().unwrap();
    let cwd = Path::new(env!("CARGO_TARGET_TMPDIR")).join("lrugen-bad-inputs-cwd");
    let _ = std::fs::remove_dir_all(&cwd);
    std::fs::create_dir_all(&cwd).unwrap();
    let before = tree(&d);
    let mut failures = Vec::new();
    for c in CASES {
        let args: Vec<String> = c.args.iter().map(|a| a.replace("{d}", ds)).collect();
        let cmd = format!("lrugen {}", args.join(" "));
        let o = lrugen(&args, &cwd);
        let err = String::from_utf8_lossy(&o.stderr).into_owned();
        let mut why = Vec::new();
        if o.status.code() != Some(c.code) {
            why.push(format!("exit status {} (expected {})", o.status, c.code));
        }
        if err.contains("panicked") || err.contains("RUST_BACKTRACE") {
            why.push("panicked".into());
        }
        for n in c.needles {
            let n = n.replace("{d}", ds);
            if !err.contains(&n) {
                why.push(format!("stderr lacks {n:?}"));
            }
        }
        if !o.stdout.is_empty() && c.code == 2 {
            why.push("printed on stdout".into());
        }
        let left = tree(&cwd);
        if !left.is_empty() {
            why.push(format!("left behind {left:?}"));
            let _ = std::fs::remove_dir_all(&cwd);
            std::fs::create_dir_all(&cwd).unwrap();
        }
        if tree(&d) != before {
            why.push(format!("changed the fixtures: {:?}", tree(&d)));
        }
        if !why.is_empty() {
            failures.push(format!("{cmd}: {}\n  stderr: {err}", why.join("; ")));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} bad inputs:\n{}",
        failures.len(),
        CASES.len(),
        failures.join("\n")
    );
}

/// A malformed line deep in a trace (past several chunks of the temporary copy of its ids, which
/// the runs read back) is found before any run: the error names the file and the line, and
/// nothing is printed on stdout, with or without `--json`.
#[test]
fn a_bad_line_deep_in_a_trace_leaves_no_result() {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join("lrugen-bad-late-line");
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    let bad_line = 300_001;
    let mut text = String::new();
    for i in 1..bad_line {
        text.push_str(&format!("{} 1 0 {i}\n", i % 5000));
    }
    text.push_str("12 x 0 0\n7 1 0 1\n");
    let path = d.join("late.lis");
    std::fs::write(&path, text).unwrap();
    let p = path.to_str().unwrap().to_string();
    for json in [false, true] {
        let mut args: Vec<String> = ["run", "--trace", &p, "--capacity", "100"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        if json {
            args.push("--json".into());
        }
        let o = lrugen(&args, &d);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{err}");
        assert!(err.contains(&format!("{p}:{bad_line}: expected ")), "{err}");
        assert!(o.stdout.is_empty(), "{}", String::from_utf8_lossy(&o.stdout));
        assert!(!err.contains("panicked"), "{err}");
    }
}

/// `lrugen run --json | head`: the reader goes away; lrugen ends quietly, without a panic.
#[test]
fn a_closed_pipe_ends_quietly() {
    use std::process::Stdio;
    let mut child = Command::new(env!("CARGO_BIN_EXE_lrugen"))
        .args([
            "run",
            "--json",
            "--size",
            "8M",
            "--capacity",
            "2048",
            "--accesses",
            "20000",
            "--vmstat",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take()); // as `head` exits
    let o = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!err.contains("panicked") && !err.contains("Broken pipe"), "{err}");
    assert_eq!(o.status.code(), Some(0), "{err}");
}

/// A `--debugfs-write` whose generation is refused at the end of the run keeps the run: the table
/// is printed, then the error, and the exit status says it failed.
#[test]
fn a_refused_debugfs_write_keeps_the_results() {
    let cwd = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let args: Vec<String> = [
        "run",
        "--policy",
        "mglru,lru",
        "--accesses",
        "100",
        "--debugfs-write",
        "- 2 0 9",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let o = lrugen(&args, cwd);
    let (out, err) = (String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        out.lines().any(|l| l.starts_with("mglru ")) && out.lines().any(|l| l.starts_with("lru ")),
        "{out}"
    );
    assert!(
        err.contains("--debugfs-write: mglru: writing '- 2 0 9' to lru_gen")
            && err.contains("`- 2 0 9`")
            && err.contains("expected a generation at most max_seq − 2 = 1, found 9"),
        "{err}"
    );
}

/// The `--debugfs-write` examples of `lrugen run --help` run as written.
#[test]
fn the_debugfs_write_help_examples_work() {
    let o = lrugen(&["run".into(), "--help".into()], Path::new(env!("CARGO_TARGET_TMPDIR")));
    let help = String::from_utf8_lossy(&o.stdout)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    let ex = help
        .split('`')
        .find(|s| s.starts_with("lrugen run") && s.contains("--debugfs-write"))
        .unwrap_or_else(|| panic!("no example in:\n{help}"));
    // `lrugen run ... --debugfs-write "- 2 0 1 200 1024"`, and the `+ 2 0 3` the text names
    let (head, cmds) = ex.split_once(" --debugfs-write ").unwrap();
    let args: Vec<String> = head.split(' ').skip(1).map(String::from).collect();
    for c in [cmds.trim_matches('"'), "+ 2 0 3"] {
        assert!(help.contains(&format!("`{c}`")), "{c} is named in the help");
        let mut a = args.clone();
        a.extend(["--debugfs-write".into(), c.into()]);
        let o = lrugen(&a, Path::new(env!("CARGO_TARGET_TMPDIR")));
        assert!(o.status.success(), "{a:?}: {}", String::from_utf8_lossy(&o.stderr));
        let out = String::from_utf8_lossy(&o.stdout);
        assert!(out.contains("lru_gen after 100000 accesses"), "{out}");
    }
}

/// Bad inputs of `lrugen exp` and `lrugen kernel` around their output directories, as a table:
/// each case sets up a scratch folder, runs the command, and asserts the exit status, a message
/// naming the flag (or the file) and what was expected, no panic, and that nothing was left
/// behind: the scratch folder is exactly as the case set it up (no output, no partial or
/// temporary directory), and no path outside it was created.
mod outputs {

    use std::path::{Path, PathBuf};
    use std::process::{Command, Output};

    fn lrugen(args: &[String], env: &[(&str, &str)]) -> Output {
        let mut c = Command::new(env!("CARGO_BIN_EXE_lrugen"));
        c.args(args);
        for (k, v) in env {
            c.env(k, v);
        }
        c.output().expect("run lrugen")
    }

    /// Every path under `dir` (files and folders), relative, sorted, with each file's bytes.
    fn snapshot(dir: &Path) -> Vec<(String, Option<Vec<u8>>)> {
        fn walk(base: &Path, d: &Path, out: &mut Vec<(String, Option<Vec<u8>>)>) {
            for e in std::fs::read_dir(d).unwrap() {
                let p = e.unwrap().path();
                let rel = p.strip_prefix(base).unwrap().to_string_lossy().into_owned();
                if p.is_dir() {
                    out.push((rel + "/", None));
                    walk(base, &p, out);
                } else {
                    out.push((rel, Some(std::fs::read(&p).unwrap())));
                }
            }
        }
        let mut out = Vec::new();
        walk(dir, dir, &mut out);
        out.sort();
        out
    }

    /// A small experiment: 2 sweep points × 3 policies × 2 repetitions = 12 cells, quick each.
    const TINY: &str = include_str!("data/small.toml");

    fn s(x: impl AsRef<std::ffi::OsStr>) -> String {
        x.as_ref().to_string_lossy().into_owned()
    }

    /// `exp TINY --out OUT` with `more` arguments, in scratch folder `d`.
    fn exp_args(d: &Path, out: impl AsRef<std::ffi::OsStr>, more: &[&str]) -> Vec<String> {
        let mut a = vec![
            "exp".into(),
            s(d.join("tiny.toml")),
            "--out".into(),
            s(out),
            "--no-plots".into(),
        ];
        a.extend(more.iter().map(|m| m.to_string()));
        a
    }

    /// An interrupted run of TINY into `d/out` (its partial directory stays).
    fn interrupted(d: &Path) {
        let o = lrugen(
            &exp_args(d, d.join("out"), &["--threads", "1"]),
            &[("LRUGEN_EXP_STOP_AFTER", "2")],
        );
        assert_eq!(o.status.code(), Some(130), "{}", String::from_utf8_lossy(&o.stderr));
        assert!(d.join("out.partial/cells").is_dir());
    }

    /// A kernel run that fails on its --out before booting (the built-in workload, nothing else).
    fn kernel_args(out: impl AsRef<std::ffi::OsStr>, more: &[&str]) -> Vec<String> {
        let mut a = vec![
            "kernel".into(),
            "--accesses".into(),
            "1000".into(),
            "--out".into(),
            s(out),
        ];
        a.extend(more.iter().map(|m| m.to_string()));
        a
    }

    /// What a case's setup gives: the arguments, extra environment, and paths outside the scratch
    /// folder that must not exist afterwards.
    type Setup = (Vec<String>, Vec<(&'static str, &'static str)>, Vec<PathBuf>);

    struct Case {
        name: &'static str,
        /// Set up the scratch folder.
        setup: fn(&Path) -> Setup,
        /// Expected exit status.
        code: i32,
        /// Each must be in stderr.
        needles: &'static [&'static str],
    }

    fn cases() -> Vec<Case> {
        vec![
            Case {
                name: "over the memory budget",
                setup: |d| (exp_args(d, d.join("out"), &["--memory-budget", "4K"]), vec![], vec![]),
                code: 1,
                needles: &[
                    "tiny.toml: sweep point",
                    "over the memory budget of 4.0 KiB",
                    "--memory-budget",
                ],
            },
            Case {
                name: "out is an existing file",
                setup: |d| {
                    std::fs::write(d.join("f.txt"), "x").unwrap();
                    (exp_args(d, d.join("f.txt"), &[]), vec![], vec![])
                },
                code: 1,
                needles: &["--out ", "f.txt", "is a file: expected a directory"],
            },
            Case {
                name: "out under a file",
                setup: |d| {
                    std::fs::write(d.join("f.txt"), "x").unwrap();
                    (exp_args(d, d.join("f.txt/sub/out"), &[]), vec![], vec![])
                },
                code: 1,
                needles: &["--out ", "f.txt is a file: expected a directory path"],
            },
            Case {
                name: "exp --full without a [full] table",
                setup: |d| (exp_args(d, d.join("out"), &["--full"]), vec![], vec![]),
                code: 1,
                needles: &["--full: ", "has no [full] table", "published setup"],
            },
            Case {
                name: "out under a device",
                setup: |d| (exp_args(d, "/dev/null/out", &[]), vec![], vec![]),
                code: 1,
                needles: &["--out /dev/null/out", "/dev/null is a file: expected a directory path"],
            },
            Case {
                name: "out in /proc",
                setup: |d| {
                    (
                        exp_args(d, "/proc/lrugen-test-out", &[]),
                        vec![],
                        vec!["/proc/lrugen-test-out".into(), "/proc/lrugen-test-out.partial".into()],
                    )
                },
                code: 1,
                needles: &[
                    "--out /proc/lrugen-test-out",
                    "cannot create",
                    "expected a place where a directory can be created",
                ],
            },
            Case {
                name: "out of a name that is no name",
                setup: |d| (exp_args(d, "..", &[]), vec![], vec![]),
                code: 1,
                needles: &["--out ..", "expected a directory path that ends in a name"],
            },
            Case {
                name: "non-empty foreign directory without --force",
                setup: |d| {
                    std::fs::create_dir(d.join("out")).unwrap();
                    std::fs::write(d.join("out/thesis.tex"), "mine").unwrap();
                    (exp_args(d, d.join("out"), &[]), vec![], vec![])
                },
                code: 1,
                needles: &[
                    "--out ",
                    "is not empty and was not written by lrugen exp",
                    "give --force",
                ],
            },
            Case {
                name: "directory written by lrugen kernel",
                setup: |d| {
                    std::fs::create_dir(d.join("out")).unwrap();
                    std::fs::write(
                        d.join("out/.lrugen-kernel.json"),
                        r#"{"written_by":"lrugen kernel","lrugen_version":"0","complete":true,"of":{},"files":["report.json"]}"#,
                    )
                    .unwrap();
                    std::fs::write(d.join("out/report.json"), "{}").unwrap();
                    (exp_args(d, d.join("out"), &[]), vec![], vec![])
                },
                code: 1,
                needles: &["--out ", "was written by lrugen kernel, not lrugen exp", "give --force"],
            },
            Case {
                name: "own directory with a file added by hand",
                setup: |d| {
                    let o = lrugen(&exp_args(d, d.join("out"), &[]), &[]);
                    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
                    std::fs::write(d.join("out/notes.txt"), "mine").unwrap();
                    (exp_args(d, d.join("out"), &[]), vec![], vec![])
                },
                code: 1,
                needles: &[
                    "--out ",
                    "holds files lrugen exp did not write (notes.txt)",
                    "give --force",
                ],
            },
            Case {
                name: "a foreign directory named like the partial directory",
                setup: |d| {
                    std::fs::create_dir(d.join("out.partial")).unwrap();
                    std::fs::write(d.join("out.partial/x"), "mine").unwrap();
                    (exp_args(d, d.join("out"), &["--force"]), vec![], vec![])
                },
                code: 1,
                needles: &[
                    "--out ",
                    "out.partial exists and was not written by lrugen exp",
                    "expected no such",
                ],
            },
            Case {
                name: "--threads 99999",
                setup: |d| (exp_args(d, d.join("out"), &["--threads", "99999"]), vec![], vec![]),
                code: 1,
                needles: &["--threads 99999", "expected at most 1024 worker threads"],
            },
            Case {
                name: "--threads 0",
                setup: |d| (exp_args(d, d.join("out"), &["--threads", "0"]), vec![], vec![]),
                code: 1,
                needles: &["--threads 0", "expected at least 1 thread"],
            },
            Case {
                name: "--threads -1",
                setup: |d| (exp_args(d, d.join("out"), &["--threads=-1"]), vec![], vec![]),
                code: 2,
                needles: &["--threads", "-1"],
            },
            Case {
                name: "--resume with nothing to resume",
                setup: |d| (exp_args(d, d.join("out"), &["--resume"]), vec![], vec![]),
                code: 1,
                needles: &["--resume: nothing to resume", "out.partial"],
            },
            Case {
                name: "--resume after a complete run",
                setup: |d| {
                    let o = lrugen(&exp_args(d, d.join("out"), &[]), &[]);
                    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
                    (exp_args(d, d.join("out"), &["--resume"]), vec![], vec![])
                },
                code: 1,
                needles: &["--resume: nothing to resume", "holds a complete run"],
            },
            Case {
                name: "--resume with a changed experiment file",
                setup: |d| {
                    interrupted(d);
                    std::fs::write(d.join("tiny.toml"), TINY.replace("accesses = 3000", "accesses = 3001")).unwrap();
                    (exp_args(d, d.join("out"), &["--resume"]), vec![], vec![])
                },
                code: 1,
                needles: &[
                    "--resume: ",
                    "out.partial is of another run",
                    "file_fnv1a64 was",
                    "expected the same experiment file",
                ],
            },
            Case {
                name: "--resume with a corrupt cell file",
                setup: |d| {
                    interrupted(d);
                    std::fs::write(d.join("out.partial/cells/c000000.json"), "{\"index\": ").unwrap();
                    (exp_args(d, d.join("out"), &["--resume"]), vec![], vec![])
                },
                code: 1,
                needles: &["--resume: ", "c000000.json", "expected a cell file lrugen wrote"],
            },
            Case {
                name: "an interrupted run, started again without --resume",
                setup: |d| {
                    interrupted(d);
                    (exp_args(d, d.join("out"), &[]), vec![], vec![])
                },
                code: 1,
                needles: &["--out ", "holds an interrupted run", "--resume", "--force"],
            },
            Case {
                name: "bad stop-after value (test hook)",
                setup: |d| {
                    (
                        exp_args(d, d.join("out"), &[]),
                        vec![("LRUGEN_EXP_STOP_AFTER", "soon")],
                        vec![],
                    )
                },
                code: 1,
                needles: &["LRUGEN_EXP_STOP_AFTER=soon", "expected a number of cells"],
            },
            Case {
                name: "reference caches in a multi-task experiment",
                setup: |d| {
                    let t = TINY.to_string() + "[engine]\njobs = 4\n";
                    std::fs::write(d.join("tiny.toml"), t).unwrap();
                    (exp_args(d, d.join("out"), &[]), vec![], vec![])
                },
                code: 1,
                needles: &[
                    "tiny.toml:4:",
                    "policy 'lru' cannot run here",
                    "engine.jobs = 4",
                    "expected only mglru and classic",
                ],
            },
            Case {
                name: "kernel: out is an existing file",
                setup: |d| {
                    std::fs::write(d.join("f.txt"), "x").unwrap();
                    (kernel_args(d.join("f.txt"), &[]), vec![], vec![])
                },
                code: 1,
                needles: &["--out ", "f.txt", "is a file: expected a directory"],
            },
            Case {
                name: "kernel: out in /proc",
                setup: |_| {
                    (
                        kernel_args("/proc/lrugen-test-kout", &[]),
                        vec![],
                        vec!["/proc/lrugen-test-kout".into(), "/proc/lrugen-test-kout.partial".into()],
                    )
                },
                code: 1,
                needles: &["--out /proc/lrugen-test-kout", "cannot create"],
            },
            Case {
                name: "kernel: non-empty foreign directory without --force",
                setup: |d| {
                    std::fs::create_dir(d.join("out")).unwrap();
                    std::fs::write(d.join("out/thesis.tex"), "mine").unwrap();
                    (kernel_args(d.join("out"), &[]), vec![], vec![])
                },
                code: 1,
                needles: &[
                    "--out ",
                    "is not empty and was not written by lrugen kernel",
                    "give --force",
                ],
            },
            Case {
                name: "kernel: a directory lrugen exp wrote",
                setup: |d| {
                    let o = lrugen(&exp_args(d, d.join("out"), &[]), &[]);
                    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
                    (kernel_args(d.join("out"), &[]), vec![], vec![])
                },
                code: 1,
                needles: &["--out ", "was written by lrugen exp, not lrugen kernel"],
            },
            Case {
                name: "kernel: --force without --out",
                setup: |_| (vec!["kernel".into(), "--force".into()], vec![], vec![]),
                code: 2,
                needles: &["--out"],
            },
        ]
    }

    #[test]
    fn bad_output_inputs_are_refused_and_leave_nothing_behind() {
        let cases = cases();
        assert!(cases.len() >= 20, "{} cases", cases.len());
        let mut failures = Vec::new();
        for c in &cases {
            let d = tempfile::tempdir().unwrap();
            std::fs::write(d.path().join("tiny.toml"), TINY).unwrap();
            let (args, env, outside) = (c.setup)(d.path());
            let before = snapshot(d.path());
            let o = lrugen(&args, &env);
            let err = String::from_utf8_lossy(&o.stderr).into_owned();
            let mut why = Vec::new();
            if o.status.code() != Some(c.code) {
                why.push(format!("exit status {:?}, expected {}", o.status.code(), c.code));
            }
            for n in c.needles {
                if !err.contains(n) {
                    why.push(format!("stderr lacks {n:?}"));
                }
            }
            if err.contains("panicked") || err.contains("RUST_BACKTRACE") {
                why.push("it panicked".into());
            }
            if snapshot(d.path()) != before {
                let now: Vec<String> = snapshot(d.path()).into_iter().map(|x| x.0).collect();
                why.push(format!("the scratch folder changed: {now:?}"));
            }
            for p in &outside {
                if p.exists() {
                    why.push(format!("{} was created", p.display()));
                }
            }
            if !why.is_empty() {
                failures.push(format!("{}: {}\n  {:?}\n  stderr: {err}", c.name, why.join("; "), args));
            }
        }
        assert!(failures.is_empty(), "{}", failures.join("\n"));
    }
}
