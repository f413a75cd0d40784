/* node_doctor.c - `gpuplane node doctor`: the node's checks (src/node/doctor.h)
 * and their verdicts and fixes, in text or JSON. */
#include <stdio.h>

#include "cli/node_cmds.h"

int gp_node_cmd_doctor(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "gpuplane: node doctor: not implemented yet (issue 16)\n");
    return 1;
}
