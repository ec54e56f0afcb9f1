#!/usr/bin/env bash
# Issue 21 on a quiet machine with cores to spare (the GPU machine's 16 CPU cores, nothing else running): the
# straggler sweep at 5% and 10% on 2 and 4 gloo ranks, beside the straggler watch on the GPU as main has it.
#
#   bash benchmarks/gpu/straggler_quiet.sh OUT_FOLDER        # from the repository root, about 6 minutes
#
# The sweep runs on the upper half of the machine's cores (taskset), the GPU run on the lower half, so neither
# takes the other's CPU. OUT_FOLDER/sweep.txt: the sweep's table; OUT_FOLDER/kept/: every run's raw windows
# (straggler_replay.py judges them again); OUT_FOLDER/gpu.txt and gpu-stragglers/: the GPU run.
set -u
OUT=$(realpath "${1:?usage: straggler_quiet.sh OUT_FOLDER}")
mkdir -p "$OUT/kept"
export PYTHONPATH=$PWD/src:$PWD/benchmarks${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1
PY=${PYTHON:-python3}
CORES=$(nproc)
HALF=$((CORES / 2))
echo "straggler_quiet.sh on $(hostname) at $(date -u +%FT%TZ): $CORES cores, load $(cut -d' ' -f1-3 /proc/loadavg)" \
    | tee "$OUT/steps.txt"
(
    BACKEND=gloo STEPS=150 SLOW_RANK=1 AMOUNT=0.3 SLOW_FROM=40 timeout -k 10 150 \
        taskset -c 0-$((HALF - 1)) $PY -m torchdoctor launch --stragglers --stragglers-dir "$OUT/gpu-stragglers" \
        --nproc-per-node 2 benchmarks/gpu/ddp_train.py >"$OUT/gpu.txt" 2>&1
    echo "gpu run: exit $? at $(date -u +%T)" | tee -a "$OUT/steps.txt"
) &
timeout -k 10 "${SWEEP_SECONDS:-330}" taskset -c "$HALF-$((CORES - 1))" $PY benchmarks/straggler_sweep.py \
    --ranks 2,4 --faults input,compute,host,comm --amounts 0.05,0.1 --healthy-steps 2000 --healthy-run 500 \
    --keep "$OUT/kept" >"$OUT/sweep.txt" 2>&1
echo "sweep: exit $? at $(date -u +%T), load $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$OUT/steps.txt"
wait
tar -czf "$OUT/kept.tgz" -C "$OUT" kept && rm -rf "$OUT/kept"
cat "$OUT/sweep.txt"
