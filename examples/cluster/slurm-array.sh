#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# An lrugen experiment as a Slurm array job: array task K of N runs slice K/N of the matrix
# (`lrugen exp FILE --shard K/N`, the cells whose index modulo N is K) into OUT.slices/K; a last
# step merges the N slices into OUT, byte for byte what `lrugen exp FILE --out OUT` writes
# (docs/experiments.md, "Sharding"). `lrugen` must be on PATH on the nodes, and FILE and OUT on a
# file system they share, under the same paths.
#
#   jid=$(sbatch --parsable --array=0-7 examples/cluster/slurm-array.sh examples/fio-zipf.toml results/fio-zipf)
#   sbatch --dependency=afterok:$jid examples/cluster/slurm-array.sh --merge results/fio-zipf
#
# The array must be numbered from 0 with step 1 (`--array=0-(N-1)`, any `%limit`): K is the task's
# id minus the array's first, N the array's task count. A requeued task (preemption, node failure)
# continues its slice where it stopped (--resume of the finished cells in OUT.slices/K.partial).
#SBATCH --job-name=lrugen-exp
#SBATCH --cpus-per-task=2
#SBATCH --output=lrugen-exp-%A_%a.out
#SBATCH --requeue
set -euo pipefail

if [ "${1:-}" = --merge ]; then
    out=${2:?usage: slurm-array.sh --merge OUT}
    exec lrugen exp merge "$out".slices/* --out "$out"
fi

exp=${1:?usage: sbatch --array=0-N-1 slurm-array.sh FILE OUT}
out=${2:?usage: sbatch --array=0-N-1 slurm-array.sh FILE OUT}
k=$((SLURM_ARRAY_TASK_ID - ${SLURM_ARRAY_TASK_MIN:-0}))
n=${SLURM_ARRAY_TASK_COUNT:?not an array task: submit with sbatch --array=0-N-1}
slice="$out.slices/$k"
mkdir -p "$out.slices"
resume=()
if [ -d "$slice.partial" ]; then resume=(--resume); fi
exec lrugen exp "$exp" --shard "$k/$n" --out "$slice" --threads "${SLURM_CPUS_PER_TASK:-1}" "${resume[@]}"
