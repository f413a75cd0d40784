/* fuzz_fgd_results.c - libFuzzer target for the reader of the FGD authors'
 * published result tables (io/fgd_results.c). The input is the CSV text;
 * a successful read must be consistent (every row has npoints values and
 * names), and the statistics over it must not crash. */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "io/fgd_results.h"
#include "util/arena.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* an exact-size copy, so that ASan sees any read past the end */
    char *text = malloc(size ? size : 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    struct gp_arena a;
    gp_arena_init(&a);
    struct gp_fgd_results r;
    struct gp_diag d;
    if (gp_fgd_results_parse(text, size, "fuzz.csv", &a, &r, &d) == GP_OK) {
        if (r.npoints == 0 || r.npoints > GP_FGD_MAX_POINTS || (r.nrows && !r.rows))
            abort();
        for (size_t i = 0; i < r.nrows; i++) {
            const struct gp_fgd_row *row = &r.rows[i];
            if (!row->workload || !row->workload_short || !row->policy || !row->values ||
                !*row->workload || !*row->policy || row->seed < 0 || !(row->tune >= 0) ||
                (r.has_total_gpus ? row->total_gpus < 0 : row->total_gpus != -1))
                abort();
            for (size_t x = 0; x < r.npoints; x++)
                if (isinf(row->values[x]))
                    abort();
            /* touch every value and name through the statistics */
            double mean, sd;
            size_t n = gp_fgd_results_stat(&r, row->workload_short,
                                           row->policy_gp ? row->policy_gp : "fgd", row->tune,
                                           r.npoints - 1, &mean, &sd);
            if (n > r.nrows)
                abort();
        }
    } else if (r.nrows != 0 || r.rows) {
        abort(); /* a failed read leaves nothing */
    }
    gp_arena_free(&a);
    free(text);
    return 0;
}
