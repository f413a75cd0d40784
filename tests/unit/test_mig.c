/* test_mig.c - the MIG model (engine/mig.c): the compiled tables against
 * data/mig-profiles.json for every GPU model, valid and invalid layouts
 * worked out by hand, the placement rule on A100 cases worked out by hand,
 * layouts from counts against an exhaustive search, named configs against
 * mig-parted's default file, and a seeded property test: random sequences
 * of placements and removals never give an invalid layout. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "shared_data.h"
#include <jansson.h>
#include <libfyaml.h>

#include "engine/mig.h"
#include "util/rng.h"

#define DATA_JSON GP_EXAMPLES_DIR "/../data/mig-profiles.json"

static const struct gp_mig_model *model(const char *id)
{
    const struct gp_mig_model *m = gp_mig_model_find(id);
    if (!m)
        fail_msg("no model %s", id);
    return m;
}

static unsigned prof(const struct gp_mig_model *m, const char *name)
{
    int p = gp_mig_profile_find(m, name);
    if (p < 0)
        fail_msg("no profile %s on %s", name, m->id);
    return (unsigned)p;
}

/* A layout from "name@start" pairs. */
static struct gp_mig_layout layout(const struct gp_mig_model *m, const char *spec)
{
    struct gp_mig_layout l;
    memset(&l, 0, sizeof l);
    char buf[256];
    snprintf(buf, sizeof buf, "%s", spec);
    for (char *tok = strtok(buf, " "); tok; tok = strtok(NULL, " ")) {
        char *at = strchr(tok, '@');
        assert_non_null(at);
        *at = '\0';
        l.inst[l.n].profile = (uint8_t)prof(m, tok);
        l.inst[l.n].start = (uint8_t)atoi(at + 1);
        l.n++;
    }
    return l;
}

static void expect_valid(const struct gp_mig_model *m, const char *spec)
{
    struct gp_mig_layout l = layout(m, spec);
    char why[200] = "x";
    if (!gp_mig_layout_valid(m, &l, why, sizeof why))
        fail_msg("%s on %s: %s", spec, m->id, why);
    assert_string_equal(why, "");
}

static void expect_invalid(const struct gp_mig_model *m, const char *spec, const char *reason)
{
    struct gp_mig_layout l = layout(m, spec);
    char why[200] = "";
    assert_false(gp_mig_layout_valid(m, &l, why, sizeof why));
    assert_string_equal(why, reason);
}

/* --- the tables against the JSON --------------------------------------- */

