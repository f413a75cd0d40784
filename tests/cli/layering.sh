#!/usr/bin/env bash
# layering.sh - includes point down only (docs/ARCHITECTURE.md, "Layers"):
#
#   cli -> report -> sim, plan, node -> kube -> io -> serve -> engine -> util
#
# (sim, plan and kube sit on one layer above io; node alone may include kube,
# whose API client and pod annotations the node agent uses.)
# A module includes its own headers and those of the layers below it; the
# modules of one layer (sim, plan, kube) do not include each other.
# Every #include "..." (and <...> naming a module) of every file in src/ is
# checked; each one that points up or sideways is named file:line. A
# directory of src/ that the rule does not know fails too: a new module
# gets its layer here and in the docs. The checker first runs on a small
# tree with one bad include, which it must find, so a checker broken into
# finding nothing fails as well.
set -uo pipefail
cd "${GP_SRC:?}"

# allowed MODULE: the modules MODULE may include (itself included)
allowed() {
    case "$1" in
    util) echo "util" ;;
    engine) echo "engine util" ;;
    serve) echo "serve engine util" ;;
    io) echo "io serve engine util" ;;
    sim | plan | kube) echo "$1 io serve engine util" ;;
    node) echo "node kube io serve engine util" ;;
    report) echo "report sim plan io serve engine util" ;;
    cli) echo "cli report sim plan kube node io serve engine util" ;;
    *) return 1 ;;
    esac
}

# module_of FILE INC: the module (first path component below the root) of
# INC resolved beside FILE, both relative to the root; "." and ".." are
# resolved as realpath -m would, without a process per include
module_of() {
    local -a parts out=()
    local p
    IFS=/ read -ra parts <<<"${1%/*}/$2"
    for p in "${parts[@]}"; do
        case "$p" in
        "" | .) ;;
        ..) [ ${#out[@]} -eq 0 ] && out+=("..") || unset 'out[${#out[@]}-1]' ;;
        *) out+=("$p") ;;
        esac
    done
    echo "${out[0]:-.}"
}

# check ROOT: prints a line per include of ROOT/*/... that breaks the rule
# (paths relative to ROOT's parent) and returns 1 if there is any
check() {
    local root="$1" bad=0 dir mod file line inc target ok
    for dir in "$root"/*/; do
        mod=$(basename "$dir")
        if ! allowed "$mod" >/dev/null; then
            echo "$root/$mod/: a module the layering rule does not know (add it to tests/cli/layering.sh and docs/ARCHITECTURE.md)"
            bad=1
        fi
    done
    local re='^[[:space:]]*#[[:space:]]*include[[:space:]]*["<]([^">]*)[">]'
    while IFS=: read -r file line inc; do
        mod=${file#"$root"/}
        mod=${mod%%/*}
        [[ $inc =~ $re ]] && inc=${BASH_REMATCH[1]}
        if [ -e "${file%/*}/$inc" ]; then # found beside the file first
            target=$(module_of "${file#"$root"/}" "$inc")
        elif [ -e "$root/$inc" ]; then
            target=${inc%%/*}
        else
            case "$inc" in
            */*) [ -d "$root/${inc%%/*}" ] || continue ;; # <sys/types.h> and the like
            *) continue ;;
            esac
            echo "$file:$line: includes \"$inc\", which is not in $root/"
            bad=1
            continue
        fi
        allowed "$mod" >/dev/null || continue # reported above
        ok=0
        for m in $(allowed "$mod"); do
            [ "$m" = "$target" ] && ok=1
        done
        if [ "$ok" = 0 ]; then
            echo "$file:$line: $mod/ includes \"$inc\" ($target/): not allowed, $mod/ may include only $(allowed "$mod")"
            bad=1
        fi
    done < <(grep -rnE '^[[:space:]]*#[[:space:]]*include[[:space:]]*["<]' "$root" --include='*.[ch]' | sort -t: -k1,1 -k2,2n)
    return $bad
}

# the checker must catch a planted upward include
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/src/io" "$tmp/src/sim" "$tmp/src/engine"
printf '#include "engine/e.h"\n' >"$tmp/src/sim/s.h"
printf '#include <stdio.h>\n#include "engine/e.h"\n#include "sim/s.h"\n' >"$tmp/src/io/r.c"
touch "$tmp/src/engine/e.h"
if out=$(check "$tmp/src") || ! grep -q "/src/io/r.c:3:" <<<"$out" || [ "$(wc -l <<<"$out")" != 1 ]; then
    echo "FAIL: the checker did not find exactly the planted io/ -> sim/ include:"
    echo "$out"
    exit 1
fi

if ! out=$(check src); then
    echo "includes that point up or sideways (docs/ARCHITECTURE.md, \"Layers\"):"
    echo "$out"
    exit 1
fi
echo "all includes point down ($(grep -rhE '^[[:space:]]*#[[:space:]]*include' src --include='*.[ch]' | wc -l) #include lines in src/)"
