/* inventory_json.c - an inventory as JSON and as text (node/inventory_json.h). */
#include "node/inventory_json.h"

#include <stdio.h>

static void cuda_version(int v, char *buf, size_t n)
{
    if (v <= 0)
        snprintf(buf, n, "unknown");
    else
        snprintf(buf, n, "%d.%d", v / 1000, v % 1000 / 10);
}

static json_t *mig_json(const struct gp_node_mig *m)
{
    return json_pack("{s:s,s:s,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:{s:I,s:I,s:I,s:I,s:I}}", "uuid",
                     m->uuid, "profile", m->profile, "gpuInstanceId", (json_int_t)m->gi_id,
                     "computeInstanceId", (json_int_t)m->ci_id, "start", (json_int_t)m->start,
                     "size", (json_int_t)m->size, "memoryMiB", (json_int_t)m->memory_mib,
                     "multiprocessors", (json_int_t)m->multiprocessors, "gpuInstanceSlices",
                     (json_int_t)m->gi_slices, "computeInstanceSlices", (json_int_t)m->ci_slices,
                     "engines", "copy", (json_int_t)m->engines_copy, "decoder",
                     (json_int_t)m->engines_decoder, "encoder", (json_int_t)m->engines_encoder,
                     "jpeg", (json_int_t)m->engines_jpeg, "ofa", (json_int_t)m->engines_ofa);
}

static json_t *gpu_json(const struct gp_node_gpu *g)
{
    json_t *peers = json_array(), *migs = json_array();
    char cc[32];
    snprintf(cc, sizeof cc, "%u.%u", g->cc_major, g->cc_minor);
    for (unsigned i = 0; i < 64; i++)
        if (g->nvlink_peers >> i & 1)
            json_array_append_new(peers, json_integer(i));
    for (size_t k = 0; k < g->n_migs; k++)
        json_array_append_new(migs, mig_json(&g->migs[k]));
    return json_pack("{s:I,s:s,s:s,s:s,s:I,s:I,s:s,s:b,s:b,s:o,s:o,s:I,s:b,s:b,s:I}", "index",
                     (json_int_t)g->index, "uuid", g->uuid, "name", g->name, "pciBusId",
                     g->pci_bus_id, "memoryMiB", (json_int_t)g->memory_mib, "memoryUsedMiB",
                     (json_int_t)g->memory_used_mib, "computeCapability", cc, "migCapable",
                     g->mig_capable, "migEnabled", g->mig_enabled, "migs", migs, "nvlinkPeers",
                     peers, "utilizationPercent", (json_int_t)g->util_percent, "persistenceMode",
                     g->persistence_mode, "healthy", g->healthy, "lastXid",
                     (json_int_t)g->last_xid);
}

json_t *gp_node_inventory_json(const struct gp_node_inventory *inv)
{
    char cuda[32];
    cuda_version(inv->cuda_driver_version, cuda, sizeof cuda);
    json_t *gpus = json_array();
    for (size_t i = 0; i < inv->n_gpus; i++) {
        json_array_append_new(gpus, gpu_json(&inv->gpus[i]));
    }
    return json_pack("{s:s,s:s,s:i,s:I,s:o}", "driverVersion", inv->driver_version,
                     "cudaDriverVersion", cuda, "cudaDriverVersionInt", inv->cuda_driver_version,
                     "gpuCount", (json_int_t)inv->n_gpus, "gpus", gpus);
}

void gp_node_inventory_text(const struct gp_node_inventory *inv, struct gp_sbuf *out)
{
    char cuda[32];
    cuda_version(inv->cuda_driver_version, cuda, sizeof cuda);
    gp_sbuf_printf(out, "driver %s, CUDA driver %s, %zu GPU%s\n", inv->driver_version, cuda,
                   inv->n_gpus, inv->n_gpus == 1 ? "" : "s");
    for (size_t i = 0; i < inv->n_gpus; i++) {
        const struct gp_node_gpu *g = &inv->gpus[i];
        gp_sbuf_printf(out, "GPU %u: %s %s at %s\n", g->index, g->name, g->uuid, g->pci_bus_id);
        gp_sbuf_printf(out,
                       "  memory %llu MiB (%llu used), compute capability %u.%u, utilisation "
                       "%u %%, persistence mode %s, %s",
                       (unsigned long long)g->memory_mib, (unsigned long long)g->memory_used_mib,
                       g->cc_major, g->cc_minor, g->util_percent,
                       g->persistence_mode ? "on" : "off", g->healthy ? "healthy" : "unhealthy");
        if (g->last_xid)
            gp_sbuf_printf(out, " (last XID %u)", g->last_xid);
        gp_sbuf_add(out, "\n");
        gp_sbuf_printf(out, "  MIG %s",
                       !g->mig_capable  ? "not supported"
                       : g->mig_enabled ? "enabled"
                                        : "disabled");
        if (g->mig_enabled)
            gp_sbuf_printf(out, ", %zu device%s", g->n_migs, g->n_migs == 1 ? "" : "s");
        gp_sbuf_add(out, "\n");
        for (size_t k = 0; k < g->n_migs; k++) {
            const struct gp_node_mig *m = &g->migs[k];
            gp_sbuf_printf(out,
                           "    %s %s: GPU instance %u, compute instance %u, slices %u-%u, "
                           "%llu MiB\n",
                           m->profile, m->uuid, m->gi_id, m->ci_id, m->start,
                           m->start + (m->size ? m->size - 1 : 0),
                           (unsigned long long)m->memory_mib);
        }
        if (g->nvlink_peers) {
            gp_sbuf_add(out, "  NVLink to GPU");
            const char *sep = " ";
            for (unsigned p = 0; p < 64; p++)
                if (g->nvlink_peers >> p & 1) {
                    gp_sbuf_printf(out, "%s%u", sep, p);
                    sep = ", ";
                }
            gp_sbuf_add(out, "\n");
        }
    }
}
