/* node_show.c - `gpuplane node labels` and `gpuplane node cdi`: what the
 * agent would patch onto the Node and write into the CDI directory,
 * printed instead (src/node/labels.h, src/node/cdi.h). */
#include <stdio.h>

#include "cli/node_cmds.h"

int gp_node_cmd_labels(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "gpuplane: node labels: not implemented yet (issue 16)\n");
    return 1;
}

int gp_node_cmd_cdi(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "gpuplane: node cdi: not implemented yet (issue 16)\n");
    return 1;
}
