#!/usr/bin/env bash
# sharing_study.sh - `gpuplane sim --compare-sharing` on the renter's
# question example: its table and JSON must match the golden files byte for
# byte, the HTML page must be whole, and missing inputs give one line and
# exit 2 with no file written. GP_UPDATE_GOLDEN=1 rewrites the golden files.
set -uo pipefail
gp="${GPUPLANE:?}"
src="${GP_SRC:?}"
golden="$src/tests/golden"
cd "$src" # relative paths: the workload's name is part of the output
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() {
    echo "FAIL $*"
    fails=$((fails + 1))
}

ex=examples/renters-question
if ! "$gp" sim --compare-sharing --cluster "$ex/cluster.yaml" --workload "$ex/models.yaml" \
    --json "$tmp/study.json" --report "$tmp/study.html" >"$tmp/study.txt" 2>"$tmp/err"; then
    fail "study: $(cat "$tmp/err")"
fi
for f in study.txt study.json; do
    want="$golden/sharing-$f"
    if [ "${GP_UPDATE_GOLDEN:-0}" = 1 ]; then
        cp "$tmp/$f" "$want"
        echo "updated $want"
    elif ! diff -u "$want" "$tmp/$f" >"$tmp/diff"; then
        fail "$f differs from $want:"
        head -40 "$tmp/diff"
    fi
done
grep -q '^<!DOCTYPE html>' "$tmp/study.html" && tail -1 "$tmp/study.html" | grep -q '</html>' ||
    fail "study.html is not a whole page"
[ "$(grep -c '<svg' "$tmp/study.html")" = 3 ] || fail "study.html: expected 3 charts"

# an ordinary manifest (nvidia.com/gpu: 1, no gpuplane annotation): the
# device plugin advertises time-sliced and MPS replicas as nvidia.com/gpu,
# so both serve it; MIG's mixed strategy does not (docs/sharing.md)
cat >"$tmp/ordinary.yaml" <<'EOF'
apiVersion: apps/v1
kind: Deployment
metadata: {name: svc}
spec:
  replicas: 10
  template:
    spec:
      containers:
      - name: s
        resources:
          requests: {cpu: "2", memory: 8Gi}
          limits: {nvidia.com/gpu: 1}
EOF
if "$gp" sim --compare-sharing --cluster "$ex/cluster.yaml" --workload "$tmp/ordinary.yaml" \
    >"$tmp/ordinary.txt" 2>"$tmp/err"; then
    for m in timeslice mps; do
        grep -q "^a100 $m x[0-9]* *[0-9]" "$tmp/ordinary.txt" ||
            fail "ordinary manifest: a100 $m is not possible: $(grep "a100 $m" "$tmp/ordinary.txt")"
    done
    grep -q "^a100 mig .*not possible: pod svc fits no empty a100 node: it asks for nvidia.com/gpu" \
        "$tmp/ordinary.txt" || fail "ordinary manifest: a100 mig: $(grep 'a100 mig' "$tmp/ordinary.txt")"
else
    fail "ordinary manifest: $(cat "$tmp/err")"
fi

# bad use: one line, exit 2, nothing written
"$gp" sim --compare-sharing --workload "$ex/models.yaml" --json "$tmp/none.json" 2>"$tmp/err"
rc=$?
[ "$rc" = 2 ] || fail "no --cluster: exit $rc, expected 2"
[ "$(wc -l <"$tmp/err")" = 1 ] || fail "no --cluster: expected one line, got: $(cat "$tmp/err")"
[ ! -e "$tmp/none.json" ] || fail "no --cluster: wrote a file"
"$gp" sim --compare-sharing --cluster "$ex/cluster.yaml" --workload "$ex/models.yaml" \
    --csv "$tmp/x.csv" 2>"$tmp/err"
[ $? = 2 ] && [ ! -e "$tmp/x.csv" ] || fail "--csv: expected exit 2 and no file"
printf 'apiVersion: gpuplane.io/v1\nkind: Cluster\nmetadata: {name: c}\nspec:\n  nodePools:\n  - {name: cpu, cpu: "8", memory: 8Gi, count: 1}\n' >"$tmp/cpu.yaml"
"$gp" sim --compare-sharing --cluster "$tmp/cpu.yaml" --workload "$ex/models.yaml" \
    --json "$tmp/cpu.json" 2>"$tmp/err"
[ $? = 2 ] && [ ! -e "$tmp/cpu.json" ] && grep -q "no node pool with GPUs" "$tmp/err" ||
    fail "CPU-only cluster: $(cat "$tmp/err")"

[ "$fails" = 0 ] || exit 1
echo "ok   sharing study"
