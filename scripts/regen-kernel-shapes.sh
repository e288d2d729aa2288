#!/bin/sh
# Regenerate the real-kernel shape fixtures of crates/lrugen-kernel/tests/fixtures/shapes/ with
# `lrugen kernel --matrix examples/kernel-matrix/shapes.toml --fixtures DIR`: seven workload shapes
# on Debian 6.1, 6.12 and 7.2 (the newest package of each series), MGLRU and classic; 42 boots of
# qemu (TCG, -icount), two at a time (JOBS), about 20 minutes on 2 cores. Each fixture records the
# `lrugen kernel` command it equals (`--matrix ... --list` prints them all without booting).
# Needs: apt-get install qemu-system-x86 busybox-static e2fsprogs cpio zstd xz-utils kmod
# Usage: scripts/regen-kernel-shapes.sh [SHAPE...] (default: all; the scenarios of shapes.toml)
# Environment: SERIES (default: the matrix's, "6.1 6.12 7.2"), LRUS (default "mglru classic"),
# JOBS (VMs at a time, default 2).
set -eu
cd "$(dirname "$0")/.."
RUSTFLAGS="-C target-feature=+crt-static" cargo build --release -p lrugen-replay --target x86_64-unknown-linux-gnu
cargo build --release -p lrugen-cli
export LRUGEN_REPLAYER="$PWD/target/x86_64-unknown-linux-gnu/release/lrugen-replay"
F=crates/lrugen-kernel/tests/fixtures/shapes
mkdir -p "$F"
comma() { echo "$*" | tr ' ' ','; }
only=""
[ $# -gt 0 ] && only="$only --only-scenarios $(comma "$@")"
[ -n "${SERIES:-}" ] && only="$only --only-series $(comma $SERIES)"
[ -n "${LRUS:-}" ] && only="$only --only-policies $(comma $LRUS)"
# shellcheck disable=SC2086
target/release/lrugen kernel --matrix examples/kernel-matrix/shapes.toml --fixtures "$F" --jobs "${JOBS:-2}" $only
# further boots of the shapes whose kernel moves between boots by more than their tolerance
# (MGLRU anon-gauss on three kernels, classic hot-cold on 6.12 and 7.2, MGLRU's mixed shapes on
# 7.2, MGLRU mmap-random on 6.1, MGLRU and classic mmap-normal on 7.2: 4 more each, judged
# together with the fixture; tests/shapes.rs)
boots() { # "SHAPE..." "LRU..." MATRIX SERIES...
    shapes=$1 lrus=$2 matrix=$3
    shift 3
    # the LRUs asked for (LRUS) that this matrix has
    pols=""
    for l in $lrus; do
        case " ${LRUS:-mglru classic} " in *" $l "*) pols="$pols $l" ;; esac
    done
    [ -n "$pols" ] || return 0
    # the shapes asked for (arguments) that this matrix has
    want=""
    for sh in $shapes; do
        if [ -z "$only_shapes" ] || echo " $only_shapes " | grep -q " $sh "; then want="$want $sh"; fi
    done
    [ -n "$want" ] || return 0
    # the kernels asked for (SERIES) that this matrix has
    series=""
    for s in ${SERIES:-$*}; do
        case " $* " in *" $s "*) series="$series $s" ;; esac
    done
    [ -n "$series" ] || return 0
    mkdir -p "$F/boots"
    # shellcheck disable=SC2086
    target/release/lrugen kernel --matrix "examples/kernel-matrix/$matrix" --fixtures "$F/boots" --jobs "${JOBS:-2}" \
        --only-scenarios "$(comma $want)" --only-series "$(comma $series)" --only-policies "$(comma $pols)"
}
only_shapes="$*"
boots anon-gauss mglru shapes-boots.toml 6.1 6.12 7.2
boots hot-cold classic shapes-boots-classic.toml 6.12 7.2
boots "mixed-swappiness10 mixed-swappiness100" mglru shapes-boots-mixed.toml 7.2
boots mmap-random mglru shapes-boots-mmap-random.toml 6.1
boots mmap-normal "mglru classic" shapes-boots-mmap-normal.toml 7.2
# the suspects: workloads once reported as model defects, kept as fixtures of their own
# (crates/lrugen-kernel/tests/shapes.rs); with the default shape list only
if [ $# -eq 0 ]; then
    mkdir -p crates/lrugen-kernel/tests/fixtures/suspects
    # issue 11, item 5: MADV_RANDOM uniform loads at 1.5x the memcg, Debian 6.1 MGLRU
    target/release/lrugen kernel --series 6.1 --lru mglru --memcg-max 32M --seed 1 --access mmap --size 48M \
        --accesses 100000 --dist uniform --advice random \
        --fixture crates/lrugen-kernel/tests/fixtures/suspects/debian-6.1-mglru-mmap-random-1.5x.json
fi
