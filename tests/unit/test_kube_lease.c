/* test_kube_lease.c - leader election (kube/lease.c) against the API server
 * double, two replicas on one Lease at a test clock: the first takes it
 * (created), the second follows while the record keeps changing; when the
 * leader stops renewing, the follower takes over only after
 * leaseDurationSeconds of its own clock (leaseTransitions 1), and the old
 * leader, back, follows; a Lease released (holder emptied) is taken at
 * once; a leader that cannot renew keeps leading until its renew
 * deadline, not after. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "kube/lease.h"
#include "kube_double.h"
#include "shared_data.h"

static json_t *lease_get(struct gp_kube_client *c)
{
    struct gp_kube_response r;
    struct gp_diag d = {""};
    assert_int_equal(gp_kube_request(c, "GET",
                                     "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/"
                                     "gpuplane-scheduler",
                                     NULL, NULL, &r, &d),
                     GP_OK);
    assert_int_equal(r.status, 200);
    json_t *j = json_loadb(r.body, r.len, 0, NULL);
    gp_kube_response_free(&r);
    return json_object_get(j, "spec") ? j : (json_decref(j), (json_t *)NULL);
}

static struct gp_kube_lease *replica(struct gp_kube_client *c, const char *id)
{
    struct gp_kube_lease_opts o;
    gp_kube_lease_opts_default(&o);
    o.identity = id;
    o.duration_s = 15;
    struct gp_kube_lease *l;
    struct gp_diag d = {""};
    assert_int_equal(gp_kube_lease_new(c, &o, &l, &d), GP_OK);
    return l;
}

static void test_lease(void **state)
{
    (void)state;
    struct gp_kube_client *ca = kd_client(), *cb = kd_client(), *admin = kd_client();
    struct gp_kube_lease *a = replica(ca, "replica-a"), *b = replica(cb, "replica-b");
    assert_true(gp_kube_lease_tick(a, 0));
    assert_false(gp_kube_lease_tick(b, 0));
    assert_string_equal(gp_kube_lease_holder(b), "replica-a");
    for (double t = 2; t <= 30; t += 2) { /* a renews: b follows however long */
        assert_true(gp_kube_lease_tick(a, t));
        assert_false(gp_kube_lease_tick(b, t));
    }
    /* a stops; b saw the record change last at t=30 */
    assert_false(gp_kube_lease_tick(b, 40));
    assert_false(gp_kube_lease_tick(b, 44.9));
    assert_true(gp_kube_lease_tick(b, 45));
    json_t *l = lease_get(admin);
    json_t *spec = json_object_get(l, "spec");
    assert_string_equal(json_string_value(json_object_get(spec, "holderIdentity")), "replica-b");
    assert_int_equal(json_integer_value(json_object_get(spec, "leaseTransitions")), 1);
    assert_int_equal(json_integer_value(json_object_get(spec, "leaseDurationSeconds")), 15);
    const char *renew = json_string_value(json_object_get(spec, "renewTime"));
    assert_int_equal(strlen(renew), 27); /* MicroTime: 2026-12-01T09:19:37.123456Z */
    json_decref(l);
    /* a comes back: b's record changes, a follows; a's renew deadline had passed */
    assert_false(gp_kube_lease_tick(a, 46));
    assert_string_equal(gp_kube_lease_holder(a), "replica-b");
    /* released: taken at once */
    gp_kube_lease_release(b);
    assert_true(gp_kube_lease_tick(a, 47));
    /* a leader whose renewals fail leads until its deadline (10 s), not after */
    kd_call(admin, "POST", "/_control/fault",
            "{\"status\":500,\"count\":1000,\"match\":\"/leases/\"}", 200);
    assert_true(gp_kube_lease_tick(a, 49));
    assert_true(gp_kube_lease_tick(a, 56.9));
    assert_false(gp_kube_lease_tick(a, 57.1));
    kd_call(admin, "POST", "/_control/clear", NULL, 200);
    gp_kube_lease_free(a);
    gp_kube_lease_free(b);
    gp_kube_client_free(ca);
    gp_kube_client_free(cb);
    gp_kube_client_free(admin);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lease),
    };
    return kd_main(argc, argv, tests, kd_start, kd_stop);
}
