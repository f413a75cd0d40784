/* fuzz_quantity.c - libFuzzer target for the Kubernetes quantity parser
 * (util/units.h gp_units_quantity, which the manifest reader and the
 * scheduler's pod reader use): any input ends in one of its four answers,
 * an OK value within the bound; the value is monotone in the scale asked
 * (millis >= whole units, MiB <= bytes); never a crash, a hang or a read
 * past the string. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/units.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (!s)
        return 0;
    memcpy(s, data, size);
    s[size] = '\0';
    int64_t max = INT64_C(1000000000000000000);
    int64_t v[3] = {0, 0, 0};
    enum gp_units_qty r[3] = {gp_units_quantity(s, 0, 0, max, &v[0]),
                              gp_units_quantity(s, 3, 0, max, &v[1]),
                              gp_units_quantity(s, 0, 20, max, &v[2])};
    for (int k = 0; k < 3; k++) {
        if (r[k] > GP_UNITS_QTY_NEGATIVE)
            __builtin_trap();
        if (r[k] == GP_UNITS_QTY_OK && (v[k] < 0 || v[k] > max))
            __builtin_trap();
        if (r[k] == GP_UNITS_QTY_NEGATIVE && !(v[k] < 0 && v[k] >= -max))
            __builtin_trap();
    }
    /* the grammar does not depend on the scale asked */
    if ((r[0] == GP_UNITS_QTY_SYNTAX) != (r[1] == GP_UNITS_QTY_SYNTAX) ||
        (r[0] == GP_UNITS_QTY_SYNTAX) != (r[2] == GP_UNITS_QTY_SYNTAX))
        __builtin_trap();
    if (r[0] == GP_UNITS_QTY_OK && r[1] == GP_UNITS_QTY_OK && v[1] < v[0] * 1000 - 999)
        __builtin_trap(); /* ceil(1000 x) >= 1000 ceil(x) - 999 */
    if (r[0] == GP_UNITS_QTY_OK && r[2] == GP_UNITS_QTY_OK && v[2] > v[0])
        __builtin_trap();
    free(s);
    return 0;
}
