#!/usr/bin/env bash
# strict_manifest.sh - manifests are read as the API server reads them with
# fieldValidation=Strict: each class of bad manifest (unknown field, unknown
# resource, misspelt gpuplane domain or key, an object defined twice) is one
# line on stderr with file:line:column, the field path and the nearest valid
# name, exit 2 and no output; a field the simulation does not model is one
# warning line per field kind, and the run goes on.
set -uo pipefail
gp="${GPUPLANE:?}"
src="${GP_SRC:?}"
cluster="$src/examples/cluster-mixed.yaml"
. "$src/tests/cli/lib/common.sh"

job() { # job NAME CONTAINER-LINES... : a Job whose one container has the lines
    local name="$1"
    shift
    printf 'apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: %s\nspec:\n  template:\n' "$name"
    printf '    spec:\n      containers:\n      - name: c\n'
    for line in "$@"; do printf '        %s\n' "$line"; done
}

# expect NAME PATTERN FILE... : exit 2, one stderr line matching PATTERN, no outputs
expect() {
    local name="$1" pattern="$2"
    shift 2
    local args=()
    for f in "$@"; do args+=(--workload "$f"); done
    rm -f "$tmp"/out.*
    "$gp" sim --cluster "$cluster" "${args[@]}" --horizon 1h --json "$tmp/out.json" \
        >"$tmp/stdout" 2>"$tmp/stderr"
    local rc=$? lines
    lines=$(wc -l <"$tmp/stderr")
    if [ "$rc" -ne 2 ]; then
        echo "FAIL $name: exit code $rc, expected 2"; cat "$tmp/stderr"; fails=$((fails + 1))
    elif [ "$lines" -ne 1 ]; then
        echo "FAIL $name: expected one line on stderr, got $lines:"; cat "$tmp/stderr"
        fails=$((fails + 1))
    elif ! grep -Eq -- "$pattern" "$tmp/stderr"; then
        echo "FAIL $name: stderr does not match '$pattern':"; cat "$tmp/stderr"
        fails=$((fails + 1))
    elif ls "$tmp"/out.* >/dev/null 2>&1; then
        echo "FAIL $name: output files were left behind"; fails=$((fails + 1))
    else
        echo "ok   $name: $(cat "$tmp/stderr")"
    fi
}

job train 'resource: {limits: {nvidia.com/gpu: 1}}' >"$tmp/field.yaml"
expect "unknown field" \
    'field\.yaml:10:9: Job/train\.spec\.template\.spec\.containers\[0\]\.resource: unknown field; did you mean "resources"\?' \
    "$tmp/field.yaml"
job train 'resources: {limits: {cpu: 1}}' | sed 's/^  template:/  backOffLimit: 2\n  template:/' \
    >"$tmp/backoff.yaml"
expect "unknown field (Job spec)" \
    'backoff\.yaml:6:3: Job/train\.spec\.backOffLimit: unknown field; did you mean "backoffLimit"\?' \
    "$tmp/backoff.yaml"
job train 'resources: {limits: {nvidia.com/gpus: 1}}' >"$tmp/resource.yaml"
expect "unknown resource" \
    'resource\.yaml:10:30: .*limits\["nvidia\.com/gpus"\]: unknown resource; did you mean "nvidia\.com/gpu"\?' \
    "$tmp/resource.yaml"
job train 'resources: {limits: {nvida.com/gpu: 1}}' >"$tmp/vendor.yaml"
expect "unknown resource (vendor)" \
    'vendor\.yaml:10:30: .*unknown resource; did you mean "nvidia\.com/gpu"\?' "$tmp/vendor.yaml"
job train 'image: x' | sed 's/^  name: train/  name: train\n  annotations: {sim.gpuplan.io\/duration: 1h}/' \
    >"$tmp/domain.yaml"
expect "typo'd annotation domain" \
    'domain\.yaml:5:17: Job/train\.metadata\.annotations\["sim\.gpuplan\.io/duration"\]: unknown domain "sim\.gpuplan\.io"; did you mean "sim\.gpuplane\.io/duration"\?' \
    "$tmp/domain.yaml"
job train 'image: x' | sed 's/^  name: train/  name: train\n  annotations: {sim.gpuplane.io\/durration: 1h}/' \
    >"$tmp/key.yaml"
expect "unknown gpuplane key" \
    'key\.yaml:5:17: .*unknown gpuplane annotation; did you mean "sim\.gpuplane\.io/duration"\?' \
    "$tmp/key.yaml"
job train 'image: x' >"$tmp/a.yaml"
job train 'image: y' >"$tmp/b.yaml"
expect "duplicate object" \
    'b\.yaml:4:9: Job/train: defined twice in namespace "default" \(first at .*a\.yaml:4\)' \
    "$tmp/a.yaml" "$tmp/b.yaml"
mkdir -p "$tmp/dir"
cp "$tmp/a.yaml" "$tmp/dir/1.yaml"
cp "$tmp/b.yaml" "$tmp/dir/2.yaml"
expect "duplicate object in a directory" \
    '2\.yaml:4:9: Job/train: defined twice .*first at .*1\.yaml:4' "$tmp/dir"

