/* fuzz_mig_layout.c - libFuzzer target for the MIG model: the first byte
 * picks a GPU model, the next bytes are mig-parted counts per profile for
 * gp_mig_layout_from_counts, and the rest a sequence of placements and
 * removals. Whatever the input: every layout produced is valid, counts
 * come back unchanged, an error names a profile, and gp_mig_fits,
 * gp_mig_free_profiles and gp_mig_place agree. */
#include <stdint.h>
#include <string.h>

#include "engine/mig.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    const struct gp_mig_model *m = &gp_mig_models[data[0] % gp_mig_nmodels];
    size_t i = 1;
    struct gp_mig_counts counts;
    memset(&counts, 0, sizeof counts);
    for (size_t p = 0; p < m->nprofiles && i < size; p++, i++)
        counts.n[p] = data[i] % 9;
    struct gp_mig_layout l;
    char why[256];
    if (gp_mig_layout_from_counts(m, &counts, &l, why, sizeof why)) {
        if (!gp_mig_layout_valid(m, &l, NULL, 0))
            __builtin_trap();
        struct gp_mig_counts back;
        gp_mig_layout_counts(m, &l, &back);
        if (memcmp(&back, &counts, sizeof back) != 0)
            __builtin_trap();
    } else if (why[0] != '"' || strchr(why, '\n')) {
        __builtin_trap();
    }
    if (data[0] & 0x80) /* start the operations from the empty GPU */
        memset(&l, 0, sizeof l);
    for (; i < size; i++) {
        if ((data[i] & 0x80) && l.n > 0) {
            gp_mig_remove(&l, (data[i] & 0x7f) % l.n);
        } else {
            unsigned p = (data[i] & 0x7f) % m->nprofiles;
            bool any = false;
            for (unsigned s = 0; s < GP_MIG_MAX_SLICES; s++)
                any |= gp_mig_fits(m, &l, p, s);
            if (any != ((gp_mig_free_profiles(m, &l) >> p) & 1))
                __builtin_trap();
            int start = gp_mig_place(m, &l, p);
            if ((start >= 0) != any || (start >= 0 && !gp_mig_fits(m, &l, p, (unsigned)start)))
                __builtin_trap();
            gp_mig_add(m, &l, p);
        }
        if (!gp_mig_layout_valid(m, &l, why, sizeof why))
            __builtin_trap();
    }
    return 0;
}
