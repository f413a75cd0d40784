#!/usr/bin/env bash
# schedule_live.sh - the `gpuplane schedule` binary as a user runs it,
# against the API server double (tests/apidouble) over HTTP on loopback,
# with a kubeconfig: two 8-GPU nodes (one labelled as running gpuplane's
# node agent, one not), five 2-GPU pods for gpuplane, one for another
# scheduler (left alone) and one asking 9 GPUs (fits nowhere). Checks every
# gpuplane pod bound once with its annotations naming its node and GPUs no
# other pod holds, the big one PodScheduled=False with a FailedScheduling
# Event in kube-scheduler's words, /metrics counting those decisions,
# /healthz and /readyz answering, every object the scheduler sent valid
# against the published schemas (when ../shared is there), a clean exit on
# SIGTERM with its summary, and the --record log replaying through
# `gpuplane sim --replay` to the same decisions (and a tampered log not).
# Skipped (77) without the double or python3.
set -uo pipefail
gp="${GPUPLANE:?}"
double="$(dirname "$gp")/tests/apidouble/apidouble"
shared="${GP_SHARED:-${GP_SRC:?}/../shared}"
if [ ! -x "$double" ] || ! command -v python3 >/dev/null; then
    echo "SKIP: needs $double and python3"
    exit 77
fi
. "${GP_SRC:?}/tests/cli/lib/common.sh"
dpid= spid=
trap '[ -n "$spid" ] && kill "$spid" 2>/dev/null; [ -n "$dpid" ] && kill "$dpid" 2>/dev/null; rm -rf "$tmp"' EXIT

schemas=()
if [ -r "$shared/k8s/schemas/api__v1_openapi.json" ]; then
    schemas=(--schemas "$shared/k8s/schemas")
else
    echo "note: no $shared/k8s/schemas: objects not checked against the schemas"
fi
# the double plays the node agent: a pod bound on the agent's node is
# marked allocated at once (--auto-allocate 0)
"$double" --port 0 --auto-allocate 0 "${schemas[@]}" >"$tmp/port" 2>"$tmp/double.err" &
dpid=$!
# wait_for FILE PATTERN SECONDS: until a line of FILE matches (a sanitizer
# build on a loaded machine starts slowly)
wait_for() {
    local deadline=$((SECONDS + $3))
    while ! grep -qE "$2" "$1" 2>/dev/null && [ "$SECONDS" -lt "$deadline" ]; do sleep 0.1; done
    grep -qE "$2" "$1" 2>/dev/null
}
wait_for "$tmp/port" '^port [0-9]+' 60 || { echo "FAIL the double did not start: $(cat "$tmp/double.err")"; exit 1; }
port=$(sed -n 's/^port \([0-9]*\).*/\1/p' "$tmp/port")
kubeconfig_for "$port" "$tmp/kubeconfig"
# http PORT METHOD PATH [BODY]: the answer's body (exit 1 on an HTTP error)
http() {
    python3 - "$@" <<'PY'
import sys, urllib.request, urllib.error
port, method, path = sys.argv[1:4]
body = sys.argv[4].encode() if len(sys.argv) > 4 else None
ctype = "application/merge-patch+json" if method == "PATCH" else "application/json"
req = urllib.request.Request("http://127.0.0.1:%s%s" % (port, path), data=body, method=method,
                             headers={"Content-Type": ctype})
try:
    print(urllib.request.urlopen(req, timeout=30).read().decode())
except urllib.error.HTTPError as e:
    print("HTTP %d: %s" % (e.code, e.read().decode()), file=sys.stderr)
    sys.exit(1)
PY
}
api() { http "$port" "$@"; }

