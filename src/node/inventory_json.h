/* inventory_json.h - an inventory (node/inventory.h) as JSON and as text:
 * what `gpuplane node discover` prints, and what the agent can serve. */
#ifndef GP_NODE_INVENTORY_JSON_H
#define GP_NODE_INVENTORY_JSON_H

#include <jansson.h>

#include "node/inventory.h"
#include "util/sbuf.h"

/* A new JSON object (NULL when out of memory): driverVersion,
 * cudaDriverVersion ("12.2") and cudaDriverVersionInt (12020), gpus[]
 * with every field of struct gp_node_gpu (nvlinkPeers as a list of GPU
 * indices) and migs[]. Field names are camelCase as Kubernetes writes
 * its own. */
json_t *gp_node_inventory_json(const struct gp_node_inventory *inv);

/* The same for people, a few lines per GPU. */
void gp_node_inventory_text(const struct gp_node_inventory *inv, struct gp_sbuf *out);

#endif
