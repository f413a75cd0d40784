#!/usr/bin/env bash
# conventions.sh - the command-line conventions of every command (README,
# "Command line"): `gpuplane help COMMAND`, --version everywhere, `--`
# ends the options, "did you mean" for a misspelt flag or command, a bad
# value is exit 2 naming the flag and its real limits, and nothing defaults
# to a folder beside the repository.
set -uo pipefail
gp="${GPUPLANE:?}"
src="${GP_SRC:?}"
cluster="$src/examples/cluster-mixed.yaml"
workload="$src/examples/workload-mixed.yaml"
fx="$src/tests/data/packing"
. "$src/tests/cli/lib/common.sh"
cd "$tmp" || exit 1
commands="sim packing render providers compat"
version=$("$gp" --version)

for c in $commands; do
    "$gp" help "$c" >help.txt 2>&1
    rc=$?
    "$gp" "$c" --help >direct.txt 2>&1
    if [ "$rc" -eq 0 ] && cmp -s help.txt direct.txt && grep -q "^usage: gpuplane $c" help.txt; then
        echo "ok   gpuplane help $c is gpuplane $c --help"
    else
        fail "gpuplane help $c: exit $rc"
    fi
    out=$("$gp" "$c" --version 2>&1)
    rc=$?
    if [ "$rc" -eq 0 ] && [ "$out" = "$version" ]; then
        echo "ok   gpuplane $c --version: $out"
    else
        fail "gpuplane $c --version: exit $rc, '$out'"
    fi
    grep -q -- "--version" help.txt || fail "gpuplane $c --help does not list --version"
done

# expect NAME PATTERN ARGS...: exit 2, one stderr line matching PATTERN, nothing on stdout
expect() {
    local name="$1" pattern="$2"
    shift 2
    "$gp" "$@" >out.txt 2>err.txt
    local rc=$?
    if [ "$rc" -ne 2 ]; then
        fail "$name: exit $rc, expected 2: $(cat err.txt)"
    elif [ "$(wc -l <err.txt)" -ne 1 ] || ! grep -Eq -- "$pattern" err.txt; then
        fail "$name: stderr does not match '$pattern': $(cat err.txt)"
    elif [ -s out.txt ]; then
        fail "$name: something on stdout: $(head -c 200 out.txt)"
    else
        echo "ok   $name: $(cat err.txt)"
    fi
}

expect "help of an unknown command" "unknown command 'simm'; did you mean 'sim'\?" help simm
expect "a misspelt command" "unknown command 'rendr'; did you mean 'render'\?" rendr
expect "a misspelt flag" "sim: unknown option '--polcy'; did you mean '--policy'\?" \
    sim --cluster "$cluster" --workload "$workload" --polcy fgd
expect "a flag cut short" "unknown option '--work'; did you mean '--workload'\?" sim --work x
expect "a misspelt common flag" "render: unknown option '--verison'; did you mean '--version'\?" \
    render --verison
expect "packing's own flags" "packing: unknown option '--seed'; did you mean '--seeds'\?" \
    packing --data "$fx" --seed 42
expect "a flag far from any" "sim: unknown option '--colour' \(see gpuplane sim --help\)$" sim --colour
expect "an argument after --" "sim: unexpected argument '--json' after '--'" \
    sim --cluster "$cluster" --workload "$workload" -- --json x.json
expect "a word that is not an option" "sim: unexpected argument 'extra.yaml'" \
    sim --cluster "$cluster" --workload "$workload" extra.yaml
if "$gp" sim --cluster "$cluster" --workload "$workload" --quiet -- >/dev/null 2>err.txt; then
    echo "ok   a final -- ends the options"
else
    fail "a final --: $(cat err.txt)"
fi

# bad values: exit 2 naming the flag, with its real limits
expect "--sample 1ms" "^gpuplane: --sample: expected a duration from 1s to 3650d" \
    sim --cluster "$cluster" --workload "$workload" --sample 1ms
expect "--sample 1s over ten years" "^gpuplane: --sample: 1 s over the --horizon of 3.1536e\+08 s is more than 10000000 samples" \
    sim --cluster "$cluster" --workload "$workload" --sample 1s --horizon 3650d
expect "sim --inflate 101" "^gpuplane: --inflate: expected a number greater than 0 and at most 100" \
    sim --mode static --inflate 101
expect "packing --inflate 101" "^gpuplane: --inflate: expected a number greater than 0 and at most 100" \
    packing --data "$fx" --inflate 101
expect "--horizon 0" "^gpuplane: --horizon: expected a positive duration of at most 3650d" \
    sim --horizon 0
expect "--seed -1" "^gpuplane: --seed: expected a non-negative integer" sim --seed -1
expect "--mode" "^gpuplane: --mode: expected 'timed' or 'static'" sim --mode fast
expect "--order" "^gpuplane: --order: expected 'fair', 'fifo' or 'sjf'" sim --order lifo
expect "--policy" "^gpuplane: --policy: unknown policy 'tetris'" sim --policy tetris
expect "--max-pods 0" "^gpuplane: --max-pods: expected an integer from 1 to" sim --max-pods 0
expect "--max-input-mib x" "^gpuplane: --max-input-mib: expected an integer from 1 to 1048576" \
    render --max-input-mib x
expect "--jobs 99" "^gpuplane: --jobs: expected an integer 1\.\.64" packing --data "$fx" --jobs 99
expect "--seeds 5-1" "^gpuplane: --seeds: the range '5-1' ends before it starts" \
    packing --data "$fx" --seeds 5-1
expect "--watch-idle-s -1" "^gpuplane: schedule: --watch-idle-s: expected a number >= 0, got \"-1\"" \
    schedule --watch-idle-s -1
expect "a value missing" "^gpuplane: render: option '--out' needs a value" render --out

# packing names where its data comes from, and how to get it
expect "packing without --data" \
    "^gpuplane: packing: --data DIR is required; .*cluster-trace-gpu-v2023/csv .*https://github\.com/alibaba/clusterdata.*git clone" \
    packing
"$gp" packing --data "$fx" --policies best-fit --seeds 1 --jobs 1 >out.txt 2>&1
if grep -q "no paper column: --expected DIR adds it; .*hkust-adsl/kubernetes-scheduler-simulator" \
    out.txt; then
    echo "ok   packing without --expected says how to get the paper column"
else
    fail "packing without --expected: $(tail -3 out.txt)"
fi
if grep -rn '"\.\./shared' "$src/src" >found.txt; then
    fail "a default depends on a folder beside the repository: $(cat found.txt)"
else
    echo "ok   no default in src/ names ../shared"
fi

if [ "$fails" -ne 0 ]; then
    echo "$fails convention check(s) failed"
    exit 1
fi
echo "all convention checks passed"
