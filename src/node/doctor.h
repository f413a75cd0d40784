/* doctor.h - `gpuplane node doctor`'s checks of a GPU node, each with its
 * verdict and its fix: what NVIDIA's GPU Operator would otherwise set up
 * (driver, CUDA against the images, container toolkit, containerd or CRI-O
 * with the nvidia runtime or CDI, the kubelet's device-plugin directory,
 * MIG layout, persistence mode, the MPS control daemon). Files are read under a root directory so
 * tests build fake filesystems (docs/node.md, "node doctor"). */
#ifndef GP_NODE_DOCTOR_H
#define GP_NODE_DOCTOR_H

#include <stdbool.h>
#include <stddef.h>

#include "node/inventory.h"
#include "util/err.h"

enum gp_node_verdict {
    GP_NODE_PASS,
    GP_NODE_WARN, /* works, with a caveat */
    GP_NODE_FAIL,
    GP_NODE_SKIP, /* not checked (no flag asked for it, or no driver to ask) */
};

struct gp_node_check {
    const char *name; /* "driver", "cuda", "toolkit", "runtime", "device-plugins", "mig",
                         "persistence", "mps" */
    enum gp_node_verdict verdict;
    char detail[320]; /* what was found */
    char fix[320];    /* what to do; "" when it passes */
};

#define GP_NODE_DOCTOR_CHECKS 8

struct gp_node_doctor {
    size_t n;
    struct gp_node_check checks[GP_NODE_DOCTOR_CHECKS];
    bool no_driver; /* the kernel module is not loaded: exit 3 */
};

struct gp_node_doctor_opts {
    const char *root; /* NULL or "/": the real filesystem */
    const char *path; /* the PATH searched (under root) for the toolkit; NULL: $PATH */
    /* what discovery found (NULL: NVML could not be asked; nvml_error says why) */
    const struct gp_node_inventory *inv;
    const char *nvml_error;
    const char *cuda;     /* --cuda X.Y[.Z]: the CUDA the images need */
    const char *image;    /* --image REF: or an image whose CUDA is known (io/compat.h) */
    const char *mig;      /* --mig none | PROFILE=N[,PROFILE=N...]: each GPU's expected layout */
    bool mps;             /* --mps: the pool shares its GPUs by MPS */
    const char *mps_root; /* --mps-root DIR (NULL: /run/nvidia/mps, the agent's mpsRoot) */
};

/* Runs every check. GP_EUSAGE (one line in d): a bad --cuda, --image or
 * --mig; the checks themselves never fail the call. */
enum gp_err gp_node_doctor_run(const struct gp_node_doctor_opts *o, struct gp_node_doctor *out,
                               struct gp_diag *d);

/* The exit code for a script: 3 no driver, 1 a check failed, 0 otherwise
 * (warnings pass). */
int gp_node_doctor_exit(const struct gp_node_doctor *r);

const char *gp_node_verdict_name(enum gp_node_verdict v); /* "pass", "warn", "fail", "skip" */

#endif
