/* test_catalog.c - the provider catalog as rows (io/catalog.h): the
 * compiled table's new fields against data/providers.json, dates and ages
 * at their edges, a user's offers laid over the catalog (replacing one,
 * adding one), the filters' terms and the sorts' orders. The offers file's
 * errors are in tests/cli/providers.sh. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "io/catalog.h"

static enum gp_tri tri_of(json_t *v)
{
    const char *s = json_string_value(v);
    return !s                      ? GP_TRI_UNKNOWN
           : strcmp(s, "yes") == 0 ? GP_TRI_YES
           : strcmp(s, "no") == 0  ? GP_TRI_NO
                                   : GP_TRI_UNKNOWN;
}

static const char *text_of(json_t *v)
{
    const char *s = json_string_value(v);
    return s ? s : "";
}

/* Every field the generator added says what the JSON says. */
static void test_table_matches_json(void **state)
{
    (void)state;
    json_error_t jerr;
    json_t *root = json_load_file(GP_EXAMPLES_DIR "/../data/providers.json", 0, &jerr);
    assert_non_null(root);
    assert_string_equal(gp_providers_compiled_on,
                        text_of(json_object_get(json_object_get(root, "as_of"), "compiled_on")));
    json_t *provs = json_object_get(root, "providers");
    size_t k = 0;
    assert_int_equal(json_array_size(provs), gp_nproviders);
    for (size_t i = 0; i < gp_nproviders; i++) {
        json_t *p = json_array_get(provs, i);
        const struct gp_provider *t = &gp_providers[i];
        json_t *sh = json_object_get(p, "gpu_sharing"), *as = json_object_get(p, "autoscaling");
        json_t *ic = json_object_get(p, "interconnect");
        assert_string_equal(t->name, text_of(json_object_get(p, "name")));
        assert_string_equal(t->category, text_of(json_object_get(p, "category")));
        assert_int_equal(
            t->drivers_preinstalled,
            tri_of(json_object_get(json_object_get(p, "gpu_drivers_preinstalled"), "value")));
        assert_int_equal(t->time_slicing, tri_of(json_object_get(sh, "time_slicing")));
        assert_int_equal(t->mig, tri_of(json_object_get(sh, "mig")));
        assert_int_equal(t->mps, tri_of(json_object_get(sh, "mps")));
        const char *type = text_of(json_object_get(ic, "type"));
        assert_string_equal(t->interconnect, strcmp(type, "unknown") == 0 ? "" : type);
        json_t *bw = json_object_get(ic, "bandwidth_gbps");
        assert_float_equal(t->interconnect_gbps, json_is_number(bw) ? json_number_value(bw) : -1,
                           1e-9);
        assert_int_equal(
            t->rwx_storage,
            tri_of(json_object_get(json_object_get(p, "shared_storage_rwx"), "available")));
        assert_int_equal(t->spot,
                         tri_of(json_object_get(json_object_get(p, "spot_gpu_nodes"), "value")));
        assert_int_equal(t->autoscaling, tri_of(json_object_get(as, "node_pool_autoscaling")));
        assert_int_equal(t->scale_to_zero, tri_of(json_object_get(as, "scale_to_zero")));
        assert_string_equal(t->billing, text_of(json_object_get(p, "billing_granularity")));
        json_t *offers = json_object_get(p, "gpu_offers");
        for (size_t j = 0; j < json_array_size(offers); j++, k++) {
            json_t *o = json_array_get(offers, j);
            const struct gp_offer *off = &gp_offers[k];
            assert_string_equal(off->provider, t->id);
            assert_string_equal(off->price_date, text_of(json_object_get(o, "price_date")));
            assert_string_equal(off->region, text_of(json_object_get(o, "region")));
            assert_string_equal(off->price_source_url,
                                text_of(json_object_get(o, "price_source_url")));
            json_t *avg = json_object_get(o, "observed_average_usd_per_gpu_hour");
            assert_float_equal(off->observed_avg_gpu_hour,
                               json_is_number(avg) ? json_number_value(avg) : -1, 1e-9);
        }
    }
    assert_int_equal(k, gp_noffers);
    json_decref(root);
}

