#!/usr/bin/env bash
# limits.sh - bounded resources on any input (README, "Limits"): an input
# file over --max-input-mib (default 256) is refused before it is read, a
# pipe or /dev/zero is read to the limit and refused; a workload that would
# make more pods than --max-pods (default 20,000,000) is refused before any
# pod is made, naming the object and the number; --horizon is at most
# 3650d. Each refusal is one line on stderr and exit 2.
set -uo pipefail
gp="${GPUPLANE:?}"
src="${GP_SRC:?}"
cluster="$src/examples/cluster-mixed.yaml"
workload="$src/examples/workload-mixed.yaml"
. "$src/tests/cli/lib/common.sh"
cd "$tmp" || exit 1

# expect NAME PATTERN CMD...: exit 2 within 60 s, one stderr line matching PATTERN
expect() {
    local name="$1" pattern="$2"
    shift 2
    timeout 60 "$@" >out.txt 2>err.txt
    local rc=$? lines
    lines=$(grep -vc '^warning: ' err.txt)
    if [ "$rc" -ne 2 ]; then
        echo "FAIL $name: exit $rc, expected 2: $(head -c 300 err.txt)"
        fails=$((fails + 1))
    elif [ "$lines" -ne 1 ] || ! grep -Eq -- "$pattern" err.txt; then
        echo "FAIL $name: stderr does not match '$pattern':"
        cat err.txt
        fails=$((fails + 1))
    else
        echo "ok   $name: $(grep -v '^warning: ' err.txt)"
    fi
}
sim() { "$gp" sim --quiet "$@"; }

# --- input files --------------------------------------------------------------
expect "--cluster /dev/zero stops at the default limit" \
    "^gpuplane: /dev/zero: gives more than the input limit of 256 MiB; --max-input-mib raises it$" \
    "$gp" sim --quiet --cluster /dev/zero --workload "$workload"
expect "--workload /dev/zero stops at --max-input-mib" \
    "^gpuplane: /dev/zero: gives more than the input limit of 1 MiB" \
    "$gp" sim --quiet --cluster "$cluster" --workload /dev/zero --max-input-mib 1
truncate -s 300M sparse.yaml
expect "a file over the limit is refused by its size" \
    "^gpuplane: sparse\.yaml: is 300\.0 MiB, more than the input limit of 256 MiB" \
    "$gp" sim --quiet --cluster "$cluster" --workload sparse.yaml
head -c 2097152 /dev/zero >zeros.yaml
expect "--max-input-mib 1 refuses 2 MiB" "zeros\.yaml: is 2\.0 MiB, more than the input limit of 1 MiB" \
    "$gp" sim --quiet --cluster "$cluster" --workload zeros.yaml --max-input-mib 1
expect "--max-input-mib 3 reads it (and the reader refuses the NULs)" "zeros\.yaml:1:1" \
    "$gp" sim --quiet --cluster "$cluster" --workload zeros.yaml --max-input-mib 3
expect "a pipe is read to the limit" "^gpuplane: /dev/stdin: gives more than the input limit of 1 MiB" \
    bash -c "head -c 3000000 /dev/zero | \"$gp\" sim --quiet --cluster \"$cluster\" --workload /dev/stdin --max-input-mib 1"
expect "render reads within the limit too" "^gpuplane: /dev/zero: gives more than the input limit of 1 MiB" \
    "$gp" render --cluster /dev/zero --max-input-mib 1
expect "--max-input-mib 0" "--max-input-mib: expected an integer from 1 to 1048576" \
    "$gp" sim --quiet --cluster "$cluster" --workload "$workload" --max-input-mib 0

# --- the pod budget --------------------------------------------------------------
# job NAME ANNOTATIONS SPEC: a one-GPU Job manifest
job() {
    cat <<EOF
apiVersion: batch/v1
kind: Job
metadata:
  name: $1
  annotations: {sim.gpuplane.io/duration: 10m$2}
spec:
$3
  template:
    spec:
      containers:
      - name: c
        image: x
        resources:
          requests: {cpu: "1", memory: 1Gi}
          limits: {nvidia.com/gpu: 1}
EOF
}
job stream ', sim.gpuplane.io/repeat: "10000000"' '  completions: 3' >repeat.yaml
expect "repeat over the budget" \
    "^gpuplane: repeat\.yaml:1: Job/stream: up to 30000000 pods \(10000000 submissions of 3\), more than the pod budget of 20000000; --max-pods raises it$" \
    "$gp" sim --quiet --cluster "$cluster" --workload repeat.yaml
job wide '' '  completions: 24000000
  parallelism: 24000000' >completions.yaml
expect "completions over the budget" "completions\.yaml:1: Job/wide: up to 24000000 pods, more than" \
    "$gp" sim --quiet --cluster "$cluster" --workload completions.yaml
cat >deploy.yaml <<'EOF'
apiVersion: apps/v1
kind: Deployment
metadata:
  name: fleet
spec:
  replicas: 18000000
  template:
    spec:
      containers:
      - name: c
        image: x
        resources:
          requests: {cpu: "1", memory: 1Gi}
EOF
job more ', sim.gpuplane.io/repeat: "2500000"' '  completions: 1' >more.yaml
expect "the total crossing the budget names the object that crosses it" \
    "more\.yaml:1: Job/more: its 2500000 pods take the workload to 20500000, more than the pod budget of 20000000" \
    "$gp" sim --quiet --cluster "$cluster" --workload deploy.yaml --workload more.yaml
job flaky ', sim.gpuplane.io/repeat: "200", sim.gpuplane.io/failure-probability: "0.5"' \
    '  backoffLimit: 6' >flaky.yaml
expect "backoffLimit retries count when pods can fail" \
    "flaky\.yaml:1: Job/flaky: up to 1400 pods \(200 submissions of 7\), more than the pod budget of 1000" \
    "$gp" sim --quiet --cluster "$cluster" --workload flaky.yaml --max-pods 1000
job steady ', sim.gpuplane.io/repeat: "200"' '  backoffLimit: 6' >steady.yaml
if sim --cluster "$cluster" --workload steady.yaml --max-pods 1000 >/dev/null 2>err.txt; then
    echo "ok   the same Job without failures makes 200 pods, within 1000"
else
    echo "FAIL the same Job without failures: $(cat err.txt)"
    fails=$((fails + 1))
fi
expect "--max-pods lowers the budget" \
    "workload-mixed\.yaml:[0-9]+: Deployment/embeddings: its 8 pods take the workload to 14, more than the pod budget of 10" \
    "$gp" sim --quiet --cluster "$cluster" --workload "$workload" --max-pods 10
if sim --cluster "$cluster" --workload "$workload" --max-pods 100000 >/dev/null 2>err.txt; then
    echo "ok   --max-pods 100000 runs the mixed example"
else
    echo "FAIL --max-pods 100000: $(cat err.txt)"
    fails=$((fails + 1))
fi

# --- the horizon ------------------------------------------------------------------
expect "--horizon 999999999999d" "^gpuplane: --horizon: expected a positive duration of at most 3650d" \
    "$gp" sim --quiet --cluster "$cluster" --workload "$workload" --horizon 999999999999d

if [ "$fails" -ne 0 ]; then
    echo "$fails limit check(s) failed"
    exit 1
fi
echo "all limit checks passed"
