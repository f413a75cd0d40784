# packing_cells.sh - sourced by the packing CLI tests (not a test itself:
# only tests/cli/*.sh are). packing_cells FILE prints one line per run of a
# `gpuplane packing --json` file: workload policy seed unallocated-% failed
# pods, in the file's order. It reads the pretty-printed JSON line by line:
# in a cell, "pods_failed" comes after the fields it prints with it.
packing_cells() {
    awk -F': ' '
        /"workload":/ { w = $2 }
        /"policy":/ { p = $2 }
        /"seed":/ { s = $2 }
        /"unallocated_gpu_pct_at_100":/ { u = $2 }
        /"pods_failed":/ {
            line = w " " p " " s " " u " " $2
            gsub(/[",]/, "", line)
            print line
        }' "$1"
}

# packing_bounds FILE prints one line per workload's lower bound: workload
# unallocated-% informative (the fields of its "lower_bounds" entry).
packing_bounds() {
    awk -F': ' '
        /"workload":/ { w = $2 }
        /"unallocated_gpu_pct_at_100":/ { u = $2 }
        /"informative":/ {
            line = w " " u " " $2
            gsub(/[",]/, "", line)
            print line
        }' "$1"
}
