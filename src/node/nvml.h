/* nvml.h - the node's GPUs read from NVIDIA's NVML, loaded at run time
 * with dlopen("libnvidia-ml.so.1") (no NVIDIA header or library at build
 * time; the declarations used are our own, in nvml.c, from NVIDIA's public
 * NVML API reference, https://docs.nvidia.com/deploy/nvml-api/).
 *
 * gp_nvml_open loads and initialises NVML once; gp_node_discover fills an
 * inventory (node/inventory.h) as often as the agent likes; the XID event
 * calls wait for critical XIDs. A handle may be used by one thread for
 * discovery and another for the event wait (NVML is thread-safe).
 *
 * Failures: when the library cannot be loaded (no driver), gp_nvml_open
 * returns GP_ENOTFOUND with the one line GP_NVML_NO_DRIVER_MSG in diag and
 * a command exits GP_NVML_EXIT_NO_DRIVER (gp_nvml_exit_code); any NVML call
 * failing is GP_EIO with "NVML: <call> on GPU <i>: <nvmlErrorString>" and
 * leaves the caller's inventory untouched, so the agent keeps serving the
 * last good one (docs/node.md, "Discovery"). */
#ifndef GP_NODE_NVML_H
#define GP_NODE_NVML_H

#include <stdbool.h>
#include <stdint.h>

#include "node/inventory.h"
#include "util/err.h"

#define GP_NVML_LIB           "libnvidia-ml.so.1" /* the soname the driver installs */
#define GP_NVML_ENV           "GPUPLANE_NVML"     /* a path to load instead (tests: the fake) */
#define GP_NVML_NO_DRIVER_MSG "NVML: libnvidia-ml.so.1 not found: is the NVIDIA driver installed?"
/* The exit code of a command that found no NVIDIA driver (0 success, 1
 * failure, 2 bad input or usage, 3 no driver). */
#define GP_NVML_EXIT_NO_DRIVER 3

struct gp_nvml;

/* Loads NVML from path (NULL: $GPUPLANE_NVML if set, else
 * "libnvidia-ml.so.1" through the loader's search), resolves every call
 * used and runs nvmlInit_v2. GP_ENOTFOUND: the library could not be
 * loaded (diag: GP_NVML_NO_DRIVER_MSG, naming path when one was given);
 * GP_EIO: it loaded but lacks a call or nvmlInit_v2 failed. */
enum gp_err gp_nvml_open(const char *path, struct gp_nvml **out, struct gp_diag *diag);
/* nvmlShutdown, dlclose, free. NULL is fine. */
void gp_nvml_close(struct gp_nvml *nv);

/* The exit code for an error of gp_nvml_open or gp_node_discover:
 * GP_NVML_EXIT_NO_DRIVER for GP_ENOTFOUND, else gp_err_exit_code. */
int gp_nvml_exit_code(enum gp_err err);

/* Fills *out with the node's GPUs (driver and CUDA driver versions, and per
 * GPU: index, UUID, name, PCI bus id, memory total and used, compute
 * capability, MIG mode and devices with their profiles, NVLink peers,
 * utilisation, persistence mode). Every GPU is reported healthy with
 * last_xid 0: node/health.h owns those (gp_node_health_apply). On error
 * *out is not changed. */
enum gp_err gp_node_discover(struct gp_nvml *nv, struct gp_node_inventory *out,
                             struct gp_diag *diag);

/* As gp_node_discover, but a GPU that answers GPU_IS_LOST (fallen off the
 * bus) does not fail the discovery: its bit (1 << NVML index) is set in
 * *lost and it is left out of *out (or, lost while its NVLinks were read,
 * kept with what was read); the other GPUs are read as usual. Any other
 * error fails it as gp_node_discover does. */
enum gp_err gp_node_discover_lost(struct gp_nvml *nv, struct gp_node_inventory *out, uint64_t *lost,
                                  struct gp_diag *diag);

/* Utilisation and memory used, sampled again: for each GPU NVML lists,
 * the GPU of inv with its UUID gets its memory used and utilisation (a
 * GPU answering GPU_IS_LOST is left as it was, for the next discovery to
 * mark). Nothing else of inv changes. GP_EIO with the call when NVML
 * fails otherwise. */
enum gp_err gp_node_sample(struct gp_nvml *nv, struct gp_node_inventory *inv, struct gp_diag *diag);

/* The index of the GPU that the last failed gp_node_discover found lost
 * (NVML's GPU_IS_LOST), for gp_node_health_lost; -1 when it failed
 * otherwise or named no GPU. */
int gp_nvml_lost_gpu(const struct gp_nvml *nv);

/* One-shot discovery: open, discover, close. */
enum gp_err gp_node_discover_path(const char *path, struct gp_node_inventory *out,
                                  struct gp_diag *diag);

/* --- XID events -------------------------------------------------------- */

/* Creates the event set and registers every GPU for critical XID events
 * (nvmlEventTypeXidCriticalError). A GPU that does not support them, or
 * that NVML reports lost, is skipped (n_registered counts the others). */
enum gp_err gp_nvml_events_open(struct gp_nvml *nv, unsigned *n_registered, struct gp_diag *diag);

struct gp_nvml_xid {
    unsigned gpu_index;    /* NVML's index of the GPU it came from */
    unsigned xid;          /* the XID (999: NVML could not tell) */
    unsigned gi_id, ci_id; /* MIG instance it is attributed to; UINT32_MAX: none */
};

/* Waits up to timeout_ms for one XID event: GP_OK with *got true and *ev
 * filled, or *got false on the timeout; GP_ENOTFOUND when the wait says a
 * GPU is lost (which one is for a discovery to find), GP_EIO when it
 * fails otherwise (NVML gone). Safe beside a discovery in another thread. */
enum gp_err gp_nvml_events_wait(struct gp_nvml *nv, unsigned timeout_ms, bool *got,
                                struct gp_nvml_xid *ev, struct gp_diag *diag);

#endif
