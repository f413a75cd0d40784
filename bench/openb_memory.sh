#!/usr/bin/env bash
# openb_memory.sh - peak memory and wall time of a static run over a large
# openb pod list: the openb default trace (../shared/data/openb) repeated N
# times, each copy's names made unique ("-K" appended), written to a
# temporary directory and removed afterwards. Prints one Markdown row per N:
# the input's size, "Maximum resident set size" and the wall time of
# /usr/bin/time -v. Heavy for large N (206 MB at N=340): run it once.
# Usage: bench/openb_memory.sh BUILD_DIR [N ...] (default 1 10 100 340)
set -euo pipefail
build="${1:?usage: bench/openb_memory.sh BUILD_DIR [N ...]}"
shift
src="$(cd "$(dirname "$0")/.." && pwd)"
data="${GP_SHARED:-$src/../shared}/data/openb"
[ "$#" -gt 0 ] || set -- 1 10 100 340
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "| input | size | peak RSS | wall |"
echo "|---|---:|---:|---:|"
for n in "$@"; do
    awk -F, -v OFS=, -v n="$n" 'NR == 1 { print; next } { rows[++k] = $0 }
        END { for (c = 0; c < n; c++) for (i = 1; i <= k; i++) {
            if (c == 0) { print rows[i]; continue }
            split(rows[i], f, ","); f[1] = f[1] "-" c; line = f[1]
            for (j = 2; j <= length(f); j++) line = line "," f[j]
            print line } }' "$data/openb_pod_list_default.csv" >"$tmp/pods.csv"
    rows=$(($(wc -l <"$tmp/pods.csv") - 1))
    size=$(awk -v b="$(stat -c %s "$tmp/pods.csv")" 'BEGIN { printf "%.1f MB", b / 1e6 }')
    /usr/bin/time -v "$build/gpuplane" sim --mode static \
        --cluster "openb:$data/openb_node_list_gpu_node.csv" --workload "openb:$tmp/pods.csv" \
        --quiet --json "$tmp/o.json" 2>"$tmp/time" >/dev/null
    rss=$(awk -F': ' '/Maximum resident set size/ { kb = $2 }
        END { if (kb >= 1048576) printf "%.2f GiB", kb / 1048576; else printf "%.1f MiB", kb / 1024 }' "$tmp/time")
    wall=$(awk -F': ' '/Elapsed \(wall clock\)/ { n = split($2, t, ":"); s = t[n] + (n > 1 ? 60 * t[n - 1] : 0)
        printf "%.1f s", s }' "$tmp/time")
    sum=$(sed "s|$tmp|TMP|g" "$tmp/o.json" | sha256sum | cut -c1-12) # the JSON less its temporary path
    echo "| openb × $n ($rows rows) | $size | $rss | $wall | json $sum"
    rm -f "$tmp/pods.csv" "$tmp/o.json"
done
