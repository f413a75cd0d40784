#!/usr/bin/env bash
# outputs.sh - writing outputs never destroys a file (docs/FORMATS.md,
# "Output files"): a symlink is written through and kept, a FIFO or a
# character device is written in place, '-' is standard output; every
# output is checked before the run; a failure midway leaves the old files
# byte-identical; concurrent runs never mix one file; a killed run leaves
# no temporary behind once the next run starts, and an interrupted commit
# is rolled back; two outputs naming one file, or an output naming an
# input, are refused.
set -uo pipefail
gp="${GPUPLANE:?}"
src="${GP_SRC:?}"
cluster="$src/examples/cluster-mixed.yaml"
workload="$src/examples/workload-mixed.yaml"
. "$src/tests/cli/lib/common.sh"
cd "$tmp" || exit 1
# Never hand a path in the machine's /dev to a binary that may be broken
# while running as root (it could replace it): root uses private device
# nodes made here, others the real ones (which they cannot replace).
if [ "$(id -u)" -eq 0 ]; then
    mknod null c 1 3 && mknod full c 1 7 || { echo "skipped: mknod failed as root"; exit 77; }
    devnull="$tmp/null" devfull="$tmp/full" stdout_link="$tmp/stdout"
    ln -s /proc/self/fd/1 stdout
else
    devnull=/dev/null devfull=/dev/full stdout_link=/dev/stdout
fi
ok() { echo "ok   $*"; }
sim() { "$gp" sim --cluster "$cluster" --workload "$workload" --quiet "$@"; }
no_temporaries() { # no .*.gpuplane-* left in the directory $1
    ! ls -a "$1" | grep -q '\.gpuplane-'
}

# a reference output to compare with
sim --json ref.json --csv ref.csv || fail "reference run"

# --- a symlink is written through, the link kept -----------------------------
mkdir real
echo old >real/target.json
ln -s real/target.json link.json
sim --json link.json
if [ -L link.json ] && cmp -s real/target.json ref.json && no_temporaries real; then
    ok "symlink written through to its target, the link kept"
else
    fail "symlink: link kept? $([ -L link.json ] && echo yes || echo no)"
fi
ln -s real/new-target.json dangling.json
sim --json dangling.json
if [ -L dangling.json ] && cmp -s real/new-target.json ref.json; then
    ok "a dangling symlink's target is created"
else
    fail "dangling symlink"
fi

# --- a FIFO and a character device are written in place -------------------
mkfifo pipe.json
# bounded generously (a sanitizer build on a loaded machine may take long
# before it opens the FIFO): a reader gone early would leave the run
# blocked in open() for good
timeout 120 cat pipe.json >from-pipe.json &
reader=$!
timeout 120 "$gp" sim --cluster "$cluster" --workload "$workload" --quiet --json pipe.json
wait "$reader"
if [ -p pipe.json ] && cmp -s from-pipe.json ref.json && no_temporaries .; then
    ok "a FIFO is written in place and stays a FIFO"
else
    fail "FIFO: still a FIFO? $([ -p pipe.json ] && echo yes || echo no)"
fi
sim --json "$devnull" --csv "$devnull"
if [ -c "$devnull" ] && no_temporaries .; then
    ok "a character device is written in place and stays one (twice: allowed)"
else
    fail "character device replaced"
fi
ln -s "$devnull" to-null.json
sim --json to-null.json
if [ -L to-null.json ] && [ -c "$devnull" ]; then
    ok "a symlink to a character device writes through to the device"
else
    fail "symlink to a character device"
fi

# --- '-' and /dev/stdout are standard output -------------------------------
"$gp" sim --cluster "$cluster" --workload "$workload" --json - >stdout.json 2>stderr.txt
if cmp -s stdout.json ref.json; then
    ok "--json - writes the JSON alone on stdout (no summary)"
else
    fail "--json -: stdout is not the JSON: $(head -c 200 stdout.json)"
fi
for out in "$stdout_link" /proc/self/fd/1 /dev/fd/1; do
    rm -f stdout.csv
    sim --csv "$out" >stdout.csv
    if cmp -s stdout.csv ref.csv; then
        ok "--csv $out writes to stdout, even redirected to a file"
    else
        fail "--csv $out"
    fi
done
"$gp" sim --cluster "$cluster" --workload "$workload" --json - --csv "$stdout_link" \
    >/dev/null 2>err.txt
if [ $? -eq 2 ] && grep -q -- "--csv $stdout_link: the same file as --json -" err.txt; then
    ok "two outputs to stdout are refused"
else
    fail "two outputs to stdout: $(cat err.txt)"
fi

