# common.sh - sourced by every CLI test (not a test itself: only
# tests/cli/*.sh are) after its `set -uo pipefail`: a temporary folder
# $tmp, removed at exit (a test with more to clean up sets its own EXIT
# trap after), the count of failed checks $fails, and `failed MESSAGE`
# (`fail` is the same; a test may define its own instead) printing "FAIL
# MESSAGE" and counting it. Each test turns $fails into its exit code.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
failed() {
    echo "FAIL $*"
    fails=$((fails + 1))
}
fail() {
    failed "$@"
}

# kubeconfig_for PORT FILE: a kubeconfig for the API server double on
# 127.0.0.1:PORT over HTTP (a bearer token it accepts without --tokens),
# namespace default
kubeconfig_for() {
    cat >"$2" <<KC
apiVersion: v1
kind: Config
clusters:
- name: double
  cluster: {server: "http://127.0.0.1:$1"}
users:
- name: u
  user: {token: t}
contexts:
- name: c
  context: {cluster: double, user: u, namespace: default}
current-context: c
KC
}
