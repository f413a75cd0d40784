/* inventory_file.h - a node's inventory read from a JSON file, for tests
 * and for a node whose GPUs are described by hand (docs/node.md,
 * "Inventory file"): the agent reads it in place of NVML discovery and
 * reads it again when it changes (health flips stream to the kubelet). */
#ifndef GP_NODE_INVENTORY_FILE_H
#define GP_NODE_INVENTORY_FILE_H

#include <stddef.h>

#include "node/inventory.h"
#include "util/err.h"

/* From JSON text (name for messages). Bad input: GP_EINVALID/GP_EPARSE
 * with "NAME: gpus[1].uuid: ..." in diag. */
enum gp_err gp_node_inventory_parse(const char *text, size_t len, const char *name,
                                    struct gp_node_inventory *out, struct gp_diag *diag);
enum gp_err gp_node_inventory_read_file(const char *path, struct gp_node_inventory *out,
                                        struct gp_diag *diag);

#endif