# --- checked before the run: exit 2 at once, naming the flag -----------------
# expect_usage NAME PATTERN ARGS...: exit 2, PATTERN on stderr, the run never started
expect_usage() {
    local name="$1" pattern="$2"
    shift 2
    "$gp" sim --cluster "$cluster" --workload "$workload" "$@" >out.txt 2>err.txt
    local rc=$?
    if [ "$rc" -ne 2 ]; then
        fail "$name: exit $rc, expected 2 ($(cat err.txt))"
    elif ! grep -Eq -- "$pattern" err.txt; then
        fail "$name: stderr does not match '$pattern': $(cat err.txt)"
    elif [ -s out.txt ]; then
        fail "$name: the run started (stdout: $(head -c 100 out.txt))"
    else
        ok "$name: $(cat err.txt)"
    fi
}
echo keep >keep.json
cp keep.json keep.orig
expect_usage "missing directory" "^gpuplane: --csv nodir/x\.csv: no directory 'nodir'" \
    --json keep.json --csv nodir/x.csv
expect_usage "a file as the directory" "--report keep\.json/r\.html: no directory" \
    --report keep.json/r.html
expect_usage "a directory as the output" "--json real: is a directory" --json real
expect_usage "same file twice" "--csv \./keep\.json: the same file as --json keep\.json" \
    --json keep.json --csv ./keep.json
ln keep.json hard.json
expect_usage "a hard link of another output" "--report hard\.json: the same file as --json" \
    --json keep.json --report hard.json
cp "$cluster" cluster.yaml
expect_usage "an output naming the cluster" "--json cluster\.yaml: the same file as the input --cluster" \
    --cluster cluster.yaml --json cluster.yaml
mkdir jobs
cp "$workload" jobs/w.yaml
expect_usage "an output the workload directory would read" \
    "--json jobs/out\.json: inside the input directory --workload jobs" \
    --workload jobs --json jobs/out.json
if [ "$(id -u)" -ne 0 ]; then
    mkdir ro && chmod 555 ro
    expect_usage "a read-only directory" "--report ro/r\.html: cannot (write|create)" \
        --json keep.json --report ro/r.html
else
    echo "skip read-only directory: root writes anywhere"
fi
if cmp -s keep.json keep.orig && cmp -s cluster.yaml "$cluster" && no_temporaries . &&
    [ ! -e jobs/out.json ]; then
    ok "refused runs left every file as it was and no temporary"
else
    fail "a refused run changed a file or left a temporary"
fi

# --- a failure midway keeps every old file byte-identical ------------------
printf 'old json\n' >out.json
printf 'old csv\n' >out.csv
cp out.json out.json.orig
cp out.csv out.csv.orig
"$gp" sim --cluster "$cluster" --workload "$workload" --quiet \
    --json out.json --csv out.csv --report "$devfull" --seed 7 2>err.txt
rc=$?
"$gp" sim --cluster "$cluster" --workload "$workload" --quiet \
    --json new.json --report "$devfull" 2>>err.txt
rc2=$?
if [ "$rc" -ne 0 ] && [ "$rc2" -ne 0 ] && [ -c "$devfull" ] && cmp -s out.json out.json.orig &&
    cmp -s out.csv out.csv.orig && [ ! -e new.json ] && no_temporaries .; then
    ok "a write failing midway (a full device) keeps the old outputs byte-identical, creates none"
else
    fail "failure midway: rc $rc/$rc2, $(cat err.txt)"
fi

# --- concurrent runs never mix one file --------------------------------------
sim --json seed2.json --seed 2
bad=0
for round in $(seq 1 20); do
    sim --json race.json --seed 1 &
    a=$!
    sim --json race.json --seed 2 &
    b=$!
    wait "$a"
    wait "$b"
    if ! cmp -s race.json ref.json && ! cmp -s race.json seed2.json; then
        bad=$((bad + 1))
    fi
    if command -v jq >/dev/null; then jq -e . race.json >/dev/null 2>&1 || bad=$((bad + 1)); fi
done
if [ "$bad" -eq 0 ] && no_temporaries .; then
    ok "20 rounds of two concurrent runs: the file is always one run's whole output"
else
    fail "concurrent runs: $bad rounds gave a mixed or invalid file"
fi

# --- a killed run: nothing left behind once the next run starts -------------
cat >slow.yaml <<'EOF'
apiVersion: batch/v1
kind: Job
metadata:
  name: stream
  annotations:
    sim.gpuplane.io/repeat: "2000000"
    sim.gpuplane.io/interarrival: "exp(1s)"
    sim.gpuplane.io/duration: "exp(10m)"
spec:
  template:
    spec:
      containers:
      - name: c
        image: x
        resources:
          requests: {cpu: "1", memory: 1Gi}
          limits: {nvidia.com/gpu: 1}
EOF
mkdir killed
printf 'old\n' >killed/out.json
cp killed/out.json killed/out.orig
# kill_run SIGNAL: starts a long run and kills it once its temporary
# exists; status is the run's exit status, saw 1 if the temporary was seen
kill_run() {
    "$gp" sim --cluster "$cluster" --workload slow.yaml --quiet --horizon 60d --json killed/out.json &
    local pid=$!
    saw=0
    # until its temporary exists (at most 120 s: the sanitizer build under
    # load starts slowly), or the run has ended
    local deadline=$((SECONDS + 120))
    while [ "$SECONDS" -lt "$deadline" ] && kill -0 "$pid" 2>/dev/null; do
        if ls -a killed | grep -q '\.gpuplane-'; then
            saw=1
            break
        fi
        sleep 0.05
    done
    kill "-$1" "$pid"
    wait "$pid" 2>/dev/null
    status=$?
}
set -m # background runs get SIGINT as from a terminal
kill_run INT
set +m
if [ "$saw" -eq 1 ] && [ "$status" -eq 130 ] && no_temporaries killed && cmp -s killed/out.json killed/out.orig; then
    ok "SIGINT during the run removes its temporary, the old output stays"