/* Days since 1970-01-01, and the dates that are not dates. */
static void test_dates(void **state)
{
    (void)state;
    static const struct {
        const char *s;
        int64_t days;
    } ok[] = {
        {"1970-01-01", 0},     {"1970-01-02", 1},     {"1970-12-31", 364},
        {"2000-02-29", 11016}, {"2000-03-01", 11017}, {"2024-02-29", 19782},
        {"2026-11-30", 20787}, {"2026-12-01", 20788}, {"2100-02-28", 47540},
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        int64_t d = -1;
        assert_true(gp_catalog_date_days(ok[i].s, &d));
        if (d != ok[i].days)
            fail_msg("%s: %lld days, want %lld", ok[i].s, (long long)d, (long long)ok[i].days);
    }
    static const char *const bad[] = {"",           "2026-1-01",   "2026-13-01", "2026-00-10",
                                      "2026-02-29", "2100-02-29",  "2026-04-31", "1969-12-31",
                                      "2026/12/01", "2026-12-01x", "20261201",   "2026-12-00"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int64_t d;
        if (gp_catalog_date_days(bad[i], &d))
            fail_msg("\"%s\" read as a date", bad[i]);
    }
}

static const char offers_yaml[] =
    "apiVersion: gpuplane.io/v1\n"
    "kind: Offers\n"
    "offers:\n"
    "  - {provider: eks, instance: p5.48xlarge, pricePerGpuHour: 4.10, priceDate: 2026-11-20,\n"
    "     source: contract}\n"
    "  - {provider: coreweave, instance: gd-8xl40s, gpu: L40S 48GB, gpusPerNode: 8,\n"
    "     pricePerNodeHour: 13.20, priceDate: 2026-01-15, source: quote, pricing: reserved}\n"
    "  - {provider: runpod, instance: Secure Cloud, gpu: L40S 48GB, pricePerGpuHour: 0.99,\n"
    "     priceDate: 2026-11-01, source: plan}\n";

static long offer_index(const char *provider, const char *instance, const char *gpu)
{
    for (size_t i = 0; i < gp_noffers; i++)
        if (strcmp(gp_offers[i].provider, provider) == 0 &&
            strcmp(gp_offers[i].instance, instance) == 0 &&
            (!gpu || strcmp(gp_offers[i].gpu, gpu) == 0))
            return (long)i;
    return -1;
}

/* A user's offers: one replaces p5.48xlarge (the catalog's GPU and node
 * kept, its prices all the user's), one is new and follows its provider's
 * catalog offers, one names one GPU of an instance with several. */
static void test_user_offers(void **state)
{
    (void)state;
    struct gp_arena a;
    gp_arena_init(&a);
    struct gp_user_offers u;
    struct gp_diag d = {""};
    int64_t today;
    assert_true(gp_catalog_date_days("2026-12-01", &today));
    assert_int_equal(
        gp_catalog_offers_parse(offers_yaml, strlen(offers_yaml), "o.yaml", today, &a, &u, &d),
        GP_OK);
    assert_int_equal(u.n, 3);
    assert_int_equal(u.items[0].replaces, offer_index("eks", "p5.48xlarge", NULL));
    assert_string_equal(u.items[0].offer.gpu, "H100 SXM 80GB");
    assert_int_equal(u.items[0].offer.gpus_per_node, 8);
    assert_float_equal(u.items[0].offer.on_demand_gpu_hour, 4.10, 1e-12);
    assert_float_equal(u.items[0].offer.on_demand_node_hour, -1, 0); /* not the catalog's 55.04 */
    assert_string_equal(u.items[0].pricing, "negotiated");
    assert_string_equal(u.items[0].origin, "o.yaml:4");
    assert_int_equal(u.items[1].replaces, -1);
    assert_string_equal(u.items[1].pricing, "reserved");
    assert_int_equal(u.items[2].replaces, offer_index("runpod", "Secure Cloud", "L40S 48GB"));

    struct gp_catalog_row *rows;
    size_t n;
    assert_int_equal(gp_catalog_rows(&u, today, 180, &a, &rows, &n, &d), GP_OK);
    assert_int_equal(n, gp_noffers + 1);
    size_t users = 0, last_cw = 0, new_at = 0;
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(rows[i].order, i);
        if (rows[i].user)
            users++;
        if (strcmp(rows[i].provider->id, "coreweave") == 0 && !rows[i].user)
            last_cw = i;
        if (rows[i].user == &u.items[1])
            new_at = i;
        if (rows[i].user == &u.items[0]) {
            assert_int_equal(rows[i].age_days, 11);
            assert_false(rows[i].stale);
        }
        if (rows[i].user == &u.items[1]) {
            assert_int_equal(rows[i].age_days, 320);
            assert_true(rows[i].stale);
        }
    }
    assert_int_equal(users, 3);
    assert_int_equal(new_at, last_cw + 1);
    /* stale is strictly older than the limit */
    assert_int_equal(gp_catalog_rows(&u, today, 320, &a, &rows, &n, &d), GP_OK);
    for (size_t i = 0; i < n; i++)
        if (rows[i].user == &u.items[1])
            assert_false(rows[i].stale);
    gp_arena_free(&a);
}

