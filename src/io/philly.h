/* philly.h - the Microsoft Philly machine list as a cluster. (The Philly
 * job table reader, gp_workload_parse_philly, is declared in workload.h.)
 * Both live in philly.c; docs/FORMATS.md describes the mapping. */
#ifndef GP_IO_PHILLY_H
#define GP_IO_PHILLY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "io/cluster.h"
#include "util/arena.h"
#include "util/err.h"

/* Reads a Philly machine list: the original cluster_machine_list
 * ("machineId, number of GPUs, single GPU mem", e.g. "m0,2, 12GB") or the
 * revised list (",machineId,number of GPUs", GPU memory unknown). One node
 * per machine with GPUs (machines with 0 GPUs are left out), named by
 * machineId, with 4 cores and 32 GiB of memory per GPU, GPU model
 * "philly-<N>GB" ("philly" when the memory is not given), and one pool per
 * (GPUs, GPU memory) shape named "philly-<G>gpu-<N>GB" ("philly-<G>gpu").
 * Everything lives in a; text need not be NUL-terminated; errors go to
 * diag as "NAME:LINE: ...". */
enum gp_err gp_cluster_parse_philly(const char *text, size_t len, const char *name,
                                    struct gp_arena *a, struct gp_cluster *out,
                                    struct gp_diag *diag);

/* Per GPU, the CPU and memory that Philly jobs request and Philly nodes
 * offer (the trace records neither). */
#define GP_PHILLY_CPU_MILLI_PER_GPU 4000
#define GP_PHILLY_MEM_MIB_PER_GPU   32768
/* GPUs per Philly pod: larger jobs become gangs of pods of this size. */
#define GP_PHILLY_GPUS_PER_POD 8

/* Seconds since 1970-01-01 00:00:00 of "YYYY-MM-DD HH:MM:SS" (or with 'T'
 * between date and time) read as UTC, without the C library's time zone
 * or locale. False unless s is exactly such a valid time. */
bool gp_philly_parse_time(const char *s, int64_t *out);

#endif
