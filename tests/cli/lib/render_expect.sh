# render_expect.sh - sourced by the render CLI tests (not a test itself:
# only tests/cli/*.sh are). expect NAME PATTERN ARGS... runs `gpuplane
# render ARGS` and checks the bad-input rule: exit 2, one line on stderr
# matching PATTERN, nothing on stdout and no $tmp/bad-out written. It uses
# the sourcing test's $gp, $tmp and failed().
expect() {
    local name="$1" pattern="$2"
    shift 2
    rm -rf "$tmp/bad-out"
    "$gp" render "$@" >"$tmp/stdout" 2>"$tmp/stderr"
    local rc=$?
    if [ "$rc" -ne 2 ]; then
        failed "$name: exit code $rc, expected 2"
    elif [ "$(wc -l <"$tmp/stderr")" -ne 1 ]; then
        failed "$name: expected one line on stderr, got:"
        cat "$tmp/stderr"
    elif ! grep -Eq -- "$pattern" "$tmp/stderr"; then
        failed "$name: stderr does not match '$pattern':"
        cat "$tmp/stderr"
    elif [ -s "$tmp/stdout" ] || [ -e "$tmp/bad-out" ]; then
        failed "$name: output was written"
    else
        echo "ok   $name: $(cat "$tmp/stderr")"
    fi
}
