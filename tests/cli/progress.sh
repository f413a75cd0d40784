#!/usr/bin/env bash
# progress.sh - the progress bar shows on a terminal (here a pseudo-terminal
# made by script(1)) and never when the output is piped.
set -uo pipefail
gp="${GPUPLANE:?}"
src="${GP_SRC:?}"
if ! command -v script >/dev/null 2>&1; then
    echo "SKIP: script(1) is not installed"
    exit 77
fi
cd "$src"
. "$src/tests/cli/lib/common.sh"
args="--cluster examples/cluster-mixed.yaml --workload examples/workload-mixed.yaml --quiet --json $tmp/out.json"
GPUPLANE_PROGRESS_DELAY=0 script -qec "$gp sim $args" /dev/null </dev/null >"$tmp/tty.txt" 2>&1
if ! tr '\r' '\n' <"$tmp/tty.txt" | grep -q 'simulating \[#*.*\] 100%'; then
    echo "FAIL: no progress bar on a terminal:"
    head -c 400 "$tmp/tty.txt"
    exit 1
fi
GPUPLANE_PROGRESS_DELAY=0 "$gp" sim $args >"$tmp/piped.txt" 2>&1
if [ -s "$tmp/piped.txt" ]; then
    echo "FAIL: output when piped:"
    head -c 400 "$tmp/piped.txt"
    exit 1
fi
GPUPLANE_PROGRESS_DELAY=0 script -qec "$gp sim $args --no-progress" /dev/null </dev/null >"$tmp/off.txt" 2>&1
if grep -q simulating "$tmp/off.txt"; then
    echo "FAIL: --no-progress still shows the bar"
    exit 1
fi
echo "progress bar: on a terminal only, and --no-progress turns it off"
