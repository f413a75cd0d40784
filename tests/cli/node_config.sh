#!/usr/bin/env bash
# node_config.sh - `gpuplane node agent --config-file` with NVIDIA
# k8s-device-plugin's configuration file: its sharing and MIG strategy
# followed (the resources the agent serves say so), flags given on the
# command line over the file's, rename and devices warned about, bad files
# refused with one line naming file, line and field (exit 2), and
# failOnInitError false waiting after a failed start instead of exiting.
set -uo pipefail
gp="${GPUPLANE:?}"
. "${GP_SRC:?}/tests/cli/lib/common.sh"

cat >"$tmp/inv.json" <<'JSON'
{"driver": "535.104.05", "cuda": 12020,
 "gpus": [{"index": 0, "uuid": "GPU-a", "name": "NVIDIA A100-SXM4-80GB", "memory_mib": 81920, "cc": "8.0"}]}
JSON
mkdir "$tmp/dp"
run() { # the agent for half a second; its log in $tmp/log
    "$gp" node agent --no-api --no-cdi --inventory "$tmp/inv.json" --plugin-dir "$tmp/dp" --max-s 0.5 "$@" \
        >/dev/null 2>"$tmp/log"
}

# NVIDIA's README, "With CUDA Time-Slicing" with renameByDefault
cat >"$tmp/ts.yaml" <<'YAML'
version: v1
sharing:
  timeSlicing:
    renameByDefault: true
    resources:
    - name: nvidia.com/gpu
      replicas: 10
      rename: nvidia.com/gpu-0
YAML
run --config-file "$tmp/ts.yaml"
rc=$?
[ "$rc" = 0 ] || failed "time-slicing file: exit $rc: $(cat "$tmp/log")"
grep -q "serving nvidia.com/gpu.shared" "$tmp/log" || failed "renameByDefault not followed: $(cat "$tmp/log")"
grep -q "warning: $tmp/ts.yaml: sharing.timeSlicing.resources\[0\].rename: \"nvidia.com/gpu-0\": renaming a resource is not supported" "$tmp/log" ||
    failed "no warning for rename: $(cat "$tmp/log")"
# a flag over the file: --time-slicing replaces the file's sharing
run --config-file "$tmp/ts.yaml" --time-slicing 2
grep -q "serving nvidia.com/gpu$" "$tmp/log" || failed "--time-slicing over the file: $(cat "$tmp/log")"

# bad files: one line, exit 2
printf 'version: v1\nflags:\n  migStrategy: half\n' >"$tmp/bad.yaml"
run --config-file "$tmp/bad.yaml"
rc=$?
[ "$rc" = 2 ] || failed "bad migStrategy: exit $rc"
want="gpuplane: $tmp/bad.yaml:3:16: flags.migStrategy: expected none, single or mixed, got \"half\""
[ "$(cat "$tmp/log")" = "$want" ] || failed "bad migStrategy: got \"$(cat "$tmp/log")\", want \"$want\""
printf 'sharing:\n  mps:\n    resources:\n    - name: nvidia.com/gpu\n' >"$tmp/bad2.yaml"
run --config-file "$tmp/bad2.yaml"
rc=$?
[ "$rc" = 2 ] && [ "$(wc -l <"$tmp/log")" = 1 ] && grep -q "bad2.yaml:4:7: sharing.mps.resources\[0\]: missing required field \"replicas\"" "$tmp/log" ||
    failed "missing replicas: exit $rc: $(cat "$tmp/log")"
run --config-file "$tmp/none.yaml"
rc=$?
[ "$rc" = 2 ] && grep -q "none.yaml" "$tmp/log" || failed "missing file: exit $rc: $(cat "$tmp/log")"

# failOnInitError false: a failed start waits (here for SIGTERM) and exits 0
printf 'flags:\n  failOnInitError: false\n' >"$tmp/wait.yaml"
"$gp" node agent --no-api --no-cdi --inventory "$tmp/nope.json" --plugin-dir "$tmp/dp" --config-file "$tmp/wait.yaml" \
    >/dev/null 2>"$tmp/log" &
pid=$!
deadline=$((SECONDS + 60)) # until it says it waits (slow under the sanitizers, under load)
while [ "$SECONDS" -lt "$deadline" ] && kill -0 "$pid" 2>/dev/null; do
    grep -q "waiting" "$tmp/log" && break
    sleep 0.1
done
sleep 0.3
kill -0 "$pid" 2>/dev/null || failed "failOnInitError false: the agent exited: $(cat "$tmp/log")"
kill -TERM "$pid" 2>/dev/null
wait "$pid"
rc=$?
[ "$rc" = 0 ] && grep -q "failOnInitError is false: waiting" "$tmp/log" || failed "failOnInitError false: exit $rc: $(cat "$tmp/log")"
printf 'flags:\n  failOnInitError: true\n' >"$tmp/fail.yaml"
"$gp" node agent --no-api --no-cdi --inventory "$tmp/nope.json" --plugin-dir "$tmp/dp" --config-file "$tmp/fail.yaml" \
    >/dev/null 2>"$tmp/log"
rc=$?
[ "$rc" != 0 ] && ! grep -q "waiting" "$tmp/log" || failed "failOnInitError true: exit $rc: $(cat "$tmp/log")"

[ "$fails" = 0 ] && echo "node_config: all passed"
exit $((fails > 0))
