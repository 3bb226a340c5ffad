// platform_internal.h — what the files of the platform generator share (not a public API):
// the topology of the network between nodes, resolved from dt_cluster.topo_params or derived
// from the node count (platform_topo.c), and its mean route length for the α of the cost
// model. Users go through platform.h.
#ifndef DT_SIM_PLATFORM_INTERNAL_H
#define DT_SIM_PLATFORM_INTERNAL_H

#include <stddef.h>

#include "platform.h"

#define DT_TOPO_MAX_LEVELS 8  // fat tree levels, torus dimensions

// The SimGrid 3.32 topo_parameters, parsed (their syntax in platform_topo.c).
typedef struct {
    dt_topo_kind kind;
    int levels;                        // fat tree: "L;d1,..;u1,..;c1,.."
    int down[DT_TOPO_MAX_LEVELS];      //   children per switch of level i
    int up[DT_TOPO_MAX_LEVELS];        //   parents per node of level i-1
    int count[DT_TOPO_MAX_LEVELS];     //   parallel links between them
    int ndims;                         // torus: "x,y,z"
    int dims[DT_TOPO_MAX_LEVELS];
    int groups, chassis, blades, per_blade;  // dragonfly: "g,lb;c,lk;b,lg;n"
    int blue, black, green;                  //   links per connection at each level
} dt_topo;

// The topology of cluster c: parsed from c->topo_params if set, else derived from c->nodes
// (and c->oversubscription for a fat tree). Checked against c->nodes and SimGrid's own
// constraints. -1 with DT_EXIT_USAGE naming topo_params and what was expected.
int dt_topo_resolve(const dt_cluster *c, dt_topo *t, dt_error *err);
// Write t as SimGrid topo_parameters ("" for FLAT).
void dt_topo_format(const dt_topo *t, char *buf, size_t size);
// Mean number of links on the route between two distinct nodes (each link costs net_lat).
double dt_topo_mean_links(const dt_topo *t, int nodes);
const char *dt_topo_name(dt_topo_kind k);  // "FLAT", "FAT_TREE", "TORUS", "DRAGONFLY"

#endif
