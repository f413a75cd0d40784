/* ports.c - kube-scheduler's NodePorts plugin
 * (pkg/scheduler/framework/plugins/nodeports/node_ports.go, read and
 * re-derived): the host ports the pods bound on each node hold, kept as
 * they bind and release, and whether a pod's ports conflict with them as
 * HostPortInfo.CheckConflict says (framework/types.go): the same port and
 * protocol, where the wanted address is 0.0.0.0 (every one) or the held
 * one is, or both are the same address. Only pods that ask host ports
 * cost anything. */
#include "engine/internal.h"

#include <stdlib.h>
#include <string.h>

static bool any_ip(const char *ip)
{
    return !ip || !ip[0] || strcmp(ip, "0.0.0.0") == 0;
}

static bool clash(const struct gp_host_port *want, const struct gp_host_port *held)
{
    if (want->port != held->port || want->protocol != held->protocol)
        return false;
    return any_ip(want->ip) || any_ip(held->ip) || strcmp(want->ip, held->ip) == 0;
}

bool gp_eng_ports_conflict(const struct gp_engine *e, const struct gp_node *n,
                           const struct gp_pod *p)
{
    if (e->ports_broken)
        return true; /* a list could not grow: no port is known free */
    if (n->id >= e->nnode_ports)
        return false;
    const struct port_list *l = &e->node_ports[n->id];
    for (size_t i = 0; i < p->spec.nhost_ports; i++)
        for (uint32_t j = 0; j < l->len; j++)
            if (l->items[j].pod != p->id && clash(&p->spec.host_ports[i], l->items[j].hp))
                return true;
    return false;
}

void gp_eng_ports_bind(struct gp_engine *e, const struct gp_pod *p, uint32_t node, int sign)
{
    if (sign < 0) {
        if (node >= e->nnode_ports)
            return;
        struct port_list *l = &e->node_ports[node];
        for (uint32_t j = 0; j < l->len;)
            if (l->items[j].pod == p->id)
                l->items[j] = l->items[--l->len];
            else
                j++;
        return;
    }
    if (node >= e->nnode_ports) {
        size_t n = e->nodes.len > node ? e->nodes.len : (size_t)node + 1;
        struct port_list *nl = realloc(e->node_ports, n * sizeof *nl);
        if (!nl) {
            e->ports_broken = true;
            return;
        }
        memset(nl + e->nnode_ports, 0, (n - e->nnode_ports) * sizeof *nl);
        e->node_ports = nl;
        e->nnode_ports = n;
    }
    struct port_list *l = &e->node_ports[node];
    if (l->len + p->spec.nhost_ports > l->cap) {
        uint32_t cap = l->cap ? 2 * l->cap : 4;
        while (cap < l->len + p->spec.nhost_ports)
            cap *= 2;
        struct port_use *items = realloc(l->items, cap * sizeof *items);
        if (!items) {
            e->ports_broken = true;
            return;
        }
        l->items = items;
        l->cap = cap;
    }
    for (size_t i = 0; i < p->spec.nhost_ports; i++)
        l->items[l->len++] = (struct port_use){p->id, &p->spec.host_ports[i]};
}

void gp_eng_ports_free(struct gp_engine *e)
{
    for (size_t i = 0; i < e->nnode_ports; i++)
        free(e->node_ports[i].items);
    free(e->node_ports);
    e->node_ports = NULL;
    e->nnode_ports = 0;
}
