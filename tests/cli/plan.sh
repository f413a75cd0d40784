#!/usr/bin/env bash
# plan.sh - `gpuplane plan` on cases whose answer is known by hand
# (tests/data/plan: the offers of offers.yaml, EKS only): two services on
# two 1-GPU nodes ($1533 a month), a notebook that a plain instance serves
# cheaper than a cluster ($730 against $803), spot that loses to its lost
# work without checkpoints and wins with them; the same JSON whatever the
# thread count; --out writes a spec the simulator reads; MIG, MPS and
# zone-bound pods on pools shared and labelled for them; bad limits files
# exit 2 with one line naming file, line and field.
set -uo pipefail
gp="${GPUPLANE:?}"
src="${GP_SRC:?}"
data="$src/tests/data/plan"
. "$src/tests/cli/lib/common.sh"

# plan NAME WORKLOAD LIMITS: runs the plan with the test offers into NAME.json
plan() {
    local name="$1" w="$2" l="$3"
    shift 3
    if ! "$gp" plan --workload "$data/$w" --limits "$data/$l" --providers "$data/${OFFERS:-offers.yaml}" \
        --json "$tmp/$name.json" "$@" >"$tmp/$name.out" 2>"$tmp/$name.err"; then
        failed "$name: gpuplane plan failed: $(cat "$tmp/$name.err")"
        return 1
    fi
}

# check NAME PYTHON: the expression holds for d (the JSON), w (the winner)
check() {
    local name="$1" expr="$2"
    python3 - "$tmp/$name.json" "$expr" <<'EOF' || failed "$name: $expr"
import json, sys
d = json.load(open(sys.argv[1]))
c = d["candidates"]
w = c[0]
sim = [x for x in c if x["state"] == "simulated"]
spot = lambda x: any(p["spot"] for p in x["pools"])
sys.exit(0 if eval("(" + sys.argv[2] + ")") else 1)
EOF
}

if plan services two-services.yaml eks-only.yaml; then
    check services 'd["winner"]["id"] == w["id"] and w["limits_met"]'
    check services 'w["kind"] == "kubernetes" and w["what"] == "2x1 L4-24GB"'
    check services 'abs(w["monthly_usd"] - (2 * 1.00 + 0.10) * 730) < 0.5'
    check services 'all(x["provider"] == "eks" for x in c)'
    echo "ok   two services: two 1-GPU nodes, \$1533 a month"
fi

if plan notebook one-notebook.yaml eks-only.yaml; then
    check notebook 'w["kind"] == "plain instance" and abs(w["monthly_usd"] - 730) < 0.5'
    check notebook 'c[1]["kind"] == "kubernetes" and abs(c[1]["monthly_usd"] - 803) < 0.5'
    grep -q "no Kubernetes control plane is worth paying for" "$tmp/notebook.out" ||
        failed "notebook: the summary does not say why the plain instance wins"
    echo "ok   one notebook: a plain instance beats the cluster"
fi

if plan lossy long-jobs.yaml spot-lossy.yaml; then
    check lossy 'not spot(w) and w["limits_met"]'
    check lossy 'any(spot(x) and x["sim"]["lost_work_usd"] > 0 and
        (x["monthly_usd"] > w["monthly_usd"] or not x["limits_met"]) for x in sim)'
    grep -q "spot does not pay" "$tmp/lossy.out" || failed "lossy: no word on the spot loss"
    echo "ok   spot without checkpoints loses to its lost work"
fi
if plan ckpt long-jobs.yaml spot-checkpointed.yaml; then
    check ckpt 'spot(w) and w["limits_met"]'
    check ckpt 'len(d["spot_sensitivity"]) == 2 and
        d["spot_sensitivity"][0]["interruptions_per_node_hour"] == 0.25 and
        d["spot_sensitivity"][1]["interruptions_per_node_hour"] == 1'
    echo "ok   spot with 5-minute checkpoints wins, with its sensitivity"
fi

# billing granularity from the catalog: per second (EKS) the pool from zero
# wins; by the hour (OVHcloud) its 36 starts a day round up and the fixed
# node wins
if plan persec short-jobs.yaml jobs-eks.yaml && plan hourly short-jobs.yaml jobs-ovhcloud.yaml; then
    check persec 'w["what"] == "0-1x1 L4-24GB" and w["billing_granularity_s"] == 1'
    check hourly 'w["what"] == "1x1 L4-24GB" and c[1]["what"] == "0-1x1 L4-24GB"'
    check hourly 'c[1]["billing_granularity_s"] == 3600 and c[1]["billing_rounding_usd_month"] > 100'
    grep -q "billing rounded up" "$tmp/hourly.out" || failed "hourly: the why does not say so"
    echo "ok   hourly billing turns the answer to a fixed node"
fi

# sharing modes (tests/data/plan/share-offers.yaml): MIG pods on a MIG
# pool cut for their profile, never on a provider the catalog does not say
# allows MIG (Lambda's cheaper A100); pods that accept only MPS on an MPS
# pool; pods that require a zone on a pool labelled with it
if OFFERS=share-offers.yaml plan mig mig.yaml eks-lambda.yaml --out "$tmp/mig"; then
    check mig 'w["what"] == "1x1 A100-80GB mig" and w["limits_met"] and w["pools"][0]["sharing"] == "mig"'
    check mig 'abs(w["monthly_usd"] - (2.00 + 0.10) * 730) < 0.5 and w["sim"]["pods_scheduled"] == 7'
    check mig 'abs(w["lower_bound_monthly_usd"] - (2.00 + 0.10) * 730) < 0.5'
    check mig 'not any(x["provider"] == "lambda" for x in c)'
    grep -qF 'layout: {"1g.10gb": 7}' "$tmp/mig/cluster.yaml" || failed "mig: no 1g.10gb x 7 layout"
    echo "ok   MIG pods on an A100 cut in seven 1g.10gb, not on a provider without MIG"
