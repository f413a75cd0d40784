#!/usr/bin/env bash
# schedule_config.sh - `gpuplane schedule` and its ConfigMap as a user
# meets them, against the API server double: the start says what it read
# (none: the flags' values; then the ConfigMap's policy), a bad ConfigMap
# at the start is one line naming the key and exit 2 before anything is
# scheduled, and the --config-* flags refuse what makes no sense (exit 2,
# one line), --no-config reads none. The live changes are test_kube_config.c's. Skipped (77)
# without the double or python3.
set -uo pipefail
gp="${GPUPLANE:?}"
double="$(dirname "$gp")/tests/apidouble/apidouble"
if [ ! -x "$double" ] || ! command -v python3 >/dev/null; then
    echo "SKIP: needs $double and python3"
    exit 77
fi
. "${GP_SRC:?}/tests/cli/lib/common.sh"
dpid=
trap '[ -n "$dpid" ] && kill "$dpid" 2>/dev/null; rm -rf "$tmp"' EXIT
"$double" --port 0 >"$tmp/port" 2>"$tmp/double.err" &
dpid=$!
for _ in $(seq 600); do grep -qE '^port [0-9]+' "$tmp/port" 2>/dev/null && break; sleep 0.1; done
port=$(sed -n 's/^port \([0-9]*\).*/\1/p' "$tmp/port")
[ -n "$port" ] || { echo "FAIL the double did not start: $(cat "$tmp/double.err")"; exit 1; }
kubeconfig_for "$port" "$tmp/kubeconfig"
cm=/api/v1/namespaces/gpuplane-system/configmaps
api() { # api METHOD PATH [BODY]
    python3 - "$port" "$@" <<'PY'
import sys, urllib.request
port, method, path = sys.argv[1:4]
body = sys.argv[4].encode() if len(sys.argv) > 4 else None
ctype = "application/merge-patch+json" if method == "PATCH" else "application/json"
req = urllib.request.Request("http://127.0.0.1:%s%s" % (port, path), data=body, method=method,
                             headers={"Content-Type": ctype})
urllib.request.urlopen(req, timeout=30).read()
PY
}
run() { "$gp" schedule --kubeconfig "$tmp/kubeconfig" --leader-elect false --max-s 0.5 "$@"; }

# no ConfigMap: the flags' values, said at the start
run --policy fgd >/dev/null 2>"$tmp/err" || failed "no ConfigMap: exit $?: $(cat "$tmp/err")"
grep -q '^gpuplane schedule: ConfigMap gpuplane-system/gpuplane-scheduler-config: none (the flags'"'"' values): policy=fgd ' "$tmp/err" &&
    echo "ok   no ConfigMap: the flags' values" || failed "no ConfigMap: $(cat "$tmp/err")"

# the ConfigMap's policy over the flag's
api POST "$cm" '{"metadata":{"name":"gpuplane-scheduler-config"},"data":{"policy":"spread"}}' ||
    failed "creating the ConfigMap"
run --policy fgd >/dev/null 2>"$tmp/err" || failed "a ConfigMap: exit $?: $(cat "$tmp/err")"
grep -q 'ConfigMap gpuplane-system/gpuplane-scheduler-config: read: policy=spread ' "$tmp/err" &&
    echo "ok   the ConfigMap's policy over --policy" || failed "a ConfigMap: $(cat "$tmp/err")"

# a bad one at the start: one line naming the key, exit 2
api PATCH "$cm/gpuplane-scheduler-config" '{"data":{"podInitialBackoffSeconds":"soon"}}' ||
    failed "patching the ConfigMap"
run >/dev/null 2>"$tmp/err"
rc=$?
want='gpuplane: ConfigMap gpuplane-system/gpuplane-scheduler-config: data.podInitialBackoffSeconds: expected seconds, a number > 0 and <= 86400, got "soon"'
if [ "$rc" = 2 ] && [ "$(wc -l <"$tmp/err")" = 1 ] && [ "$(cat "$tmp/err")" = "$want" ]; then
    echo "ok   a bad ConfigMap at the start: exit 2, $(cat "$tmp/err")"
else
    failed "a bad ConfigMap at the start: exit $rc: $(cat "$tmp/err")"
fi
# --no-config: none read, the bad one ignored
run --no-config >/dev/null 2>"$tmp/err" || failed "--no-config: exit $?: $(cat "$tmp/err")"
grep -q ConfigMap "$tmp/err" && failed "--no-config: a ConfigMap was read: $(cat "$tmp/err")"
echo "ok   --no-config: none read"

# bad flags
expect_usage() { # expect_usage LINE ARGS...
    local want=$1
    shift
    "$gp" schedule --kubeconfig "$tmp/kubeconfig" "$@" >/dev/null 2>"$tmp/err"
    local rc=$?
    if [ "$rc" = 2 ] && [ "$(cat "$tmp/err")" = "gpuplane: $want" ]; then
        echo "ok   $*: $want"
    else
        failed "$*: exit $rc: $(cat "$tmp/err")"
    fi
}
expect_usage 'schedule: --no-config and --config-namespace/--config-name: one or the other' \
    --no-config --config-name x
expect_usage "schedule: option '--config-name' needs a non-empty value" --config-name ""
exit $((fails > 0))
