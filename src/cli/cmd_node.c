/* cmd_node.c - `gpuplane node <subcommand>`: the node agent's commands (the
 * code is in src/node/), dispatched from one table as main.c dispatches
 * the top-level commands. A subcommand is one line here and one
 * declaration in node_cmds.h. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/node_cmds.h"
#include "util/strdist.h"

static const struct gp_cmd node_commands[] = {
    {"agent", "the node agent: device plugin, health, Allocate for the scheduler's pods",
     gp_node_cmd_agent},
    {"discover", "the node's GPUs as NVML reports them: MIG devices, NVLink, driver (--json)",
     gp_node_cmd_discover},
    {"doctor", "check this node's driver, CUDA, container toolkit, runtime, MIG and persistence",
     gp_node_cmd_doctor},
    {"labels", "the GPU Feature Discovery labels of this node (printed; --apply patches the Node)",
     gp_node_cmd_labels},
    {"resources", "the device plugin resources this node's agent would advertise (printed)",
     gp_node_cmd_resources},
    {"cdi", "the CDI spec (nvidia.com/gpu) this node's agent would write (printed)",
     gp_node_cmd_cdi},
};

#define NNODE (sizeof node_commands / sizeof node_commands[0])

static void node_usage(FILE *f)
{
    fprintf(f, "usage: gpuplane node <subcommand> [options]\n"
               "\n"
               "The node agent: what runs on a GPU node (docs/node.md).\n"
               "\n"
               "subcommands:\n");
    for (size_t i = 0; i < NNODE; i++)
        fprintf(f, "  %-10s %s\n", node_commands[i].name, node_commands[i].summary);
    fprintf(f, "\n"
               "`gpuplane node <subcommand> --help` for a subcommand's options.\n");
}

int gp_cmd_node(int argc, char **argv)
{
    if (argc < 2) {
        node_usage(stderr);
        return 2;
    }
    const char *name = argv[1];
    if (strcmp(name, "-h") == 0 || strcmp(name, "--help") == 0 || strcmp(name, "help") == 0) {
        node_usage(stdout);
        return 0;
    }
    if (strcmp(name, "--version") == 0) {
        printf("gpuplane %s\n", GP_VERSION);
        return 0;
    }
    for (size_t i = 0; i < NNODE; i++)
        if (strcmp(name, node_commands[i].name) == 0)
            return node_commands[i].run(argc - 1, argv + 1);
    unsigned dist;
    size_t k = gp_strdist_nearest(name, node_commands, NNODE, sizeof node_commands[0], &dist);
    if (gp_strdist_close(name, dist))
        fprintf(stderr,
                "gpuplane: node: unknown subcommand '%s'; did you mean '%s'? (see gpuplane node "
                "--help)\n",
                name, node_commands[k].name);
    else
        fprintf(stderr, "gpuplane: node: unknown subcommand '%s' (see gpuplane node --help)\n",
                name);
    return 2;
}
