/* node_cmds.h - the subcommands of `gpuplane node` (cmd_node.c's table):
 * each takes argv[0] = its own name and returns the exit code. One
 * declaration per subcommand, beside its line in cmd_node.c. */
#ifndef GP_CLI_NODE_CMDS_H
#define GP_CLI_NODE_CMDS_H

int gp_node_cmd_agent(int argc, char **argv);     /* node_agent.c */
int gp_node_cmd_discover(int argc, char **argv);  /* node_discover.c */
int gp_node_cmd_doctor(int argc, char **argv);    /* node_doctor.c */
int gp_node_cmd_labels(int argc, char **argv);    /* node_show.c */
int gp_node_cmd_resources(int argc, char **argv); /* node_show.c */
int gp_node_cmd_cdi(int argc, char **argv);       /* node_show.c */

#endif
