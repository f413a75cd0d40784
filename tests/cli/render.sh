#!/usr/bin/env bash
# render.sh - `gpuplane render` on examples/cluster-sharing.yaml: every file
# written with --out matches its golden file tests/golden/render-NAME byte
# for byte, the stdout stream is the same files in order, two runs agree,
# and bad input gives one line on stderr, exit code 2 and no output at all.
# GP_UPDATE_GOLDEN=1 rewrites the golden files (review the diff).
set -uo pipefail
gp="${GPUPLANE:?}"
src="${GP_SRC:?}"
golden="$src/tests/golden"
bad="$src/tests/data/bad"
cd "$src"
. "$src/tests/cli/lib/common.sh"

# --- the example against the golden files ---------------------------------
if ! "$gp" render --cluster examples/cluster-sharing.yaml --out "$tmp/out" >"$tmp/wrote" \
    2>"$tmp/err"; then
    failed "render --out: $(cat "$tmp/err")"
fi
files=$(cd "$tmp/out" && ls)
[ "$(wc -l <"$tmp/wrote")" -eq "$(echo "$files" | wc -l)" ] ||
    failed "render --out: expected one 'wrote' line per file"
if [ "${GP_UPDATE_GOLDEN:-0}" = 1 ]; then
    rm -f "$golden"/render-*.yaml
    for f in $files; do
        cp "$tmp/out/$f" "$golden/render-$f"
        echo "updated $golden/render-$f"
    done
fi
want=$(cd "$golden" && ls render-*.yaml | sed 's/^render-//')
[ "$files" = "$want" ] || failed "files written ($(echo $files)) differ from the golden ones ($(echo $want))"
for f in $files; do
    if [ -f "$golden/render-$f" ] && ! diff -u "$golden/render-$f" "$tmp/out/$f" >"$tmp/diff"; then
        failed "$f differs from $golden/render-$f:"
        head -40 "$tmp/diff"
    fi
done
echo "ok   golden files: $(echo $files)"

# --- stdout: the same files as one stream, in the order written ------------
"$gp" render --cluster examples/cluster-sharing.yaml >"$tmp/stream" 2>"$tmp/err" ||
    failed "render to stdout: $(cat "$tmp/err")"
: >"$tmp/expected"
while read -r line; do
    f="${line##*/}"
    printf -- '---\n# file: %s\n' "$f" >>"$tmp/expected"
    cat "$tmp/out/$f" >>"$tmp/expected"
done <"$tmp/wrote"
cmp -s "$tmp/stream" "$tmp/expected" || failed "the stdout stream is not the files in order"
"$gp" render --cluster examples/cluster-sharing.yaml >"$tmp/again" 2>/dev/null
cmp -s "$tmp/stream" "$tmp/again" || failed "two runs differ"
echo "ok   stdout stream"

# --- bad input: one line, exit 2, nothing written ----------------------------
. "$src/tests/cli/lib/render_expect.sh"
expect "no cluster" "--cluster FILE is required"
expect "unknown option" "unknown option '--format'" --cluster examples/cluster-sharing.yaml --format x
expect "missing file" "nope\.yaml" --cluster "$tmp/nope.yaml" --out "$tmp/bad-out"
expect "invalid MIG layout" \
    "sharing-mig-layout\.yaml:16:18: spec\.nodePools\[0\]\.sharing\.mig\.layout: \"4g\.40gb\": 2 instances, at most 1 on A100-80GB" \
    --cluster "$bad/sharing-mig-layout.yaml" --out "$tmp/bad-out"
expect "MPS over 48 clients" "sharing-mps-replicas\.yaml:15:17: .*sharing\.replicas: MPS allows at most 48" \
    --cluster "$bad/sharing-mps-replicas.yaml"
expect "MPS on MIG" "sharing-mps-on-mig\.yaml:16:13: .*sharing\.mps: .*MPS cannot run on a GPU in MIG mode" \
    --cluster "$bad/sharing-mps-on-mig.yaml" --out "$tmp/bad-out"
expect "pool named all-disabled" "pool all-disabled: a MIG pool cannot be named" \
    --cluster "$bad/sharing-pool-all-disabled.yaml" --out "$tmp/bad-out"
touch "$tmp/a-file"
expect "--out is a file" "--out .*a-file: is a file; expected a directory" \
    --cluster examples/cluster-sharing.yaml --out "$tmp/a-file"

if [ "$fails" -ne 0 ]; then
    echo "$fails render check(s) failed"
    exit 1
fi
echo "all render checks pass"