static void test_tables_match_data(void **state)
{
    (void)state;
    json_error_t e;
    json_t *root = json_load_file(DATA_JSON, 0, &e);
    if (!root)
        fail_msg("%s: %s", DATA_JSON, e.text);
    json_t *gpus = json_object_get(root, "gpus");
    assert_int_equal(json_array_size(gpus), gp_mig_nmodels);
    for (size_t i = 0; i < gp_mig_nmodels; i++) {
        const struct gp_mig_model *m = &gp_mig_models[i];
        json_t *g = json_array_get(gpus, i);
        assert_string_equal(m->id, json_string_value(json_object_get(g, "id")));
        assert_int_equal(m->compute_slices,
                         json_integer_value(json_object_get(g, "compute_slices_total")));
        assert_int_equal(m->memory_slices,
                         json_integer_value(json_object_get(g, "memory_slices_total")));
        assert_int_equal(m->nproducts, json_array_size(json_object_get(g, "products")));
        assert_int_equal(m->npci_ids, json_array_size(json_object_get(g, "pci_device_ids")));
        for (size_t k = 0; k < m->npci_ids; k++) {
            const char *id =
                json_string_value(json_array_get(json_object_get(g, "pci_device_ids"), k));
            assert_int_equal(m->pci_ids[k], (uint32_t)strtoul(id, NULL, 16));
            assert_ptr_equal(gp_mig_model_by_pci(m->pci_ids[k]), m);
        }
        for (size_t k = 0; k < m->nproducts; k++)
            assert_ptr_equal(gp_mig_model_find(m->products[k]), m);
        json_t *profiles = json_object_get(g, "profiles");
        assert_int_equal(m->nprofiles, json_array_size(profiles));
        for (size_t p = 0; p < m->nprofiles; p++) {
            const struct gp_mig_profile *mp = &m->profiles[p];
            json_t *jp = json_array_get(profiles, p);
            assert_string_equal(mp->name, json_string_value(json_object_get(jp, "name")));
            assert_int_equal(mp->compute_slices,
                             json_integer_value(json_object_get(jp, "compute_slices")));
            assert_int_equal(mp->memory_slices,
                             json_integer_value(json_object_get(jp, "placement_size")));
            assert_int_equal(mp->max_instances,
                             json_integer_value(json_object_get(jp, "max_instances")));
            assert_int_equal(mp->memory_mib,
                             1024 * json_integer_value(json_object_get(jp, "memory_gb_nominal")));
            assert_int_equal(mp->smi_id,
                             json_integer_value(json_object_get(jp, "nvidia_smi_profile_id")));
            unsigned mask = 0;
            json_t *starts = json_object_get(jp, "placement_starts");
            for (size_t s = 0; s < json_array_size(starts); s++)
                mask |= 1u << json_integer_value(json_array_get(starts, s));
            assert_int_equal(mp->start_mask, mask);
            assert_int_equal(mp->media_ext, strstr(mp->name, "+me") != NULL);
            assert_int_equal(gp_mig_profile_find(m, mp->name), (int)p);
            /* every profile alone, as many as allowed, is a valid layout */
            struct gp_mig_counts c;
            memset(&c, 0, sizeof c);
            c.n[p] = mp->max_instances;
            struct gp_mig_layout l;
            char why[200];
            if (!gp_mig_layout_from_counts(m, &c, &l, why, sizeof why))
                fail_msg("%s x%u on %s: %s", mp->name, mp->max_instances, m->id, why);
            assert_int_equal(l.n, mp->max_instances);
            assert_true(gp_mig_layout_valid(m, &l, NULL, 0));
        }
    }
    json_decref(root);
}

/* The facts every user sees, written out (MIG user guide tables). */
static void test_profiles_by_hand(void **state)
{
    (void)state;
    const struct gp_mig_model *m = model("A100-80GB");
    assert_int_equal(m->compute_slices, 7);
    assert_int_equal(m->memory_slices, 8);
    static const struct {
        const char *name;
        unsigned g, mem, max, mask;
    } a100[] = {
        {"1g.10gb", 1, 1, 7, 0x7f}, {"1g.10gb+me", 1, 1, 1, 0x7f}, {"1g.20gb", 1, 2, 4, 0x55},
        {"2g.20gb", 2, 2, 3, 0x15}, {"3g.40gb", 3, 4, 2, 0x11},    {"4g.40gb", 4, 4, 1, 0x01},
        {"7g.80gb", 7, 8, 1, 0x01},
    };
    assert_int_equal(m->nprofiles, 7);
    for (size_t i = 0; i < 7; i++) {
        const struct gp_mig_profile *p = &m->profiles[prof(m, a100[i].name)];
        assert_int_equal(p->compute_slices, a100[i].g);
        assert_int_equal(p->memory_slices, a100[i].mem);
        assert_int_equal(p->max_instances, a100[i].max);
        assert_int_equal(p->start_mask, a100[i].mask);
    }
    const struct gp_mig_model *a30 = model("A30-24GB");
    assert_int_equal(a30->compute_slices, 4);
    assert_int_equal(a30->memory_slices, 4);
    assert_int_equal(a30->profiles[prof(a30, "1g.6gb")].max_instances, 4);
    assert_int_equal(a30->profiles[prof(a30, "2g.12gb")].start_mask, 0x5);
    assert_int_equal(a30->profiles[prof(a30, "4g.24gb")].memory_mib, 24 * 1024);
    /* A100-40GB's 1g.10gb is one compute slice on two memory slices */
    const struct gp_mig_model *a40 = model("A100-40GB");
    assert_int_equal(a40->profiles[prof(a40, "1g.10gb")].memory_slices, 2);
    assert_int_equal(a40->profiles[prof(a40, "1g.10gb")].compute_slices, 1);
    assert_int_equal(a40->profiles[prof(a40, "1g.5gb")].max_instances, 7);
    /* the names differ by memory */
    assert_true(gp_mig_profile_find(model("H100-94GB"), "3g.47gb") >= 0);
    assert_true(gp_mig_profile_find(model("H200-141GB"), "7g.141gb") >= 0);
    assert_true(gp_mig_profile_find(model("B200-180GB"), "1g.23gb+me") >= 0);
    assert_int_equal(gp_mig_profile_find(m, "1g.5gb"), -1);
    assert_int_equal(gp_mig_profile_by_resource(m, "nvidia.com/mig-3g.40gb"), prof(m, "3g.40gb"));
    assert_int_equal(gp_mig_profile_by_resource(m, "nvidia.com/gpu"), -1);
}

