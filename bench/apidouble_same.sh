#!/bin/bash
# apidouble_same.sh - whether two builds of the API double (tests/apidouble)
# answer alike: the same scripted requests (creates with and without the
# server's defaults, priority classes, scheduling gates, Bindings with
# annotations and resourceVersions and their refusals, the agent's mark,
# patches, deletes, lists with limit and continue, the request log) and
# watches (all pods, field selectors, from a resourceVersion, nodes) sent to
# each, every answer's status and body and every watch's stream compared
# byte for byte (timestamps masked). For changes to the double that no
# client may see (bench/RESULTS.md). Needs curl.
#   bench/apidouble_same.sh OLD_DOUBLE NEW_DOUBLE

[ $# -eq 2 ] || { echo "usage: apidouble_same.sh OLD_DOUBLE NEW_DOUBLE" >&2; exit 2; }
run() { # run DOUBLE OUTDIR
D=$1; O=$2; rm -rf $O; mkdir -p $O
coproc DBL { exec $D --port 0 --bookmark-ms 0 --auto-allocate 0; }
trap 'kill $DBL_PID 2>/dev/null' EXIT # not left running if this stops early
read -r _ port <&${DBL[0]}
U=http://127.0.0.1:$port
n=0
req() { # METHOD PATH [BODY] [CT]
  n=$((n+1)); local ct=${4:-application/json}
  if [ -n "$3" ]; then curl -s -o $O/a$n.body -w '%{http_code}\n' -X $1 -H "Content-Type: $ct" --data-binary "$3" $U$2 > $O/a$n.code
  else curl -s -o $O/a$n.body -w '%{http_code}\n' -X $1 $U$2 > $O/a$n.code; fi
}

W=""
watch() { curl -s -N --max-time 6 "$U$2" > $O/w$1 & W="$W $!"; sleep 0.2; }
req POST /apis/scheduling.k8s.io/v1/priorityclasses '{"metadata":{"name":"high"},"value":1000,"preemptionPolicy":"Never"}'
req POST /apis/scheduling.k8s.io/v1/priorityclasses '{"metadata":{"name":"def"},"value":7,"globalDefault":true}'
watch 1 "/api/v1/pods?watch=true"
watch 2 "/api/v1/pods?watch=true&fieldSelector=spec.nodeName%3Dn1"
watch 3 "/api/v1/nodes?watch=true"
sleep 0.5
for i in 1 2 3; do
  req POST /api/v1/nodes "{\"metadata\":{\"name\":\"n$i\",\"labels\":{\"a\":\"b\"}},\"status\":{\"capacity\":{\"cpu\":64,\"memory\":\"1Ti\",\"nvidia.com/gpu\":8,\"x\":1.5},\"allocatable\":{\"cpu\":64}}}"
done
for i in 1 2 3 4 5 6; do
  req POST /api/v1/namespaces/default/pods "{\"metadata\":{\"name\":\"p$i\",\"annotations\":{\"gpuplane.io/gpu-milli\":\"500\"}},\"spec\":{\"schedulerName\":\"gpuplane\",\"containers\":[{\"name\":\"c\",\"image\":\"x\",\"resources\":{\"requests\":{\"cpu\":\"1\",\"memory\":\"4Gi\"}}}]}}"
done
req POST /api/v1/namespaces/default/pods '{"metadata":{"name":"q1","labels":{"k":"v"}},"spec":{"priorityClassName":"high","tolerations":[{"key":"node.kubernetes.io/not-ready","operator":"Exists","effect":"NoExecute"}],"containers":[{"name":"c","image":"reg:5000/img:v1","resources":{"limits":{"cpu":2,"nvidia.com/gpu":1}}},{"name":"d","image":"img@sha256:ab"}]}}'
req POST /api/v1/namespaces/default/pods '{"metadata":{"name":"q2"},"spec":{"schedulingGates":[{"name":"g"}],"tolerations":[{"operator":"Exists"}],"restartPolicy":"Never","containers":[{"name":"c","image":"img:latest"}]}}'
req POST /api/v1/namespaces/default/pods '{"metadata":{"name":"q3","namespace":"other"},"spec":{"containers":[]}}'
req POST /api/v1/namespaces/default/pods '{"metadata":{"name":"p1"},"spec":{"containers":[]}}'
req POST /api/v1/namespaces/default/pods '{"metadata":{},"spec":{}}'
req POST /api/v1/namespaces/default/pods '[1,2]'
req POST /api/v1/namespaces/default/pods '{"metadata":{"name":"q4"}}'
req POST /api/v1/namespaces/default/pods '{"metadata":{"name":"q5"},"spec":"x"}'
req POST /api/v1/namespaces/default/pods 'not json'
# bindings: with annotations and a resourceVersion (one write), the agent's mark follows
rv=$(sed 's/.*"resourceVersion":"\([0-9]*\)".*/\1/' $O/a8.body)
req POST /api/v1/namespaces/default/pods/p1/binding "{\"metadata\":{\"name\":\"p1\",\"resourceVersion\":\"$rv\",\"annotations\":{\"gpuplane.io/node\":\"n1\",\"gpuplane.io/phase\":\"allocating\",\"gpuplane.io/gpus\":\"0\"}},\"target\":{\"kind\":\"Node\",\"name\":\"n1\"}}"
req POST /api/v1/namespaces/default/pods/p2/binding '{"metadata":{"name":"p2","resourceVersion":"1"},"target":{"kind":"Node","name":"n1"}}'
req POST /api/v1/namespaces/default/pods/p2/binding '{"metadata":{"name":"p2","annotations":{"gpuplane.io/node":"n2","gpuplane.io/phase":"allocating"}},"target":{"kind":"Node","name":"n1"}}'
req POST /api/v1/namespaces/default/pods/p3/binding '{"metadata":{"name":"p3","annotations":{"gpuplane.io/node":"n1","gpuplane.io/phase":"allocated"}},"target":{"name":"n1"}}'
req POST /api/v1/namespaces/default/pods/p1/binding '{"metadata":{"name":"p1"},"target":{"kind":"Node","name":"n2"}}'
req POST /api/v1/namespaces/default/pods/q2/binding '{"metadata":{"name":"q2"},"target":{"kind":"Node","name":"n2"}}'
req POST /api/v1/namespaces/default/pods/p4/binding '{"metadata":{"name":"px"},"target":{"kind":"Node","name":"n2"}}'
req POST /api/v1/namespaces/default/pods/p4/binding '{"metadata":{"name":"p4"},"target":{"kind":"Pod","name":"n2"}}'
req POST /api/v1/namespaces/default/pods/nope/binding '{"metadata":{"name":"nope"},"target":{"kind":"Node","name":"n2"}}'
# patches the old way: annotations then Binding
req PATCH /api/v1/namespaces/default/pods/p4 '{"metadata":{"annotations":{"gpuplane.io/node":"n1","gpuplane.io/phase":"allocating"}}}' application/merge-patch+json
req POST /api/v1/namespaces/default/pods/p4/binding '{"metadata":{"name":"p4"},"target":{"kind":"Node","name":"n1"}}'
req PATCH /api/v1/namespaces/default/pods/p5/status '{"status":{"conditions":[{"type":"PodScheduled","status":"False","reason":"Unschedulable"}]}}' application/strategic-merge-patch+json
req PATCH /api/v1/namespaces/default/pods/p5 '{"metadata":{"labels":{"x":"y"},"resourceVersion":"3"}}' application/merge-patch+json
req PATCH /api/v1/namespaces/default/pods/p5 '{"metadata":{"labels":{"x":"y"}}}' application/json
req GET /api/v1/namespaces/default/pods/p5
req PUT /api/v1/namespaces/default/pods/p6 "$(cat $O/a13.body)"
req DELETE /api/v1/namespaces/default/pods/p6
req DELETE /api/v1/namespaces/default/pods/p1 '{"gracePeriodSeconds":0}'
req GET '/api/v1/pods?limit=3'
req GET "/api/v1/pods?limit=3&continue=$(sed 's/.*"continue":"\([^"]*\)".*/\1/' $O/a$n.body)"
req GET '/api/v1/pods?fieldSelector=spec.nodeName%21%3D'
req GET /api/v1/nodes
req GET /api/v1/namespaces/default/pods/zz
req GET /api/v1/bogus/x/y/z/w
req PUT /api/v1/namespaces/default/pods
watch 4 "/api/v1/pods?watch=true&resourceVersion=3"
watch 5 "/api/v1/namespaces/default/pods?watch=true&resourceVersion=1&fieldSelector=spec.nodeName%3Dn1"
sleep 1
req GET /_control/requests
wait $W
kill $DBL_PID; wait $DBL_PID
sed -i -E 's/[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z/TS/g' $O/*
echo "$n requests, 5 watches"
}
tmp=$(mktemp -d)
run "$1" "$tmp/old" >/dev/null && run "$2" "$tmp/new" >/dev/null || exit 1
if diff -r "$tmp/old" "$tmp/new"; then
    echo "the same: $(ls "$tmp/old" | wc -l) files (each answer's status and body, each watch's stream)"
    rm -rf "$tmp"
else
    echo "different (kept in $tmp)" >&2
    exit 1
fi