fi
if OFFERS=share-offers.yaml plan mps mps.yaml gke-only.yaml; then
    check mps 'w["what"] == "1x1 L4-24GB mps4" and w["limits_met"] and w["pools"][0]["sharing"] == "mps x4"'
    check mps 'abs(w["monthly_usd"] - (1.00 + 0.10) * 730) < 0.5 and w["sim"]["pods_scheduled"] == 4'
    check mps 'not any("timeslice" in (p["sharing"] or "") for x in c for p in x["pools"])'
    # both candidates' idle GPUs cost a tiny negative float: shown as $0, not $-0
    grep -q 'idle GPUs \$0 against \$0' "$tmp/mps.out" || failed "mps: the idle GPUs not shown as \$0"
    ! grep -q '\$-0' "$tmp/mps.out" || failed "mps: a dollar figure printed as \$-0"
    echo "ok   pods that accept MPS only on an MPS pool"
fi
if OFFERS=share-offers.yaml plan zone zone.yaml eks-only.yaml --out "$tmp/zone"; then
    check zone 'w["what"] == "2x1 L4-24GB" and w["limits_met"] and w["sim"]["pods_scheduled"] == 2'
    check zone 'abs(w["monthly_usd"] - (2 * 1.00 + 0.10) * 730) < 0.5'
    grep -qF '"topology.kubernetes.io/zone": "us-east-1b"' "$tmp/zone/cluster.yaml" ||
        failed "zone: the pool is not labelled with the zone of its region"
    echo "ok   pods that require a zone get a pool labelled with it"
fi

# the inference services' p99 latency (the simulator's M/M/c model, about
# 0.5 s here): a limit of 1 ms is met by no candidate, one of 10 s by all
if plan strict service.yaml latency-1ms.yaml && plan loose service.yaml latency-10s.yaml; then
    check strict 'd["winner"] is None and all(not x["limits_met"] for x in sim)'
    check strict 'w["latency_p99_margin_s"] < 0 and w["sim"]["service_latency_p99_s"] > 0.001'
    grep -q "service p99 latency" "$tmp/strict.out" || failed "strict: no word on the latency"
    check loose 'd["winner"] is not None and w["limits_met"] and w["latency_p99_margin_s"] > 0'
    echo "ok   the services' p99 latency limit"
fi

# the same plan on one thread and on four
"$gp" plan --threads 1 --json "$tmp/t1.json" --quiet 2>"$tmp/err" || failed "demo plan: $(cat "$tmp/err")"
"$gp" plan --threads 4 --json "$tmp/t4.json" --quiet 2>"$tmp/err" || failed "demo plan: $(cat "$tmp/err")"
cmp -s "$tmp/t1.json" "$tmp/t4.json" || failed "the demo plan differs between 1 and 4 threads"
echo "ok   the same plan on 1 and 4 threads"

# --out: the winner's spec, which the simulator and render read back
if plan out two-services.yaml eks-only.yaml --out "$tmp/out" --report "$tmp/out.html"; then
    [ -s "$tmp/out/cluster.yaml" ] || failed "--out: no cluster.yaml"
    [ -s "$tmp/out/node-labels.yaml" ] || failed "--out: no render files"
    grep -q "<svg" "$tmp/out.html" || failed "--report: no chart"
    "$gp" sim --cluster "$tmp/out/cluster.yaml" --workload "$data/two-services.yaml" \
        --horizon 24h --quiet --json "$tmp/replay.json" 2>"$tmp/err" ||
        failed "--out: the spec does not simulate: $(cat "$tmp/err")"
    echo "ok   --out writes a spec the simulator reads"
fi

# bad limits files: exit 2, one line FILE:LINE:COL: PATH: ..., nothing on stdout
bad() {
    local name="$1" want="$2"
    "$gp" plan --workload "$data/one-notebook.yaml" --limits "$data/bad/$name" \
        >"$tmp/bad.out" 2>"$tmp/bad.err"
    local rc=$?
    [ "$rc" -eq 2 ] || failed "bad/$name: exit $rc, expected 2"
    [ -s "$tmp/bad.out" ] && failed "bad/$name: something on stdout"
    [ "$(wc -l <"$tmp/bad.err")" -eq 1 ] || failed "bad/$name: not one line: $(cat "$tmp/bad.err")"
    grep -qF -- "$want" "$tmp/bad.err" || failed "bad/$name: '$(cat "$tmp/bad.err")' lacks '$want'"
}
bad unknown-field.yaml "unknown-field.yaml:4:3: spec.queueDelayP99: unknown field"
bad bad-duration.yaml "bad-duration.yaml:4:18: spec.queueDelayP95: expected a duration"
bad wrong-kind.yaml "wrong-kind.yaml:2:7: kind: expected \"PlanLimits\""
bad unknown-provider.yaml "unknown-provider.yaml:5:22: spec.avoid.providers[1]: no provider \"awss\""
bad bad-budget.yaml "bad-budget.yaml:4:18: spec.monthlyBudget: expected a number"
bad bad-bool.yaml "bad-bool.yaml:5:17: spec.require.rwxStorage: expected true or false"
bad two-docs.yaml "two-docs.yaml:5:1: a second YAML document"
bad no-spec.yaml "missing required field \"spec\""
"$gp" plan --limits "$tmp/none.yaml" >/dev/null 2>&1
[ $? -eq 2 ] || failed "a missing limits file does not exit 2"
echo "ok   bad limits files"

if [ "$fails" -ne 0 ]; then
    echo "$fails plan check(s) failed"
    exit 1
fi
echo "all plan checks pass"
