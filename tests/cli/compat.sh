#!/usr/bin/env bash
# compat.sh - `gpuplane compat`: the issue's example (NGC PyTorch 24.05 on
# 535.104.05) and a forward-compatibility case byte for byte against
# tests/golden/compat-*.txt; exit 0 when it runs, 1 when it does not, 2 for
# bad input with one line on stderr and nothing on stdout.
# GP_UPDATE_GOLDEN=1 rewrites the golden files (review the diff).
set -uo pipefail
gp="${GPUPLANE:?}"
src="${GP_SRC:?}"
golden="$src/tests/golden"
. "$src/tests/cli/lib/common.sh"

# golden NAME RC ARGS...: compat ARGS exits RC and prints tests/golden/NAME
golden() {
    local name="$1" want="$2"
    shift 2
    "$gp" compat "$@" >"$tmp/$name" 2>"$tmp/err"
    local rc=$?
    [ "$rc" -eq "$want" ] || failed "$name: exit $rc, expected $want: $(cat "$tmp/err")"
    [ -s "$tmp/err" ] && failed "$name: something on stderr: $(cat "$tmp/err")"
    if [ "${GP_UPDATE_GOLDEN:-0}" = 1 ]; then
        cp "$tmp/$name" "$golden/$name"
        echo "updated $golden/$name"
    fi
    if ! diff -u "$golden/$name" "$tmp/$name" >"$tmp/diff"; then
        failed "$name differs from $golden/$name:"
        head -30 "$tmp/diff"
    else
        echo "ok   $name (exit $rc)"
    fi
}
golden compat-pytorch-24.05.txt 0 --image nvcr.io/nvidia/pytorch:24.05-py3 --driver 535.104.05
golden compat-forward.txt 0 --cuda 13.0 --driver 535.104.05 --gpu H100-80GB
golden compat-no.txt 1 --cuda 12.2 --driver 520.61.05 --gpu RTX-4090

# verdict CUDA DRIVER GPU RC LINE: the verdict line and exit code
verdict() {
    local cuda="$1" driver="$2" gpu="$3" want="$4" line="$5"
    "$gp" compat --cuda "$cuda" --driver "$driver" ${gpu:+--gpu "$gpu"} >"$tmp/out" 2>&1
    local rc=$?
    if [ "$rc" -ne "$want" ] || [ "$(sed -n 2p "$tmp/out")" != "$line" ]; then
        failed "compat --cuda $cuda --driver $driver ${gpu:+--gpu $gpu}: exit $rc, '$(sed -n 2p "$tmp/out")'"
    else
        echo "ok   CUDA $cuda on $driver ${gpu:+($gpu) }: $line"
    fi
}
verdict 12.2 535.54.03 "" 0 "runs: natively"
verdict 12.2 535.54.02 "" 0 "runs: minor-version compatibility"
verdict 12.2 525.60.13 "" 0 "runs: minor-version compatibility"
verdict 12.2 525.60.12 RTX-4090 1 "does not run"
verdict 13.0 535.104.05 RTX-4090 1 "does not run"
verdict 13.0 535.104.05 A100 0 "runs: forward compatibility (cuda-compat)"
verdict 13.0 550.54.15 A100 1 "does not run"
verdict 12.4 535.104.05 MI300X 1 "does not run"

# --- bad input: one line on stderr, exit 2, nothing on stdout -------------------
expect() {
    local name="$1" pattern="$2"
    shift 2
    "$gp" compat "$@" >"$tmp/stdout" 2>"$tmp/stderr"
    local rc=$?
    if [ "$rc" -ne 2 ]; then
        failed "$name: exit code $rc, expected 2"
    elif [ "$(wc -l <"$tmp/stderr")" -ne 1 ] || [ -s "$tmp/stdout" ]; then
        failed "$name: expected one line on stderr and nothing on stdout:"
        cat "$tmp/stderr" "$tmp/stdout"
    elif ! grep -Eq -- "$pattern" "$tmp/stderr"; then
        failed "$name: stderr does not match '$pattern':"
        cat "$tmp/stderr"
    else
        echo "ok   $name: $(cat "$tmp/stderr")"
    fi
}
expect "no driver" "--driver VERSION is required" --cuda 12.4
expect "neither cuda nor image" "give --cuda VERSION or --image REF" --driver 535.104.05
expect "both cuda and image" "give --cuda VERSION or --image REF" --cuda 12.4 \
    --image nvidia/cuda:12.4.1-base-ubuntu22.04 --driver 535.104.05
expect "bad driver" "--driver: expected an NVIDIA driver version like 535.104.05, got 'r535'" \
    --cuda 12.4 --driver r535
expect "bad cuda" "--cuda: expected a CUDA version like 12.4 or 12.4.1, got '12'" --cuda 12 \
    --driver 535.104.05
expect "unknown cuda" "--cuda 12.7: CUDA 12.7 is not in data/cuda-driver-compat.json \(it has .*12.6, 12.8" \
    --cuda 12.7 --driver 565.57.01
expect "unknown image" "--image vllm/vllm-openai:v0.9.0: data/cuda-images.json does not know vllm/vllm-openai" \
    --image vllm/vllm-openai:v0.9.0 --driver 535.104.05
expect "unknown NGC release" "has no CUDA version for this release of nvcr.io/nvidia/pytorch \(it has 24.05\)" \
    --image nvcr.io/nvidia/pytorch:24.07-py3 --driver 535.104.05
expect "tag without CUDA" "the tag does not name a CUDA version as nvidia/cuda tags do" \
    --image nvidia/cuda:latest --driver 535.104.05

[ "$fails" -eq 0 ] || { echo "$fails failure(s)"; exit 1; }
echo "all compat checks passed"
