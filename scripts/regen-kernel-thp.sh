#!/bin/sh
# Regenerate the real-kernel THP fixtures of crates/lrugen-kernel/tests/fixtures/thp/ (docs/thp.md,
# "Real-kernel fixtures"; tests/thp.rs compares the model with them): an anon Gaussian workload of
# 36 MiB (18 aligned 2 MiB regions) in a memcg of 32 MiB with 64 MiB of swap on zram, on Debian
# 6.1, 6.12 and 7.2 (the newest package of each series), MGLRU and classic, under
# transparent_hugepage never and madvise with the regions advised MADV_HUGEPAGE by the replayer
# (--madv-hugepage: the same op file under both knobs), and under always with no advice (the
# fault's GFP_TRANSHUGE_LIGHT: no reclaim for a THP's allocation or charge), and a second boot of
# MGLRU on 6.12 and 7.2 under boots/ (whose runs move from boot to boot): 24 boots of qemu (TCG,
# -icount), two at a time, about 8 minutes on 2 cores. Each fixture records the `lrugen kernel`
# command it equals.
# Needs: apt-get install qemu-system-x86 busybox-static e2fsprogs cpio zstd xz-utils kmod
# Environment: SERIES (default "6.1 6.12 7.2"), LRUS (default "mglru classic"), KNOBS (default
# "never madvise always").
set -eu
cd "$(dirname "$0")/.."
RUSTFLAGS="-C target-feature=+crt-static" cargo build --release -p lrugen-replay --target x86_64-unknown-linux-gnu
cargo build --release -p lrugen-cli
export LRUGEN_REPLAYER="$PWD/target/x86_64-unknown-linux-gnu/release/lrugen-replay"
F=crates/lrugen-kernel/tests/fixtures/thp
mkdir -p "$F"
one() { # SERIES LRU KNOB [FIXTURE]
    advise=--madv-hugepage
    if [ "$3" = always ]; then advise=""; fi
    # shellcheck disable=SC2086 # $advise is one flag or none
    target/release/lrugen kernel --series "$1" --lru "$2" --memcg-max 32M --seed 1 --access anon \
        --anon-size 36M --accesses 100000 --dist gauss:25 --swap zram --swap-size 64M \
        $advise --thp "$3" --fixture "${4:-$F/debian-$1-$2-anon-thp-$3.json}" >/dev/null
}
for s in ${SERIES:-6.1 6.12 7.2}; do
    for t in ${KNOBS:-never madvise always}; do
        pids=""
        for l in ${LRUS:-mglru classic}; do
            one "$s" "$l" "$t" &
            pids="$pids $!"
        done
        for p in $pids; do wait "$p"; done
    done
done
mkdir -p "$F/boots"
for s in 6.12 7.2; do
    case " ${SERIES:-6.1 6.12 7.2} " in *" $s "*) ;; *) continue ;; esac
    case " ${LRUS:-mglru classic} " in *" mglru "*) ;; *) continue ;; esac
    pids=""
    for t in ${KNOBS:-never madvise always}; do
        one "$s" mglru "$t" "$F/boots/debian-$s-mglru-anon-thp-$t-boot1.json" &
        pids="$pids $!"
    done
    for p in $pids; do wait "$p"; done
done