node() { # node NAME AGENT(true|false)
    local agent=""
    [ "$2" = true ] && agent=',"gpuplane.io/agent":"1"'
    api POST /api/v1/nodes '{"apiVersion":"v1","kind":"Node","metadata":{"name":"'"$1"'","labels":{"nvidia.com/gpu.product":"NVIDIA-A100-SXM4-80GB","nvidia.com/gpu.memory":"81920"'"$agent"'}},"spec":{}}' >/dev/null &&
        api PATCH "/api/v1/nodes/$1/status" '{"status":{"capacity":{"cpu":"64","memory":"512Gi","nvidia.com/gpu":"8","pods":"110"},"allocatable":{"cpu":"64","memory":"512Gi","nvidia.com/gpu":"8","pods":"110"},"conditions":[{"type":"Ready","status":"True"}]}}' >/dev/null ||
        failed "creating node $1"
}
pod() { # pod NAME GPUS SCHEDULER
    api POST /api/v1/namespaces/default/pods '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"'"$1"'"},"spec":{"schedulerName":"'"$3"'","containers":[{"name":"c","image":"x","resources":{"requests":{"cpu":"1","memory":"1Gi","nvidia.com/gpu":"'"$2"'"},"limits":{"nvidia.com/gpu":"'"$2"'"}}}]}}' >/dev/null ||
        failed "creating pod $1"
}
node g1 true
node g2 false
for i in 1 2 3 4 5; do pod "train-$i" 2 gpuplane; done
pod other 1 default-scheduler
pod big 9 gpuplane

"$gp" schedule --kubeconfig "$tmp/kubeconfig" --leader-elect false --metrics-addr 127.0.0.1:0 \
    --record "$tmp/events.jsonl" --max-s 300 2>"$tmp/sched.err" &
spid=$!
if ! wait_for "$tmp/sched.err" 'on port [0-9]+' 60; then
    echo "FAIL the scheduler did not say where /metrics listens: $(cat "$tmp/sched.err")"
    exit 1
fi
mport=$(sed -n 's/.*on port \([0-9]*\).*/\1/p' "$tmp/sched.err" | head -1)

# the pods as the API shows them: NAME NODE ANNOTATED-NODE GPUS SCHEDULED-CONDITION
pods() {
    api GET /api/v1/namespaces/default/pods | python3 -c '
import json, sys
for p in json.load(sys.stdin)["items"]:
    m, s = p["metadata"], p["spec"]
    a = m.get("annotations") or {}
    cond = [c for c in (p.get("status") or {}).get("conditions") or [] if c.get("type") == "PodScheduled"]
    c = (cond[0]["status"] + "/" + cond[0].get("reason", "")) if cond else "-"
    print(m["name"], s.get("nodeName") or "-", a.get("gpuplane.io/node", "-"), a.get("gpuplane.io/gpus", "-"), c)'
}
deadline=$((SECONDS + 120))
while :; do
    pods >"$tmp/pods"
    bound=$(awk '$1 ~ /^train-/ && $2 != "-"' "$tmp/pods" | wc -l)
    grep -q '^big - - - False/Unschedulable$' "$tmp/pods" && [ "$bound" -eq 5 ] && break
    [ "$SECONDS" -lt "$deadline" ] || break
    sleep 0.2
done
cat "$tmp/pods"
[ "$bound" -eq 5 ] && echo "ok   the five pods bound" || failed "$bound of the 5 pods bound"
grep -q '^big - - - False/Unschedulable$' "$tmp/pods" && echo "ok   big: PodScheduled=False, Unschedulable" ||
    failed "big is not PodScheduled=False (Unschedulable)"
grep -q '^other - - - -$' "$tmp/pods" && echo "ok   another scheduler's pod left alone" ||
    failed "another scheduler's pod was touched: $(grep '^other ' "$tmp/pods")"
# each bound pod's annotation names its node, and no GPU of a node twice
if awk '$1 ~ /^train-/ { if ($2 != $3 || $4 == "-") bad = 1; n = split($4, g, ",")
        for (i = 1; i <= n; i++) if (seen[$2 "/" g[i]]++) bad = 1; c += n }
        END { exit bad || c != 10 }' "$tmp/pods"; then
    echo "ok   annotations name the bound node, 10 GPUs, none twice"
else
    failed "annotations: a node differs from nodeName, a GPU is given twice or not 10 GPUs in all"
fi

