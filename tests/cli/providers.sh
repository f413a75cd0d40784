#!/usr/bin/env bash
# providers.sh - `gpuplane providers`: the whole catalog, a filtered and
# sorted view with the user's offers (examples/offers.yaml), and its JSON,
# each byte for byte against tests/golden/providers-*.* with a fixed
# --today (and the same date through $GPUPLANE_TODAY); each filter keeps
# only the rows it should; every bad offers file and option gives one line
# on stderr naming the file, line and field, exit code 2, nothing on stdout.
# GP_UPDATE_GOLDEN=1 rewrites the golden files (review the diff).
set -uo pipefail
gp="${GPUPLANE:?}"
src="${GP_SRC:?}"
golden="$src/tests/golden"
bad="$src/tests/data/offers"
cd "$src"
. "$src/tests/cli/lib/common.sh"
today=2026-12-01

# golden NAME ARGS...: the output of `providers ARGS` is tests/golden/NAME
golden() {
    local name="$1"
    shift
    if ! "$gp" providers --today "$today" "$@" >"$tmp/$name" 2>"$tmp/err"; then
        failed "$name: providers $*: $(cat "$tmp/err")"
        return
    fi
    if [ "${GP_UPDATE_GOLDEN:-0}" = 1 ]; then
        cp "$tmp/$name" "$golden/$name"
        echo "updated $golden/$name"
    fi
    if ! diff -u "$golden/$name" "$tmp/$name" >"$tmp/diff"; then
        failed "$name differs from $golden/$name:"
        head -40 "$tmp/diff"
    else
        echo "ok   $name"
    fi
}
golden providers-all.txt
golden providers-h100.txt --offers examples/offers.yaml --gpu H100 --k8s managed,byo --sort price
golden providers-a100.json --offers examples/offers.yaml --gpu A100 --sort price --json

# the same date from the environment; another date changes every age
GPUPLANE_TODAY=$today "$gp" providers >"$tmp/env" 2>&1
cmp -s "$tmp/env" "$golden/providers-all.txt" || failed "GPUPLANE_TODAY is not --today"
"$gp" providers --today 2027-06-01 >"$tmp/later"
cmp -s "$tmp/later" "$golden/providers-all.txt" && failed "--today changes no age"
echo "ok   --today and GPUPLANE_TODAY"

# rows ROWS ARGS...: the JSON of `providers ARGS` has ROWS offers, each
# passing CHECK (a jq-free test: python3 reads the JSON)
rows() {
    local want="$1" check="$2"
    shift 2
    "$gp" providers --today "$today" --json "$@" >"$tmp/rows.json" 2>"$tmp/err" ||
        { failed "providers $*: $(cat "$tmp/err")"; return; }
    local got
    got=$(python3 - "$tmp/rows.json" "$check" <<'EOF'
import json, sys
doc = json.load(open(sys.argv[1]))
check = sys.argv[2]
n = 0
for p in doc:
    for o in p["offers"]:
        if not eval(check, {"p": p, "o": o}):
            print("bad row:", p["id"], o["instance"], o["gpu"])
            sys.exit(0)
        n += 1
print(n)
EOF
)
    if [ "$got" != "$want" ]; then
        failed "providers $*: expected $want rows passing $check, got $got"
    else
        echo "ok   providers $* ($got rows)"
    fi
}
rows 106 "True"
rows 75 "p['kubernetes'] == 'managed'" --k8s managed
rows 31 "p['kubernetes'] != 'managed'" --k8s byo,none
rows 32 "'H100' in o['gpu']" --gpu H100
rows 24 "o['gpu_memory_gb'] >= 141" --min-memory 141
rows 25 "o['gpus_per_node'] == 8" --gpus 8
rows 1 "p['gpu_sharing']['mig'] == 'yes' and p['gpu_sharing']['mps'] == 'yes'" --sharing mig,mps
rows 39 "'InfiniBand' in p['interconnect']['type']" --ib
rows 5 "'RoCE' in p['interconnect']['type']" \
    --interconnect roce
rows 42 "p['shared_storage_rwx'] == 'yes'" --rwx
rows 8 "p['scale_to_zero'] == 'yes'" --scale-to-zero
rows 58 "p['gpu_drivers_preinstalled'] == 'yes'" --drivers
rows 37 "p['spot_gpu_nodes'] == 'yes' or o['spot_usd_per_gpu_hour'] is not None" --spot
rows 28 "2 <= (o['on_demand_usd_per_gpu_hour'] or o['on_demand_usd_per_node_hour'] / o['gpus_per_node']) <= 4" \
    --min-price 2 --max-price 4
rows 3 "o['user']" --offers examples/offers.yaml --mine
rows 107 "True" --offers examples/offers.yaml

