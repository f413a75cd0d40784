#!/usr/bin/env bash
# philly_results.sh - the Philly replay's results stay what docs/philly.md
# says and what the pinned digests hold: bench/philly_orders.sh runs all
# three setups under FIFO, SJF and fair share, with and without backfill
# (18 runs), and (1) every figure of its tables but the wall time must be
# the one docs/philly.md prints for that setup and order, (2) each run's
# JSON, its "input" paths left out, must have the sha256 pinned in
# tests/golden/philly-orders.sha256. A change to the engine's queue orders,
# backfill, reservation or the Philly reader that moves a decision fails
# here; a change meant to move them updates the pins and the docs' tables
# and says why in its commit. Skips (exit 77) without the shared Philly
# data or python3, and on the sanitizer build (18 replays of 82,247 jobs
# are minutes there; the plain build checks the same decisions).
set -uo pipefail
gp="${GPUPLANE:?}"
src="${GP_SRC:?}"
shared="${GP_SHARED:-$src/../shared}"
if [ ! -r "$shared/data/philly/pollux-osdi21/philly.csv" ]; then
    echo "skipped: no Philly data under $shared/data/philly"
    exit 77
fi
if ! command -v python3 >/dev/null; then
    echo "skipped: python3 is not installed (bench/philly_orders.sh needs it)"
    exit 77
fi
if [ "${GP_SANITIZE:-0}" = 1 ]; then
    echo "skipped: the sanitizer build (the plain build runs this)"
    exit 77
fi
. "$src/tests/cli/lib/common.sh"

if ! PHILLY_JSON_DIR="$tmp/json" GP_SHARED="$shared" \
    bash "$src/bench/philly_orders.sh" "$(dirname "$gp")" >"$tmp/tables.md" 2>"$tmp/err"; then
    echo "FAIL: bench/philly_orders.sh failed:"
    cat "$tmp/err"
    exit 1
fi
cat "$tmp/tables.md"

# rows SETUP-ORDER-BACKFILL and their figures without the last (wall)
# column, from a file of "### SETUP ..." sections of markdown tables
rows() {
    awk '/^### / { setup = $2 }
         /^\| (fifo|sjf|fair) \| (no|yes) \|/ {
             n = split($0, f, "|"); line = setup "-" f[2] "-" f[3]
             for (i = 4; i < n - 1; i++) line = line "|" f[i]
             gsub(/ /, "", line); print line }' "$1" | sort
}
rows "$tmp/tables.md" >"$tmp/ours"
rows "$src/docs/philly.md" >"$tmp/docs"
if [ "$(wc -l <"$tmp/ours")" -ne 18 ]; then
    failed "expected 18 result rows from bench/philly_orders.sh, got $(wc -l <"$tmp/ours")"
elif ! diff "$tmp/docs" "$tmp/ours" >"$tmp/rows.diff"; then
    failed "the results differ from docs/philly.md's tables (< docs, > this build):"
    cat "$tmp/rows.diff"
else
    echo "ok   all 18 rows are docs/philly.md's (wall time aside)"
fi

python3 - "$tmp/json" >"$tmp/digests" <<'PY'
import hashlib, json, os, sys
d = sys.argv[1]
for name in sorted(os.listdir(d)):
    doc = json.load(open(os.path.join(d, name)))
    doc.pop("input", None)
    text = json.dumps(doc, sort_keys=True, separators=(",", ":"))
    print(name, hashlib.sha256(text.encode()).hexdigest())
PY
pins="$src/tests/golden/philly-orders.sha256"
if ! diff "$pins" "$tmp/digests" >"$tmp/digests.diff"; then
    failed "the runs' JSON differ from $pins (< pinned, > this build):"
    cat "$tmp/digests.diff"
else
    echo "ok   all 18 runs' JSON have the pinned digests"
fi
exit $((fails > 0))
