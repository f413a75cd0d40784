#!/usr/bin/env bash
# provider_limits.sh - the providers' limits (docs/FORMATS.md, "Provider
# limits"; data/provider-limits.json): a pool's billingGranularity and
# billingMinimum round each node's billed time exactly (figures worked by
# hand below), maxNodeLifetime replaces nodes at that age and evicts their
# pods, the planner writes both from the catalog and `nodeLifetimes` turns
# the EKS Auto Mode lifetime on, `providers --json` shows each limit with
# its source, and bad values get one line and exit 2.
set -uo pipefail
gp="${GPUPLANE:?}"
src="${GP_SRC:?}"
data="$src/tests/data/limits"
. "$src/tests/cli/lib/common.sh"

# sim NAME CLUSTER WORKLOAD: the run's JSON in NAME.json
sim() {
    "$gp" sim --cluster "$2" --workload "$3" --quiet --no-progress --json "$tmp/$1.json" \
        2>"$tmp/$1.err" || failed "$1: gpuplane sim failed: $(cat "$tmp/$1.err")"
}
# check NAME PYTHON: the expression holds for d (the JSON)
check() {
    python3 - "$tmp/$1.json" "$2" <<'PY' || failed "$1: $2"
import json, sys
d = json.load(open(sys.argv[1]))
sys.exit(0 if eval("(" + sys.argv[2] + ")") else 1)
PY
}

# Billing: the node is requested at 0 and billed until the run ends at
# 15 min (5 min boot, a 10-minute job). By the hour at $36: 15 min exact
# ($9) plus 45 min of rounding ($27); with a 2-hour minimum, $63 of it.
sim hourly "$data/bill-hourly.yaml" "$data/short-job.yaml"
check hourly 'd["provider_limits"]["billing_rounding_usd"] == 27.0 and d["cost_usd"] == 36.0'
check hourly 'd["cost"]["by_pool"][0]["billing_rounding_usd"] == 27.0'
sed 's/billingGranularity: 1h/billingGranularity: 1h\n    billingMinimum: 2h/' \
    "$data/bill-hourly.yaml" >"$tmp/minimum.yaml"
sim minimum "$tmp/minimum.yaml" "$data/short-job.yaml"
check minimum 'd["provider_limits"]["billing_rounding_usd"] == 63.0 and d["cost_usd"] == 72.0'
grep -v billing "$data/bill-hourly.yaml" >"$tmp/exact.yaml"
sim exact "$tmp/exact.yaml" "$data/short-job.yaml"
check exact '"provider_limits" not in d and d["cost_usd"] == 9.0'
echo "ok   billing granularity and minimum, to the cent"

# Lifetime: five days on nodes that live two days, checkpointed every 6 h:
# the job is evicted at each replacement, loses at most 6 h x 8 GPUs each
# time, and still completes; without the lifetime nothing is replaced.
sim life "$data/lifetime-2d.yaml" "$data/long-job.yaml"
check life 'd["provider_limits"]["node_expirations"] >= 2 and d["provider_limits"]["evictions"] >= 2'
check life '0 < d["provider_limits"]["lost_gpu_hours"] <= d["provider_limits"]["evictions"] * 6 * 8'
check life 'd["jobs"]["completed"] == 1 and d["cost"]["by_pool"][0]["expirations"] == d["provider_limits"]["node_expirations"]'
grep -v maxNodeLifetime "$data/lifetime-2d.yaml" >"$tmp/forever.yaml"
sim forever "$tmp/forever.yaml" "$data/long-job.yaml"
check forever '"provider_limits" not in d and d["jobs"]["completed"] == 1 and d["autoscaler"]["nodes_requested"] == 0'
"$gp" sim --cluster "$data/lifetime-2d.yaml" --workload "$data/long-job.yaml" --no-progress \
    >"$tmp/life.txt" 2>&1 || failed "life: the summary failed"
grep -q "node lifetime .* replaced at their maximum age" "$tmp/life.txt" ||
    failed "life: the summary does not say the nodes were replaced"
echo "ok   nodes replaced at maxNodeLifetime, their pods evicted and resumed"

# The planner: billing from the catalog, and EKS Auto Mode's 21 days when
# the limits ask for it (the month-long job then loses work once).
plan() {
    "$gp" plan --workload "$data/pretrain-30d.yaml" --limits "$1" --horizon 40d \
        --providers "$src/tests/data/plan/offers.yaml" --json "$tmp/$2.json" --quiet "${@:3}" \
        2>"$tmp/$2.err" || failed "$2: gpuplane plan failed: $(cat "$tmp/$2.err")"
}
plan "$data/plan-lifetimes.yaml" auto --out "$tmp/out"
grep -v nodeLifetimes "$data/plan-lifetimes.yaml" >"$tmp/groups.yaml"
plan "$tmp/groups.yaml" groups
check auto 'd["candidates"][0]["sim"]["node_expirations"] >= 1 and d["candidates"][0]["sim"]["lost_work_usd"] > 0'
check groups 'd["candidates"][0]["sim"]["node_expirations"] == 0'
grep -q "maxNodeLifetime: 504h" "$tmp/out/cluster.yaml" || failed "plan --out: no maxNodeLifetime"
echo "ok   the planner applies EKS Auto Mode's node lifetime when asked"

# The catalog: each limit with its source.
"$gp" providers --json >"$tmp/providers.json" 2>"$tmp/err" || failed "providers --json: $(cat "$tmp/err")"
python3 - "$tmp/providers.json" <<'PY' || failed "providers --json: the limits"
import json, sys
p = {x["id"]: x["limits"] for x in json.load(open(sys.argv[1]))}
assert p["gke"]["billing_minimum_s"] == 60 and p["gke"]["source"].startswith("https://")
assert p["eks"]["max_node_lifetime_h"] == 504 and "Auto Mode" in p["eks"]["max_node_lifetime_scope"]
assert p["lambda"]["max_node_lifetime_h"] is None and p["lambda"]["source"] is None
PY
echo "ok   providers --json shows the limits and their sources"

# Bad values: one line naming the field, exit 2.
bad() {
    local name="$1" field="$2" want="$3"
    sed "s/^    pricePerHour: 40$/    pricePerHour: 40\n    $field/" "$data/lifetime-2d.yaml" |
        grep -v "maxNodeLifetime: 2d" >"$tmp/$name.yaml"
    "$gp" sim --cluster "$tmp/$name.yaml" --workload "$data/long-job.yaml" --quiet \
        >"$tmp/$name.out" 2>"$tmp/$name.err"
    local rc=$?
    [ $rc -eq 2 ] || failed "$name: exit $rc, not 2"
    [ "$(wc -l <"$tmp/$name.err")" -eq 1 ] || failed "$name: not one line: $(cat "$tmp/$name.err")"
    grep -q "$want" "$tmp/$name.err" || failed "$name: '$want' not in: $(cat "$tmp/$name.err")"
    [ ! -s "$tmp/$name.out" ] || failed "$name: wrote to stdout"
}
bad zero-life "maxNodeLifetime: 0s" "nodePools\[0\].maxNodeLifetime: expected a duration above 0"
bad short-life "maxNodeLifetime: 1m" "maxNodeLifetime: 60 s is not longer than the pool's bootTime"
bad zero-gran "billingGranularity: 0s" "billingGranularity: expected a duration above 0"
bad word-min "billingMinimum: often" "billingMinimum: expected a duration like"
echo "ok   bad limits: one line, exit 2"

[ "$fails" -eq 0 ] || exit 1
echo "all provider-limits checks passed"