else
    fail "SIGINT (seen $saw, status $status) left: $(ls -a killed | tr '\n' ' ')"
fi
kill_run TERM
if [ "$saw" -eq 1 ] && [ "$status" -eq 143 ] && no_temporaries killed && cmp -s killed/out.json killed/out.orig; then
    ok "SIGTERM during the run removes its temporary, the old output stays"
else
    fail "SIGTERM (seen $saw, status $status) left: $(ls -a killed | tr '\n' ' ')"
fi
kill_run KILL
left=$(ls -a killed | grep -c '\.gpuplane-')
sim --json killed/other.json
if [ "$saw" -eq 1 ] && [ "$status" -eq 137 ] && [ "$left" -eq 1 ] && no_temporaries killed && cmp -s killed/out.json killed/out.orig; then
    ok "kill -9 leaves one temporary; the next run writing there removes it"
else
    fail "kill -9: $left temporaries after the kill, now: $(ls -a killed | tr '\n' ' ')"
fi

# a commit killed half way: out.json renamed into place (its old content
# kept as the .old record), out2.json created (marked .new), as a dead run
# leaves them; the next run writing in that directory rolls both back
sleep 0 &
dead=$!
wait "$dead"
mkdir commit
printf 'old one\n' >commit/old1
printf 'new one\n' >commit/out.json
printf 'new two\n' >commit/out2.json
ino1=$(stat -c %i commit/out.json)
ino2=$(stat -c %i commit/out2.json)
mv commit/old1 "commit/.out.json.gpuplane-$dead-0-$ino1.old"
: >"commit/.out2.json.gpuplane-$dead-1-$ino2.new"
printf 'x\n' >"commit/.out3.json.gpuplane-$dead-2.tmp"
sim --csv commit/timeline.csv
if [ "$(cat commit/out.json)" = "old one" ] && [ ! -e commit/out2.json ] &&
    no_temporaries commit; then
    ok "a dead run's interrupted commit is rolled back by the next run"
else
    fail "rollback of a dead run's commit: $(ls -a commit | tr '\n' ' ')"
fi

# --- render --out: each file by the same rules ---------------------------
mkdir rendered
echo old >real/labels.yaml
ln -s ../real/labels.yaml rendered/node-labels.yaml
"$gp" render --cluster "$src/examples/cluster-sharing.yaml" --out rendered >/dev/null
rc=$?
"$gp" render --cluster "$src/examples/cluster-sharing.yaml" >stream.yaml
if [ "$rc" -eq 0 ] && [ -L rendered/node-labels.yaml ] &&
    grep -q "$(head -3 real/labels.yaml | tail -1)" stream.yaml && no_temporaries rendered &&
    [ "$(cat real/labels.yaml)" != old ]; then
    ok "render --out writes through a symlink in DIR and keeps it"
else
    fail "render --out through a symlink: rc $rc"
fi
"$gp" render --cluster "$src/examples/cluster-sharing.yaml" --out - >dash.yaml
if cmp -s dash.yaml stream.yaml; then
    ok "render --out - is the stream on stdout"
else
    fail "render --out -"
fi
"$gp" render --cluster "$src/examples/cluster-sharing.yaml" --out nodir/sub >/dev/null 2>err.txt
if [ $? -eq 2 ] && grep -q -- "--out nodir/sub: no directory 'nodir'" err.txt; then
    ok "render --out in a missing directory: exit 2 before the cluster is read"
else
    fail "render --out nodir/sub: $(cat err.txt)"
fi

# --- the demo writes its report only where it may, and says which -------
mkdir demo
(cd demo && "$gp" sim >out.txt 2>err.txt)
if [ -f demo/gpuplane-report.html ] &&
    grep -q "wrote gpuplane-report.html in the current directory ($tmp/demo)" demo/out.txt; then
    ok "the demo writes its report into a writable current directory and says so"
else
    fail "demo report: $(tail -2 demo/out.txt)"
fi
(cd /proc && "$gp" sim >"$tmp/demo/proc.txt" 2>&1)
rc=$?
if [ "$rc" -eq 0 ] && grep -q "no report written: the current directory (/proc) is not writable" \
    demo/proc.txt; then
    ok "the demo in an unwritable directory writes nothing and says so"
else
    fail "demo in /proc: rc $rc, $(tail -2 demo/proc.txt)"
fi

if [ "$fails" -ne 0 ]; then
    echo "$fails output check(s) failed"
    exit 1
fi
echo "all output checks passed"
