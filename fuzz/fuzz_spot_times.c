/* fuzz_spot_times.c - libFuzzer target for a spot pool's interruptionFile
 * text (io/spot_times.h): any input gives at most the maximum number of
 * times, sorted, each from 0 to the maximum, or an error with a one-line
 * diag; never a crash, a hang or a leak. Lines of any length. */
#include <stdint.h>
#include <string.h>

#include "io/spot_times.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct gp_arena a;
    struct gp_diag d = {""};
    const double *t = NULL;
    size_t n = 0;
    gp_arena_init(&a);
    enum gp_err err =
        gp_spot_times_parse((const char *)data, size, "times.txt", 1e9, 500, &a, &t, &n, &d);
    if (err != GP_OK) {
        if (d.msg[0] == '\0' || strchr(d.msg, '\n'))
            __builtin_trap();
    } else {
        if (n > 500 || (n > 0) != (t != NULL))
            __builtin_trap();
        for (size_t i = 0; i < n; i++)
            if (!(t[i] >= 0 && t[i] <= 1e9) || (i > 0 && t[i] < t[i - 1]))
                __builtin_trap();
    }
    gp_arena_free(&a);
    return 0;
}