static struct gp_catalog_filter any(void)
{
    struct gp_catalog_filter f;
    memset(&f, 0, sizeof f);
    f.min_price = f.max_price = -1;
    return f;
}

/* Each term keeps what it says, and a price range leaves out the unpriced. */
static void test_filters(void **state)
{
    (void)state;
    struct gp_arena a;
    gp_arena_init(&a);
    struct gp_catalog_row *rows;
    size_t n;
    struct gp_diag d = {""};
    assert_int_equal(gp_catalog_rows(NULL, 20788, 180, &a, &rows, &n, &d), GP_OK);
    assert_int_equal(n, gp_noffers);
    struct gp_catalog_filter f = any();
    size_t kept = 0;
    for (size_t i = 0; i < n; i++)
        kept += gp_catalog_row_matches(&rows[i], &f);
    assert_int_equal(kept, n);
    assert_false(gp_catalog_filter_on_offers(&f));
    f.max_price = 2.0;
    assert_true(gp_catalog_filter_on_offers(&f));
    for (size_t i = 0; i < n; i++) {
        double p = gp_catalog_gpu_hour(rows[i].offer, false);
        assert_int_equal(gp_catalog_row_matches(&rows[i], &f), p >= 0 && p <= 2.0);
    }
    f = any();
    f.kube_mask = 1u << GP_KUBE_NONE;
    for (size_t i = 0; i < n; i++)
        assert_int_equal(gp_catalog_row_matches(&rows[i], &f),
                         rows[i].provider->kubernetes == GP_KUBE_NONE);
    f = any();
    f.gpu = "A100-80GB";
    for (size_t i = 0; i < n; i++)
        assert_int_equal(gp_catalog_row_matches(&rows[i], &f),
                         gp_offer_gpu_matches(rows[i].offer, "A100-80GB"));
    assert_true(gp_catalog_has_word("InfiniBand (Quantum-2) with GPUDirect RDMA", "infiniband"));
    assert_true(gp_catalog_has_word("GPUDirect-TCPX / GPUDirect-TCPXO", "tcpxo"));
    assert_false(gp_catalog_has_word("GPUDirect-TCPXO", "tcpx")); /* a word, not a prefix */
    assert_false(gp_catalog_has_word("", "any"));
    assert_true(gp_catalog_has_word("EFA", "any"));
    gp_arena_free(&a);
}

/* Price: cheapest first, unpriced last; memory: largest first, unknown
 * last; ties keep the catalog's order. */
static void test_sort(void **state)
{
    (void)state;
    struct gp_arena a;
    gp_arena_init(&a);
    struct gp_catalog_row *rows;
    size_t n;
    struct gp_diag d = {""};
    assert_int_equal(gp_catalog_rows(NULL, 20788, 180, &a, &rows, &n, &d), GP_OK);
    gp_catalog_sort(rows, n, GP_CATALOG_SORT_PRICE);
    for (size_t i = 1; i < n; i++) {
        double p = gp_catalog_gpu_hour(rows[i - 1].offer, false);
        double q = gp_catalog_gpu_hour(rows[i].offer, false);
        assert_true(q < 0 || (p >= 0 && p <= q));
        if (p == q)
            assert_true(rows[i - 1].order < rows[i].order);
    }
    gp_catalog_sort(rows, n, GP_CATALOG_SORT_MEMORY);
    for (size_t i = 1; i < n; i++) {
        uint32_t p = rows[i - 1].offer->gpu_memory_gb, q = rows[i].offer->gpu_memory_gb;
        assert_true(q == 0 || (p != 0 && p >= q));
    }
    gp_catalog_sort(rows, n, GP_CATALOG_SORT_NONE);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(rows[i].order, i);
    assert_int_equal(gp_catalog_sort_parse("age"), GP_CATALOG_SORT_AGE);
    assert_int_equal(gp_catalog_sort_parse("cheapest"), -1);
    gp_arena_free(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table_matches_json),
        cmocka_unit_test(test_dates),
        cmocka_unit_test(test_user_offers),
        cmocka_unit_test(test_filters),
        cmocka_unit_test(test_sort),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