api GET /apis/events.k8s.io/v1/namespaces/default/events | python3 -c '
import json, sys
for e in json.load(sys.stdin)["items"]:
    r = e.get("regarding") or {}
    print(r.get("name"), e.get("reason"), e.get("type"), "|", e.get("note"))' >"$tmp/events"
if grep -qE '^big FailedScheduling Warning \| 0/2 nodes are available: 2 Insufficient nvidia\.com/gpu\.' "$tmp/events"; then
    echo "ok   big's FailedScheduling Event in kube-scheduler's words"
else
    failed "no FailedScheduling Event for big saying '0/2 nodes are available: 2 Insufficient nvidia.com/gpu.': $(grep '^big ' "$tmp/events")"
fi

http "$mport" GET /metrics >"$tmp/metrics" || failed "GET /metrics"
metric() { awk -v k="$1" '$1 == k { print $2 }' "$tmp/metrics"; }
[ "$(metric 'gpuplane_scheduler_decisions_total{result="scheduled"}')" = 5 ] &&
    echo "ok   /metrics: 5 decisions scheduled" ||
    failed "/metrics: scheduled decisions $(metric 'gpuplane_scheduler_decisions_total{result="scheduled"}'), expected 5"
u=$(metric 'gpuplane_scheduler_decisions_total{result="unschedulable"}')
[ -n "$u" ] && [ "$u" -ge 1 ] 2>/dev/null && echo "ok   /metrics: $u unschedulable" ||
    failed "/metrics: unschedulable decisions '$u', expected at least 1"
a=$(awk '$1 ~ /^gpuplane_scheduler_audit_violations_total\{/ { n++; s += $2 } END { print n "/" s }' "$tmp/metrics")
[ "$a" = 3/0 ] && echo "ok   /metrics: no audit violation (gpu, mig, memory)" ||
    failed "/metrics: audit violations (series/sum) $a, expected 3/0"
for p in /healthz /readyz; do
    http "$mport" GET "$p" >/dev/null && echo "ok   $p answers" || failed "$p does not answer 200"
done

kill -TERM "$spid"
wait "$spid"
rc=$?
spid=
[ "$rc" = 0 ] && echo "ok   SIGTERM: exit 0" || failed "the scheduler exited $rc on SIGTERM: $(cat "$tmp/sched.err")"
grep -q '^gpuplane schedule: 5 bound, [0-9]* unschedulable, 0 rolled back, 0 audit violations$' "$tmp/sched.err" &&
    echo "ok   its summary: $(tail -1 "$tmp/sched.err")" || failed "summary: $(tail -1 "$tmp/sched.err")"

if [ ${#schemas[@]} -gt 0 ]; then
    errs=$(api GET /_control/stats | python3 -c 'import json, sys; print(json.load(sys.stdin)["schema_errors"])')
    [ "$errs" = 0 ] && echo "ok   every object sent is valid against the published schemas" ||
        failed "$errs objects the scheduler sent are not valid against the schemas: $(cat "$tmp/double.err")"
fi

if "$gp" sim --replay "$tmp/events.jsonl" >"$tmp/replay.out" 2>&1; then
    echo "ok   sim --replay: the same decisions ($(tail -1 "$tmp/replay.out"))"
else
    failed "sim --replay exited $?: $(cat "$tmp/replay.out")"
fi
# a log whose first bind names other GPUs must not replay as the same
python3 - "$tmp/events.jsonl" >"$tmp/tampered.jsonl" <<'PY'
import json, sys
done = False
for line in open(sys.argv[1]):
    e = json.loads(line)
    if not done and e.get("ev") == "decision" and e.get("kind") == "bind":
        e["pick"]["gpus"] = [6, 7] if sorted(e["pick"]["gpus"]) != [6, 7] else [0, 1]
        done = True
    print(json.dumps(e, separators=(",", ":")))
PY
"$gp" sim --replay "$tmp/tampered.jsonl" >"$tmp/tampered.out" 2>&1
rc=$?
[ "$rc" = 1 ] && echo "ok   a tampered log: exit 1 ($(head -1 "$tmp/tampered.out"))" ||
    failed "a tampered log replayed with exit $rc: $(cat "$tmp/tampered.out")"
exit $((fails > 0))