# warnings: one line per field kind, whatever the number of objects; the run goes on
{
    job a 'livenessProbe: {exec: {command: ["true"]}}' 'resources: {limits: {cpu: 1}}'
    echo ---
    job b 'livenessProbe: {httpGet: {path: /, port: 80}}' 'securityContext: {runAsUser: 1}'
} >"$tmp/warn.yaml"
if ! "$gp" sim --cluster "$cluster" --workload "$tmp/warn.yaml" --horizon 1h --quiet \
    2>"$tmp/stderr"; then
    echo "FAIL warnings: the run failed"; cat "$tmp/stderr"; fails=$((fails + 1))
elif [ "$(grep -c '^warning: ' "$tmp/stderr")" -ne 2 ] ||
    ! grep -q '^warning: .*warn\.yaml:10: Job/a\.spec\.template\.spec\.containers\[0\]\.livenessProbe is not simulated; the simulation assumes the probe always succeeds$' "$tmp/stderr" ||
    ! grep -q '^warning: .*warn\.yaml:23: Job/b\..*securityContext is not simulated' "$tmp/stderr"; then
    echo "FAIL warnings: expected one livenessProbe and one securityContext warning:"
    cat "$tmp/stderr"; fails=$((fails + 1))
else
    echo "ok   warnings: $(tr '\n' ' ' <"$tmp/stderr")"
fi

# a PodGroup in another file than its pods (two --workload files, a
# directory); a minMember its objects can never reach: pending, counted
group() { # group NAME MIN-MEMBER
    printf 'apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\nmetadata: {name: %s}\n' "$1"
    printf 'spec: {minMember: %s}\n' "$2"
}
gangjob() { # gangjob NAME GROUP PARALLELISM
    printf 'apiVersion: batch/v1\nkind: Job\nmetadata: {name: %s}\nspec:\n' "$1"
    printf '  parallelism: %s\n  completions: %s\n  template:\n' "$3" "$3"
    printf '    metadata: {labels: {scheduling.x-k8s.io/pod-group: %s}}\n' "$2"
    printf '    spec:\n      containers:\n      - name: c\n'
    printf '        resources: {limits: {nvidia.com/gpu: 1}}\n'
}
mkdir -p "$tmp/gang"
gangjob train g 2 >"$tmp/gang/jobs.yaml"
group g 2 >"$tmp/gang/groups.yaml"
for args in "--workload $tmp/gang/jobs.yaml --workload $tmp/gang/groups.yaml" \
    "--workload $tmp/gang"; do
    # shellcheck disable=SC2086
    if "$gp" sim --cluster "$cluster" $args --horizon 1h --quiet --json "$tmp/gang.json" \
        2>"$tmp/stderr" && grep -q '"restarts": 0' "$tmp/gang.json" &&
        [ ! -s "$tmp/stderr" ]; then
        echo "ok   PodGroup in another file ($args)"
    else
        echo "FAIL PodGroup in another file ($args):"; cat "$tmp/stderr"; fails=$((fails + 1))
    fi
done
group g 4 >"$tmp/gang/groups.yaml"
"$gp" sim --cluster "$cluster" --workload "$tmp/gang" --horizon 1h --json "$tmp/gang.json" \
    >"$tmp/stdout" 2>"$tmp/stderr"
rc=$?
if [ "$rc" -eq 0 ] &&
    grep -q 'warning: .*groups\.yaml:1: PodGroup/g: minMember 4, but its object runs at most 2 pods at once: the gang can never start' "$tmp/stderr" &&
    grep -q '1 gang (2 pods) can never start: gang g: minMember 4 > 2 members that can exist' "$tmp/stdout" &&
    grep -q '"never_start": 1,' "$tmp/gang.json" &&
    grep -q '"podgroup": "g"' "$tmp/gang.json" && grep -q '"members": 2' "$tmp/gang.json" &&
    grep -q '"pending_at_end": 2' "$tmp/gang.json"; then
    echo "ok   a gang that can never start: pending, in the summary and the JSON"
else
    echo "FAIL a gang that can never start (exit $rc):"; cat "$tmp/stderr" "$tmp/stdout"
    fails=$((fails + 1))
fi
rm "$tmp/gang/groups.yaml"
expect "PodGroup no file defines" \
    'jobs\.yaml:1: train names PodGroup "g", which no workload file defines' "$tmp/gang"

# every example and the built-in demo still load
for f in "$src"/examples/*.yaml "$src"/examples/*/*.yaml; do
    case "$f" in *cluster* | *offers*) continue ;; esac # offers: gpuplane providers
    if ! "$gp" sim --cluster "$cluster" --workload "$f" --horizon 1m --quiet 2>"$tmp/stderr" &&
        grep -q 'unknown\|defined twice' "$tmp/stderr"; then
        echo "FAIL example $f:"; cat "$tmp/stderr"; fails=$((fails + 1))
    fi
done

if [ "$fails" -ne 0 ]; then
    echo "$fails strict-manifest case(s) failed"
    exit 1
fi
echo "all strict-manifest cases pass"