# sorted by price: in the JSON, each provider's offers cheapest first (the
# unpriced last), and the providers in the order of their cheapest offer
"$gp" providers --today "$today" --sort price --json >"$tmp/sorted.json"
python3 - "$tmp/sorted.json" <<'EOF' || failed "--sort price is not cheapest first"
import json, sys
doc = json.load(open(sys.argv[1]))
def price(o):
    if o["on_demand_usd_per_gpu_hour"] is not None:
        return o["on_demand_usd_per_gpu_hour"]
    if o["on_demand_usd_per_node_hour"] is not None and o["gpus_per_node"]:
        return o["on_demand_usd_per_node_hour"] / o["gpus_per_node"]
    return float("inf")
firsts = []
for p in doc:
    prices = [price(o) for o in p["offers"]]
    assert prices == sorted(prices), p["id"] + ": offers not cheapest first"
    firsts.append(prices[0])
assert firsts == sorted(firsts), "providers not in the order of their cheapest offer"
EOF
echo "ok   --sort price"

# --- bad input: one line on stderr, exit 2, nothing on stdout -------------------
expect() {
    local name="$1" pattern="$2"
    shift 2
    "$gp" providers --today "$today" "$@" >"$tmp/stdout" 2>"$tmp/stderr"
    local rc=$?
    if [ "$rc" -ne 2 ]; then
        failed "$name: exit code $rc, expected 2"
    elif [ "$(wc -l <"$tmp/stderr")" -ne 1 ] || [ -s "$tmp/stdout" ]; then
        failed "$name: expected one line on stderr and nothing on stdout:"
        cat "$tmp/stderr"
    elif ! grep -Eq -- "$pattern" "$tmp/stderr"; then
        failed "$name: stderr does not match '$pattern':"
        cat "$tmp/stderr"
    else
        echo "ok   $name: $(cat "$tmp/stderr")"
    fi
}
expect "unknown field" \
    'unknown-field\.yaml:6:5: offers\[0\]\.pricePerGPUHour: unknown field; did you mean "pricePerGpuHour"\?' \
    --offers "$bad/unknown-field.yaml"
expect "unknown provider" \
    'unknown-provider\.yaml:4:15: offers\[0\]\.provider: no provider "ekss" in data/providers\.json; did you mean "eks"\?' \
    --offers "$bad/unknown-provider.yaml"
expect "ambiguous instance" \
    'ambiguous\.yaml:5:15: offers\[0\]\.instance: Secure Cloud names several offers in data/providers\.json; add gpu: one of "H100 SXM 80GB"' \
    --offers "$bad/ambiguous.yaml"
expect "misspelt instance" \
    'new-without-gpu\.yaml:5:15: offers\[0\]\.instance: eks has no offer "p5\.48xlarg" in data/providers\.json; did you mean "p5\.48xlarge"\?' \
    --offers "$bad/new-without-gpu.yaml"
expect "bad date" 'bad-date\.yaml:7:16: offers\[0\]\.priceDate: expected a date YYYY-MM-DD, got "2026-02-30"' \
    --offers "$bad/bad-date.yaml"
expect "future date" 'future-date\.yaml:7:16: offers\[0\]\.priceDate: 2027-01-15 is after today' \
    --offers "$bad/future-date.yaml"
expect "no price" 'no-price\.yaml:4:5: offers\[0\]: no price' --offers "$bad/no-price.yaml"
expect "no source" 'no-source\.yaml:4:5: offers\[0\]: missing required field "source"' \
    --offers "$bad/no-source.yaml"
expect "one offer twice" 'twice\.yaml:9:5: offers\[1\]: the same offer as .*twice\.yaml:4' \
    --offers "$bad/twice.yaml"
expect "another machine" \
    'other-machine\.yaml:6:18: offers\[0\]\.gpusPerNode: p5\.48xlarge has 8 GPUs per node' \
    --offers "$bad/other-machine.yaml"
expect "bad pricing" 'bad-pricing\.yaml:9:14: offers\[0\]\.pricing: expected negotiated, reserved or list' \
    --offers "$bad/bad-pricing.yaml"
expect "wrong kind" 'wrong-kind\.yaml:2:7: kind: expected "Offers", got "Cluster"' \
    --offers "$bad/wrong-kind.yaml"
expect "missing offers file" 'nope\.yaml.*(No such file|cannot open)' --offers "$tmp/nope.yaml"
expect "bad --today" "--today: expected a date YYYY-MM-DD, got '2026-13-01'" --today 2026-13-01
expect "bad --sort" "--sort: expected one of price, spot, gpu, memory, provider, age, got 'cheap'" \
    --sort cheap
expect "bad --k8s" "--k8s: expected managed, byo or none" --k8s manged
expect "bad --sharing" "--sharing: expected time-slicing, mps or mig" --sharing timeslicing
expect "bad --gpus" "--gpus: expected a whole number from 1 to 64" --gpus 0
expect "price range" "--min-price is above --max-price" --min-price 5 --max-price 2
expect "--mine without --offers" "--mine needs --offers" --mine

[ "$fails" -eq 0 ] || { echo "$fails failure(s)"; exit 1; }
echo "all providers checks passed"
