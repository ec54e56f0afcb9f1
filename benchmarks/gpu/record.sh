#!/usr/bin/env bash
# Issue 23 on a GPU machine: run torchdoctor's CUDA half for real and keep everything it printed.
#
#   bash benchmarks/gpu/record.sh OUT_FOLDER [PHASE...]     # from the repository root; PHASE: a b c d (all), e, f
#
# Every step's output goes to OUT_FOLDER/rec/<step>.txt (command, exit status and seconds in steps.txt), the
# files the runs leave (NCCL logs, flight-recorder dumps, the memory snapshot, the watchdog's folder) under
# OUT_FOLDER/rec/work/, and the whole folder into OUT_FOLDER/gpu-record.tgz. Each step has a time limit; steps
# that share the GPU harmlessly run side by side (phase a), the measurements alone (phases b-d).
set -u
OUT=$(realpath "${1:?usage: record.sh OUT_FOLDER [PHASE...]}")
shift
PHASES=${*:-a b c d}
REC=$OUT/rec
W=$REC/work
mkdir -p "$W"
HERE=$(cd "$(dirname "$0")" && pwd)
export PYTHONPATH=$PWD/src${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1
PY=${PYTHON:-python3}
TD="$PY -m torchdoctor"
RUN="$PY -m torch.distributed.run"

# step NAME SECONDS COMMAND...: run COMMAND with a limit, its output in rec/NAME.txt
step() {
    local name=$1 limit=$2
    shift 2
    local start=$SECONDS
    { echo "\$ $*"; timeout -k 10 "$limit" "$@"; echo "[exit status $?]"; } >"$REC/$name.txt" 2>&1
    echo "$name: $(tail -1 "$REC/$name.txt") in $((SECONDS - start)) s (limit $limit): $*" | tee -a "$REC/steps.txt"
}

facts() {
    step nvidia-smi 30 nvidia-smi
    step nvidia-smi-q 30 nvidia-smi -q
    step nvidia-smi-driver 30 nvidia-smi --query-gpu=driver_version --format=csv,noheader
    step nvidia-smi-compute-cap 30 nvidia-smi --query-gpu=name,compute_cap --format=csv,noheader
    step nvidia-smi-topo 30 nvidia-smi topo -m
    step nvcc-version 30 nvcc --version
    step versions 60 $PY -c "import torch, sys; print(sys.version); print('torch', torch.__version__, 'cuda', torch.version.cuda, 'nccl', torch.cuda.nccl.version(), 'cudnn', torch.backends.cudnn.version()); print('arch list', torch.cuda.get_arch_list()); print('capability', torch.cuda.get_device_capability(0), torch.cuda.get_device_name(0))"
    step pip-show 60 $PY -m pip show torch transformers accelerate lightning pytorch-lightning deepspeed
    step check-json 120 $TD check -v --json
    step check 120 $TD check -v
    step env 120 $TD env -v
    step env-deepspeed-build 120 $TD env --deepspeed-build
    step report 120 $TD report
}

network() {
    step net-nccl-debug 120 $TD net --nccl-debug -v --log-dir "$W/net-nccl-debug"
    step net-json 120 $TD net --json
    step net-bench 180 $TD net --bench -v --plot "$W/net-bench.png"
    step net-2-ranks-nccl 120 $TD net --nproc-per-node 2 --backend nccl -v --log-dir "$W/net-2-ranks-nccl"
    step net-2-ranks-auto 120 $TD net --nproc-per-node 2 -v
    NCCL_DEBUG=WARN step duplicate-gpu 120 $RUN --nproc-per-node 2 "$HERE/duplicate_gpu.py"
    step explain-duplicate-gpu 60 $TD explain -v "$REC/duplicate-gpu.txt"
    step net-read-duplicate-gpu 60 $TD net --read-log "$REC/duplicate-gpu.txt"
}

phase_a() {  # side by side: the facts, the CUDA tests, the network (none of them fills the GPU)
    facts &
    step pytest-cuda 300 $PY -m pytest -q -p no:cacheprovider -n 4 -rs tests/test_numerics_cuda.py \
        tests/test_numerics_fp32.py tests/test_env_cli.py tests/test_net_baseline.py tests/test_accelerate_without_gpus.py &
    network &
    wait
}

phase_b() {  # out of memory for real, then two NCCL hangs side by side (both only spin the GPU)
    step oom 180 $PY "$HERE/oom.py" "$W"
    step oom-uncaught 60 $PY -c "import torch; held = torch.empty(2**35, device='cuda'); more = torch.empty(2**35, device='cuda'); print('no error')"
    step explain-oom 60 $TD explain -v "$REC/oom-uncaught.txt"
    mkdir -p "$W/nccl-timeout-fr" "$W/watchdog-tmp"
    TORCH_NCCL_DUMP_ON_TIMEOUT=1 TORCH_FR_BUFFER_SIZE=2000 TORCH_FR_DUMP_TEMP_FILE="$W/nccl-timeout-fr/nccl_trace_rank_" \
        step nccl-timeout 180 $RUN --nproc-per-node 1 "$HERE/nccl_hang.py" 20 &
    TMPDIR=$W/watchdog-tmp step watchdog-nccl-hang 180 $TD launch --watchdog 15 --nproc-per-node 1 \
        --log-dir "$W/watchdog-logs" --tee 3 "$HERE/nccl_hang.py" 600 &
    wait
    step explain-nccl-timeout 60 $TD explain -v "$REC/nccl-timeout.txt"
    step explain-nccl-timeout-fr 60 $TD explain -v "$W/nccl-timeout-fr"
    step explain-watchdog-console 60 $TD explain -v "$REC/watchdog-nccl-hang.txt"
    step explain-watchdog-logs 60 $TD explain -v "$W/watchdog-logs"
    step explain-watchdog-folder 60 $TD explain -v "$W"/watchdog-tmp/torchdoctor-watchdog-*
}

phase_e() {  # the second round: what the first one found wrong, again (net over NCCL, the watchdog's verdict)
    phase_a
    mkdir -p "$W/watchdog-tmp"
    SPIN=60 TMPDIR=$W/watchdog-tmp step watchdog-nccl-hang 120 $TD launch --watchdog 15 --nproc-per-node 1 \
        --log-dir "$W/watchdog-logs" --tee 3 "$HERE/nccl_hang.py" 600
    step explain-watchdog-logs 60 $TD explain -v "$W/watchdog-logs"
    step explain-watchdog-folder 60 $TD explain -v "$W"/watchdog-tmp/torchdoctor-watchdog-*
    step overflow-overhead 300 $PY benchmarks/overflow_overhead.py --device cuda --size t5-base --rounds 7
    phase_d
}

phase_c() {  # the measurements, alone on the GPU
    step balance 120 $PY "$HERE/balance.py"
    step overflow-overhead 300 $PY benchmarks/overflow_overhead.py --device cuda --size t5-base --rounds 9
}

phase_d() {  # training runs under launch: debug mode over NCCL, the straggler watch with a planted GPU slowdown
    BACKEND=nccl STEPS=20 step launch-debug-nccl 180 $TD launch --debug --nproc-per-node 1 "$HERE/ddp_train.py"
    BACKEND=gloo STEPS=120 SLOW_RANK=1 AMOUNT=1 SLOW_FROM=40 step stragglers-gpu 240 \
        $TD launch --stragglers --stragglers-dir "$W/stragglers" --nproc-per-node 2 "$HERE/ddp_train.py"
}

phase_f() {  # issue 21: the straggler watch's device time from CUDA events (gloo, 2 ranks sharing the one GPU)
    local run
    for run in healthy:STEPS=150 device:AMOUNT=0.3 host:HOST_WORK=0.5; do
        # healthy: 150 steps. Planted on rank 1 from step 80, after the first 20 (start-up) and the 40 that make each
        # rank's usual; 100 slowed steps: a 40-step stretch, and two windows in a row for `device` and `host` (PERSIST)
        (
            export BACKEND=gloo STEPS=180 SLOW_FROM=80 SLOW_RANK=1 ${run#*:}
            step "stragglers-cuda-${run%%:*}" 75 $TD launch --stragglers --stragglers-dir \
                "$W/stragglers-cuda-${run%%:*}" --nproc-per-node 2 "$HERE/ddp_train.py"
        )
    done
    step stragglers-cuda-rows 15 $PY "$HERE/device_rows.py" "$W"/stragglers-cuda-*/stragglers-windows.jsonl
    step straggler-overhead-cuda 60 $PY benchmarks/straggler_overhead.py --device cuda --pairs 12 --hook-pairs 12
}

echo "record.sh on $(hostname) at $(date -u +%FT%TZ): phases $PHASES" | tee "$REC/steps.txt"
for phase in $PHASES; do
    "phase_$phase"
done
find "$W" -name '*.pt' -size +8M -delete  # nothing large comes back
tar -czf "$OUT/gpu-record.tgz" -C "$OUT" rec
echo "done at $(date -u +%T): $(du -h "$OUT/gpu-record.tgz" | cut -f1)"