static void test_model_names(void **state)
{
    (void)state;
    static const struct {
        const char *name, *id;
    } cases[] = {
        {"A100-80GB", "A100-80GB"},
        {"a100-80gb", "A100-80GB"},
        {"A100-SXM4-80GB", "A100-80GB"},
        {"NVIDIA A100-SXM4-80GB", "A100-80GB"},
        {"NVIDIA A100 80GB PCIe", "A100-80GB"},
        {"NVIDIA A100-PCIE-40GB", "A100-40GB"},
        {"A800 40GB", "A100-40GB"},
        {"NVIDIA-H100-80GB-HBM3", "H100-80GB"},
        {"NVIDIA H100 80GB HBM3", "H100-80GB"},
        {"H100", "H100-80GB"},
        {"H800", "H100-80GB"},
        {"NVIDIA H100 NVL", "H100-94GB"},
        {"H100 SXM5 94GB", "H100-94GB"},
        {"H100-96GB", "GH200-96GB"},
        {"NVIDIA GH200 480GB", "GH200-96GB"},
        {"NVIDIA GH200 144G HBM3e", "GH200-144GB"},
        {"H20", "GH200-96GB"},
        {"H200", "H200-141GB"},
        {"NVIDIA H200 NVL", "H200-141GB"},
        {"B200", "B200-180GB"},
        {"NVIDIA B200", "B200-180GB"},
        {"GB200", "GB200-186GB"},
        {"A30", "A30-24GB"},
        {"NVIDIA A30", "A30-24GB"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const struct gp_mig_model *m = gp_mig_model_find(cases[i].name);
        if (!m || strcmp(m->id, cases[i].id) != 0)
            fail_msg("%s: got %s, want %s", cases[i].name, m ? m->id : "NULL", cases[i].id);
    }
    static const char *const none[] = {"A100",      "L4", "T4",   "Tesla-T4", "L40S",
                                       "H100 40GB", "",   "V100", "RTX 6000"};
    for (size_t i = 0; i < sizeof none / sizeof none[0]; i++)
        if (gp_mig_model_find(none[i]))
            fail_msg("%s: expected no MIG model", none[i]);
    assert_null(gp_mig_model_find(NULL));
    assert_null(gp_mig_model_by_pci(0x12345678));
    assert_string_equal(gp_mig_model_by_pci(0x20B210DE)->id, "A100-80GB");
}

/* --- validity ----------------------------------------------------------- */

static void test_valid_layouts(void **state)
{
    (void)state;
    const struct gp_mig_model *m = model("A100-80GB");
    expect_valid(m, "");
    expect_valid(m, "1g.10gb@0 1g.10gb@1 1g.10gb@2 1g.10gb@3 1g.10gb@4 1g.10gb@5 1g.10gb@6");
    expect_valid(m, "3g.40gb@0 3g.40gb@4");
    expect_valid(m, "3g.40gb@4 4g.40gb@0");
    expect_valid(m, "7g.80gb@0");
    expect_valid(m, "3g.40gb@4 2g.20gb@0 1g.10gb@2 1g.10gb@3");
    expect_valid(m, "2g.20gb@0 2g.20gb@2 2g.20gb@4 1g.10gb@6");
    expect_valid(m, "1g.20gb@0 1g.20gb@2 1g.20gb@4 1g.20gb@6");
    expect_valid(m, "4g.40gb@0 1g.10gb+me@4 1g.10gb@5 1g.10gb@6");
    const struct gp_mig_model *a30 = model("A30-24GB");
    expect_valid(a30, "1g.6gb@0 1g.6gb@1 1g.6gb@2 1g.6gb@3");
    expect_valid(a30, "2g.12gb@0 1g.6gb+me@2 1g.6gb@3");
    expect_valid(a30, "4g.24gb@0");
}

static void test_invalid_layouts(void **state)
{
    (void)state;
    const struct gp_mig_model *m = model("A100-80GB");
    expect_invalid(m, "1g.10gb@7",
                   "1g.10gb at slice 7: not a valid start (valid: 0, 1, 2, 3, 4, 5, 6)");
    expect_invalid(m, "3g.40gb@2", "3g.40gb at slice 2: not a valid start (valid: 0, 4)");
    expect_invalid(m, "4g.40gb@0 4g.40gb@0", "4g.40gb at slice 0 overlaps 4g.40gb at slice 0");
    expect_invalid(m, "4g.40gb@4", "4g.40gb at slice 4: not a valid start (valid: 0)");
    expect_invalid(m, "3g.40gb@0 4g.40gb@0", "4g.40gb at slice 0 overlaps 3g.40gb at slice 0");
    expect_invalid(m, "7g.80gb@0 1g.10gb@6", "1g.10gb at slice 6 overlaps 7g.80gb at slice 0");
    expect_invalid(m, "1g.10gb+me@0 1g.10gb+me@1",
                   "2 instances of 1g.10gb+me, at most 1 on A100-80GB");
    expect_invalid(m, "2g.20gb@2 1g.20gb@2", "1g.20gb at slice 2 overlaps 2g.20gb at slice 2");
    const struct gp_mig_model *a30 = model("A30-24GB");
    expect_invalid(a30, "1g.6gb+me@0 2g.12gb+me@2", "2 +me instances, at most one per GPU");
    struct gp_mig_layout l;
    memset(&l, 0, sizeof l);
    l.n = 1;
    l.inst[0].profile = 9;
    char why[200];
    assert_false(gp_mig_layout_valid(m, &l, why, sizeof why));
    assert_string_equal(why, "instance 0: no profile 9 on A100-80GB");
    l.n = GP_MIG_MAX_INSTANCES + 1;
    assert_false(gp_mig_layout_valid(m, &l, NULL, 0));

    /* compute slices: no real layout reaches the limit without an overlap,
     * so a made-up GPU with 3 compute slices over 4 memory slices */
    static const struct gp_mig_profile small[] = {{"1g.1gb", 1, 1, 4, 0xf, 1024, false, 0, 0}};
    static const struct gp_mig_model tiny = {"tiny", 3, 4, "derived", NULL, 0, NULL, 0, small, 1};
    struct gp_mig_layout t = {4, {{0, 0}, {0, 1}, {0, 2}, {0, 3}}};
    assert_false(gp_mig_layout_valid(&tiny, &t, why, sizeof why));
    assert_string_equal(why, "4 compute slices, tiny has 3");
    t.n = 3;
    assert_true(gp_mig_layout_valid(&tiny, &t, NULL, 0));
    assert_false(gp_mig_fits(&tiny, &t, 0, 3));
    assert_int_equal(gp_mig_place(&tiny, &t, 0), -1);
}

/* --- the placement rule, by hand ----------------------------------------- */

static void test_place_by_hand(void **state)
{
    (void)state;
    const struct gp_mig_model *m = model("A100-80GB");
    struct gp_mig_layout empty;
    memset(&empty, 0, sizeof empty);
    /* on an empty GPU: slices 0-3 stay free for a 4g */
    assert_int_equal(gp_mig_place(m, &empty, prof(m, "1g.10gb")), 6);
    assert_int_equal(gp_mig_place(m, &empty, prof(m, "1g.20gb")), 6);
    assert_int_equal(gp_mig_place(m, &empty, prof(m, "2g.20gb")), 4);
    assert_int_equal(gp_mig_place(m, &empty, prof(m, "3g.40gb")), 4);
    assert_int_equal(gp_mig_place(m, &empty, prof(m, "4g.40gb")), 0);
    assert_int_equal(gp_mig_place(m, &empty, prof(m, "7g.80gb")), 0);

    /* 2g at 0-1: a 1g at 2 or 3 keeps 3g at 4 possible; at 6 it would not */
    struct gp_mig_layout l = layout(m, "2g.20gb@0");
    assert_int_equal(gp_mig_place(m, &l, prof(m, "1g.10gb")), 2);
    /* 3g at 4: the 2g takes 0 (2 would do as well, the lower start wins) */
    l = layout(m, "3g.40gb@4");
    assert_int_equal(gp_mig_place(m, &l, prof(m, "2g.20gb")), 0);
    /* 4g at 0: one 3g would fit at 4; a 1g goes to 6 so that a 2g still fits at 4 */
    l = layout(m, "4g.40gb@0");
    assert_int_equal(gp_mig_place(m, &l, prof(m, "1g.10gb")), 6);
    assert_int_equal(gp_mig_place(m, &l, prof(m, "4g.40gb")), -1);
    assert_int_equal(gp_mig_place(m, &l, prof(m, "7g.80gb")), -1);

    /* seven 1g one by one: 6, then 4 (5 and 4 keep the same room), ... */
    memset(&l, 0, sizeof l);
    static const unsigned want[] = {6, 4, 5, 0, 1, 2, 3};
    for (size_t i = 0; i < 7; i++) {
        assert_int_equal(gp_mig_add(m, &l, prof(m, "1g.10gb")), (int)i);
        assert_int_equal(l.inst[i].start, want[i]);
    }
    assert_int_equal(gp_mig_add(m, &l, prof(m, "1g.10gb")), -1);
    assert_int_equal(l.n, 7);
    assert_int_equal(gp_mig_free_profiles(m, &l), 0);
    assert_int_equal(gp_mig_used_slices(m, &l), 0x7f);
    assert_int_equal(gp_mig_used_compute(m, &l), 7);

    /* free profiles and capacities after 3g at 4 */
    l = layout(m, "3g.40gb@4");
    uint32_t free = gp_mig_free_profiles(m, &l);
    assert_int_equal(free, (1u << prof(m, "1g.10gb")) | (1u << prof(m, "1g.10gb+me")) |
                               (1u << prof(m, "1g.20gb")) | (1u << prof(m, "2g.20gb")) |
                               (1u << prof(m, "3g.40gb")) | (1u << prof(m, "4g.40gb")));
    assert_int_equal(gp_mig_capacity(m, &l, prof(m, "1g.10gb")), 4);
    assert_int_equal(gp_mig_capacity(m, &l, prof(m, "2g.20gb")), 2);
    assert_int_equal(gp_mig_capacity(m, &l, prof(m, "4g.40gb")), 1);
    assert_int_equal(gp_mig_capacity(m, &l, prof(m, "7g.80gb")), 0);
    gp_mig_remove(&l, 0);
    assert_int_equal(l.n, 0);
    gp_mig_remove(&l, 0); /* out of range: nothing */
    assert_int_equal(l.n, 0);
}

/* --- layouts from counts ---------------------------------------------------- */

static void expect_counts(const struct gp_mig_model *m, const char *counts_spec, const char *want)
{
    struct gp_mig_counts c;
    memset(&c, 0, sizeof c);
    char buf[200];
    snprintf(buf, sizeof buf, "%s", counts_spec);
    for (char *tok = strtok(buf, " "); tok; tok = strtok(NULL, " ")) {
        char name[64]; /* "1g.10gbx7": a profile (no x in any name) and a count */
        unsigned count;
        if (sscanf(tok, "%63[^x]x%u", name, &count) != 2) {
            fail_msg("bad count %s", tok);
            return;
        }
        unsigned q = prof(m, name);
        if (q < GP_MIG_MAX_PROFILES)
            c.n[q] = (uint8_t)count;
    }
    struct gp_mig_layout l;
    char why[200] = "";
    bool ok = gp_mig_layout_from_counts(m, &c, &l, why, sizeof why);
    char got[sizeof why + 16];
    if (ok)
        gp_mig_layout_format(m, &l, got, sizeof got);
    else
        snprintf(got, sizeof got, "error: %s", why);
    if (strcmp(got, want) != 0)
        fail_msg("%s on %s:\n got  %s\n want %s", counts_spec, m->id, got, want);
    if (ok) {
        assert_true(gp_mig_layout_valid(m, &l, NULL, 0));
        struct gp_mig_counts back;
        gp_mig_layout_counts(m, &l, &back);
        assert_memory_equal(&back, &c, sizeof c);
    }
}

static void test_from_counts(void **state)
{
    (void)state;
    const struct gp_mig_model *m = model("A100-80GB");
    expect_counts(m, "1g.10gbx7",
                  "1g.10gb@6 1g.10gb@4 1g.10gb@5 1g.10gb@0 1g.10gb@1 1g.10gb@2 1g.10gb@3");
    expect_counts(m, "3g.40gbx1 4g.40gbx1", "4g.40gb@0 3g.40gb@4");
    expect_counts(m, "7g.80gbx1", "7g.80gb@0");
    /* all-balanced: the 3g must take 4, or the two 1g would not fit */
    expect_counts(m, "1g.10gbx2 2g.20gbx1 3g.40gbx1", "3g.40gb@4 2g.20gb@0 1g.10gb@2 1g.10gb@3");
    expect_counts(m, "2g.20gbx3 1g.10gbx1", "2g.20gb@4 2g.20gb@0 2g.20gb@2 1g.10gb@6");
    expect_counts(m, "", "");
    expect_counts(m, "4g.40gbx2", "error: \"4g.40gb\": 2 instances, at most 1 on A100-80GB");
    expect_counts(m, "1g.10gbx8", "error: \"1g.10gb\": 8 instances, at most 7 on A100-80GB");
    expect_counts(m, "1g.10gbx7 1g.10gb+mex1",
                  "error: \"1g.10gb+me\": no room for instance 1 of 1 beside the larger ones: "
                  "the layout needs 8 compute slices, A100-80GB has 7");
    expect_counts(m, "3g.40gbx2 2g.20gbx1",
                  "error: \"2g.20gb\": no room for instance 1 of 1 beside the larger ones: the "
                  "layout needs 10 memory slices, A100-80GB has 8");
    expect_counts(m, "4g.40gbx1 1g.20gbx1 2g.20gbx1 1g.10gbx1",
                  "error: \"1g.10gb\": no room for instance 1 of 1 beside the larger ones: the "
                  "layout needs 9 memory slices, A100-80GB has 8");
    /* slice 7 is only for the 2-slice 1g.20gb, so it goes there first */
    expect_counts(m, "1g.20gbx1 1g.10gbx6",
                  "1g.20gb@6 1g.10gb@4 1g.10gb@5 1g.10gb@0 1g.10gb@1 1g.10gb@2 1g.10gb@3");
    expect_counts(m, "1g.20gbx2 1g.10gbx5",
                  "error: \"1g.10gb\": no room for instance 5 of 5 beside the larger ones: the "
                  "layout needs 9 memory slices, A100-80GB has 8");
}

/* Every valid layout of a model by brute force: the count vectors that have
 * at least one. Counts are packed as base-8 digits per profile. */
static void enumerate(const struct gp_mig_model *m, struct gp_mig_layout *l, unsigned from,
                      uint8_t *seen, size_t nseen)
{
    struct gp_mig_counts c;
    gp_mig_layout_counts(m, l, &c);
    size_t key = 0;
    for (size_t p = m->nprofiles; p-- > 0;)
        key = key * 8 + c.n[p];
    assert_true(key < nseen);
    seen[key] = 1;
    if (l->n == GP_MIG_MAX_INSTANCES)
        return;
    /* instances in (profile, start) order, each after the previous one */
    for (unsigned code = from; code < m->nprofiles * GP_MIG_MAX_SLICES; code++) {
        l->inst[l->n].profile = (uint8_t)(code / GP_MIG_MAX_SLICES);
        l->inst[l->n].start = (uint8_t)(code % GP_MIG_MAX_SLICES);
        l->n++;
        if (gp_mig_layout_valid(m, l, NULL, 0))
            enumerate(m, l, code + 1, seen, nseen);
        l->n--;
    }
}

static void test_from_counts_exhaustive(void **state)
{
    (void)state;
    for (size_t i = 0; i < gp_mig_nmodels; i++) {
        const struct gp_mig_model *m = &gp_mig_models[i];
        size_t nseen = 1;
        for (size_t p = 0; p < m->nprofiles; p++)
            nseen *= 8;
        uint8_t *seen = calloc(nseen, 1);
        assert_non_null(seen);
        struct gp_mig_layout l;
        memset(&l, 0, sizeof l);
        enumerate(m, &l, 0, seen, nseen);
        /* every count vector with each count up to max_instances: from_counts
         * finds a layout exactly when one exists */
        size_t tried = 0, found = 0;
        for (size_t key = 0; key < nseen; key++) {
            struct gp_mig_counts c;
            memset(&c, 0, sizeof c);
            size_t k = key;
            bool in_range = true;
            for (size_t p = 0; p < m->nprofiles; p++, k /= 8) {
                c.n[p] = (uint8_t)(k % 8);
                if (c.n[p] > m->profiles[p].max_instances)
                    in_range = false;
            }
            if (!in_range)
                continue;
            struct gp_mig_layout out;
            char why[200] = "";
            bool ok = gp_mig_layout_from_counts(m, &c, &out, why, sizeof why);
            if (ok != (seen[key] != 0))
                fail_msg("%s: key %zu: from_counts %d, exhaustive %d (%s)", m->id, key, ok,
                         seen[key], why);
            if (ok)
                assert_true(gp_mig_layout_valid(m, &out, NULL, 0));
            else
                assert_true(why[0] == '"'); /* names the profile */
            tried++;
            found += ok;
        }
        assert_true(found > 10 && tried > found);
        free(seen);
    }
}

/* --- named configs against mig-parted's default file -------------------- */

static struct fy_node *map_get(struct fy_node *n, const char *key)
{
    return n ? fy_node_mapping_lookup_by_string(n, key, strlen(key)) : NULL;
}

static bool filter_matches(struct fy_node *filter, const struct gp_mig_model *m)
{
    if (!filter)
        return true;
    void *it = NULL;
    struct fy_node *item;
    if (fy_node_is_scalar(filter)) {
        uint32_t id = (uint32_t)strtoul(fy_node_get_scalar0(filter), NULL, 16);
        return gp_mig_model_by_pci(id) == m;
    }
    while ((item = fy_node_sequence_iterate(filter, &it)) != NULL)
        if (gp_mig_model_by_pci((uint32_t)strtoul(fy_node_get_scalar0(item), NULL, 16)) == m)
            return true;
    return false;
}

static void test_named_configs_match_mig_parted(void **state)
{
    (void)state;
    const char *path = GP_SHARED_DIR "/data/mig-parted-config-default.yaml";
    GP_NEED_SHARED(path);
    struct fy_document *doc = fy_document_build_from_file(NULL, path);
    assert_non_null(doc);
    struct fy_node *configs = map_get(fy_document_root(doc), "mig-configs");
    assert_non_null(configs);
    void *it = NULL;
    struct fy_node_pair *pair;
    size_t compared = 0;
    while ((pair = fy_node_mapping_iterate(configs, &it)) != NULL) {
        const char *name = fy_node_get_scalar0(fy_node_pair_key(pair));
        struct fy_node *specs = fy_node_pair_value(pair);
        for (size_t i = 0; i < gp_mig_nmodels; i++) {
            const struct gp_mig_model *m = &gp_mig_models[i];
            /* the spec mig-parted applies to this model: a matching device
             * filter first, else one without a filter */
            struct fy_node *spec = NULL, *any = NULL, *item;
            void *it2 = NULL;
            while ((item = fy_node_sequence_iterate(specs, &it2)) != NULL) {
                struct fy_node *filter = map_get(item, "device-filter");
                if (filter && filter_matches(filter, m) && !spec)
                    spec = item;
                if (!filter && !any)
                    any = item;
            }
            if (!spec)
                spec = any;
            if (!spec)
                continue;
            bool enabled = strcmp(fy_node_get_scalar0(map_get(spec, "mig-enabled")), "true") == 0;
            struct gp_mig_counts want;
            memset(&want, 0, sizeof want);
            bool known = true;
            struct fy_node *devices = map_get(spec, "mig-devices");
            void *it3 = NULL;
            struct fy_node_pair *d;
            while (devices && (d = fy_node_mapping_iterate(devices, &it3)) != NULL) {
                int p = gp_mig_profile_find(m, fy_node_get_scalar0(fy_node_pair_key(d)));
                if (p < 0)
                    known = false;
                else
                    want.n[p] = (uint8_t)atoi(fy_node_get_scalar0(fy_node_pair_value(d)));
            }
            struct gp_mig_counts got;
            bool got_enabled;
            bool ok = gp_mig_named_config(m, name, &got, &got_enabled);
            if (!known) { /* names a profile this GPU lacks: so must we */
                if (ok)
                    fail_msg("%s on %s: mig-parted's spec names a profile %s lacks", name, m->id,
                             m->id);
                continue;
            }
            if (!ok)
                fail_msg("%s on %s: not resolved", name, m->id);
            assert_int_equal(got_enabled, enabled);
            if (memcmp(&got, &want, sizeof got) != 0)
                fail_msg("%s on %s: counts differ from mig-parted's", name, m->id);
            /* and every one of NVIDIA's layouts can be placed */
            struct gp_mig_layout l;
            char why[200];
            if (!gp_mig_layout_from_counts(m, &want, &l, why, sizeof why))
                fail_msg("%s on %s: %s", name, m->id, why);
            compared++;
        }
    }
    fy_document_destroy(doc);
    assert_true(compared > 60);
    struct gp_mig_counts c;
    bool en;
    assert_false(gp_mig_named_config(model("A100-80GB"), "all-1g.5gb", &c, &en));
    assert_false(gp_mig_named_config(model("A100-80GB"), "balanced", &c, &en));
    assert_false(gp_mig_named_config(model("A100-80GB"), NULL, &c, &en));
}

/* --- property: random placements and removals --------------------------- */

static void test_random_place_remove(void **state)
{
    (void)state;
    size_t cases = 0, placed = 0, refused = 0;
    for (size_t i = 0; i < gp_mig_nmodels; i++) {
        const struct gp_mig_model *m = &gp_mig_models[i];
        for (uint64_t seed = 1; seed <= 150; seed++, cases++) {
            struct gp_rng r;
            gp_rng_seed(&r, seed * 1000 + i);
            struct gp_mig_layout l;
            memset(&l, 0, sizeof l);
            for (int step = 0; step < 60; step++) {
                unsigned p = (unsigned)gp_rng_below(&r, m->nprofiles);
                if (l.n > 0 && gp_rng_below(&r, 3) == 0) {
                    gp_mig_remove(&l, (unsigned)gp_rng_below(&r, l.n));
                } else {
                    uint32_t free = gp_mig_free_profiles(m, &l);
                    bool any = false;
                    for (unsigned s = 0; s < GP_MIG_MAX_SLICES; s++)
                        any |= gp_mig_fits(m, &l, p, s);
                    assert_int_equal(any, (free >> p) & 1);
                    assert_int_equal(any, gp_mig_capacity(m, &l, p) > 0);
                    int k = gp_mig_add(m, &l, p);
                    if (k < 0) {
                        assert_false(any);
                        refused++;
                    } else {
                        assert_true(any);
                        placed++;
                    }
                }
                char why[200];
                if (!gp_mig_layout_valid(m, &l, why, sizeof why))
                    fail_msg("%s seed %llu step %d: %s", m->id, (unsigned long long)seed, step,
                             why);
                assert_true(gp_mig_used_compute(m, &l) <= m->compute_slices);
            }
        }
    }
    assert_true(cases >= 1000);
    assert_true(placed > 1000 && refused > 1000);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tables_match_data),   cmocka_unit_test(test_profiles_by_hand),
        cmocka_unit_test(test_model_names),         cmocka_unit_test(test_valid_layouts),
        cmocka_unit_test(test_invalid_layouts),     cmocka_unit_test(test_place_by_hand),
        cmocka_unit_test(test_from_counts),         cmocka_unit_test(test_from_counts_exhaustive),
        cmocka_unit_test(test_random_place_remove),
    };
    /* tests/CMakeLists.txt runs these apart (shared_data.h) */
    const struct CMUnitTest shared[] = {
        cmocka_unit_test(test_named_configs_match_mig_parted),
    };
    if (gp_shared_mode(argc, argv))
        return gp_shared_exit(cmocka_run_group_tests_name("shared", shared, NULL, NULL));
    return cmocka_run_group_tests(tests, NULL, NULL);
}
