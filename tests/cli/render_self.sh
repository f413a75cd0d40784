#!/usr/bin/env bash
# render_self.sh - `gpuplane render --self`: gpuplane's own deployment
# matches tests/golden/deploy-self.yaml byte for byte, --out writes the
# same documents one file each (numbered, so `kubectl apply -f DIR` makes
# the Namespace first), two runs agree, the options change what they say,
# and bad options give one line on stderr, exit code 2 and no output.
# GP_UPDATE_GOLDEN=1 rewrites the golden file (review the diff).
set -uo pipefail
gp="${GPUPLANE:?}"
src="${GP_SRC:?}"
golden="$src/tests/golden/deploy-self.yaml"
. "$src/tests/cli/lib/common.sh"

"$gp" render --self >"$tmp/stream" 2>"$tmp/err" || failed "render --self: $(cat "$tmp/err")"
[ -s "$tmp/err" ] && failed "render --self wrote to stderr: $(cat "$tmp/err")"
if [ "${GP_UPDATE_GOLDEN:-0}" = 1 ]; then
    cp "$tmp/stream" "$golden"
    echo "updated $golden"
fi
if ! diff -u "$golden" "$tmp/stream" >"$tmp/diff"; then
    failed "render --self differs from $golden:"
    head -40 "$tmp/diff"
fi
"$gp" render --self >"$tmp/again" 2>/dev/null
cmp -s "$tmp/stream" "$tmp/again" || failed "two runs differ"
echo "ok   golden stream"

# --- --out: the same documents, one file each, in name order ---------------
"$gp" render --self --out "$tmp/out" >"$tmp/wrote" 2>"$tmp/err" || failed "--out: $(cat "$tmp/err")"
want="00-namespace.yaml 01-serviceaccount.yaml 02-clusterrole.yaml 03-clusterrolebinding.yaml 04-role.yaml 05-rolebinding.yaml 06-configmap.yaml 07-deployment.yaml"
got=$(cd "$tmp/out" && echo *)
[ "$got" = "$want" ] || failed "--out wrote '$got', expected '$want'"
: >"$tmp/expected"
for f in $got; do
    printf -- '---\n# file: %s\n' "$f" >>"$tmp/expected"
    cat "$tmp/out/$f" >>"$tmp/expected"
done
cmp -s "$tmp/stream" "$tmp/expected" || failed "the files in name order are not the stream"
[ "$(wc -l <"$tmp/wrote")" -eq 8 ] || failed "--out: expected 8 'wrote' lines"
echo "ok   --out: $got"

# --- options ------------------------------------------------------------------
"$gp" render --self --no-namespace --namespace team-a --image reg.example/gp:1 \
    --scheduler-name gpu-a --policy fgd --replicas 3 >"$tmp/opts" 2>"$tmp/err" || failed "options: $(cat "$tmp/err")"
grep -q '^kind: Namespace$' "$tmp/opts" && failed "--no-namespace: a Namespace was written"
[ "$(grep -c '^  namespace: team-a$' "$tmp/opts")" -eq 7 ] ||
    failed "--namespace team-a: expected 5 namespaced objects and 2 subjects in team-a"
[ "$(grep -c '^  namespace: team-a$' "$tmp/opts")" -eq "$(grep -c '^  namespace: ' "$tmp/opts")" ] ||
    failed "--namespace team-a: another namespace was written"
grep -q '^        image: "reg.example/gp:1"$' "$tmp/opts" || failed "--image: not the container's image"
grep -q '^  schedulerName: gpu-a$' "$tmp/opts" || failed "--scheduler-name: not in the ConfigMap"
grep -q '^  replicas: 3$' "$tmp/opts" || failed "--replicas 3: not the Deployment's"
grep -q '^  policy: fgd$' "$tmp/opts" || failed "--policy fgd: not in the ConfigMap"
echo "ok   options"

# --- the Deployment's args are flags gpuplane schedule takes -------------------
# as the kubelet gives them: $(VAR) replaced by the env's values; a missing
# kubeconfig is then the first error, not an unknown or bad flag
args=$(sed -n '/^        args:$/,/^        env:$/p' "$tmp/out/07-deployment.yaml" | sed -n 's/^        - //p' |
    sed 's/^"\(.*\)"$/\1/; s/\$(GPUPLANE_SCHEDULER_NAME)/gpuplane/; s/\$(GPUPLANE_POLICY)/best-fit/;
         s/\$(POD_NAMESPACE)/gpuplane-system/; s/\$(POD_NAME)/gpuplane-scheduler-0/')
[ "$(echo "$args" | head -1)" = schedule ] || failed "the Deployment's args do not start with schedule"
# shellcheck disable=SC2086
"$gp" $args --kubeconfig "$tmp/no-kubeconfig" >"$tmp/stdout" 2>"$tmp/stderr"
rc=$?
if [ "$rc" -ne 2 ] || ! grep -q "no-kubeconfig" "$tmp/stderr" || grep -qi "option\|expected" "$tmp/stderr"; then
    failed "gpuplane $(echo $args) refused its flags (exit $rc): $(cat "$tmp/stderr")"
else
    echo "ok   gpuplane schedule takes the Deployment's args: $(echo $args)"
fi

# --- bad input: one line, exit 2, nothing written ----------------------------
. "$src/tests/cli/lib/render_expect.sh"
expect "both forms" "--self and --cluster: one or the other" --self --cluster x.yaml
expect "--image without --self" "--image goes with --self" --cluster x.yaml --image a
expect "--replicas 0" "--replicas 0: expected 1 to 10" --self --replicas 0 --out "$tmp/bad-out"
expect "--replicas abc" "--replicas abc: expected 1 to 10" --self --replicas abc
expect "--replicas -1" "--replicas -1: expected 1 to 10" --self --replicas -1
expect "--namespace" "--namespace Bad_NS: expected a DNS-1123 label" --self --namespace Bad_NS \
    --out "$tmp/bad-out"
expect "--scheduler-name" "--scheduler-name A: expected a DNS-1123 subdomain" --self \
    --scheduler-name A
expect "--image" "--image: expected an image reference without spaces" --self --image "a b"
expect "--policy" "--policy: unknown policy 'tightest' \\(expected one of: random, best-fit" --self \
    --policy tightest

if [ "$fails" -ne 0 ]; then
    echo "$fails render --self check(s) failed"
    exit 1
fi
echo "all render --self checks pass"
