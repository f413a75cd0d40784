/* nvml.c - NVML through dlopen (node/nvml.h). Being written: this first
 * version only reports the library missing. */
#include "node/nvml.h"

#include <stdlib.h>

int gp_nvml_exit_code(enum gp_err err)
{
    return err == GP_ENOTFOUND ? GP_NVML_EXIT_NO_DRIVER : gp_err_exit_code(err);
}

enum gp_err gp_nvml_open(const char *path, struct gp_nvml **out, struct gp_diag *diag)
{
    (void)path;
    *out = NULL;
    return gp_diag_set(diag, GP_ENOTFOUND, "%s", GP_NVML_NO_DRIVER_MSG);
}

void gp_nvml_close(struct gp_nvml *nv)
{
    (void)nv;
}

enum gp_err gp_node_discover(struct gp_nvml *nv, struct gp_node_inventory *out,
                             struct gp_diag *diag)
{
    (void)nv;
    (void)out;
    return gp_diag_set(diag, GP_EUNSUPPORTED, "NVML discovery is not written yet");
}

enum gp_err gp_node_discover_path(const char *path, struct gp_node_inventory *out,
                                  struct gp_diag *diag)
{
    struct gp_nvml *nv;
    enum gp_err err = gp_nvml_open(path, &nv, diag);
    if (err != GP_OK)
        return err;
    err = gp_node_discover(nv, out, diag);
    gp_nvml_close(nv);
    return err;
}

enum gp_err gp_nvml_events_open(struct gp_nvml *nv, unsigned *n_registered, struct gp_diag *diag)
{
    (void)nv;
    *n_registered = 0;
    return gp_diag_set(diag, GP_EUNSUPPORTED, "NVML events are not written yet");
}

enum gp_err gp_nvml_events_wait(struct gp_nvml *nv, unsigned timeout_ms, bool *got,
                                struct gp_nvml_xid *ev, struct gp_diag *diag)
{
    (void)nv;
    (void)timeout_ms;
    (void)ev;
    *got = false;
    return gp_diag_set(diag, GP_EUNSUPPORTED, "NVML events are not written yet");
}
