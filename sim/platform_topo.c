// platform_topo.c — the network topology between the nodes of a cluster: SimGrid 3.32's
// topo_parameters parsed and checked (a wrong string makes SimGrid abort or crash, so it is
// caught here with a message), derived from the node count when the user gives none, and the
// mean route length that the α of the cost model needs. Not here: writing the XML
// (platform_write.c), the cluster figures (platform.c).
//
// SimGrid's syntax (docs: "Cluster topologies", src/kernel/routing/*Zone.cpp of 3.32):
//   FAT_TREE  "L;d1,..,dL;u1,..,uL;c1,..,cL": L levels of switches; a switch of level i has
//             d_i children, a node of level i-1 has u_i parents, c_i parallel links between
//             them. d1·…·dL must be the number of nodes.
//   TORUS     "x,y,z" (any number of dimensions): x·y·z nodes, each linked to its 2 neighbours
//             in every dimension. A dimension of size 1 next to others aborts SimGrid 3.32.
//   DRAGONFLY "g,lb;c,lk;b,lg;n": g groups (lb blue links between two groups), c chassis per
//             group (lk black links), b routers (blades) per chassis (lg green links), n nodes
//             per router. SimGrid 3.32 reaches group j through blade j of a chassis, so it
//             needs g <= b (it crashes otherwise).
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "platform_internal.h"

// Largest leaf switch we derive: 16 nodes down (a 32-port switch, half its ports down).
#define DT_FAT_TREE_LEAF 16

const char *dt_topo_name(dt_topo_kind k) {
    switch (k) {
    case DT_TOPO_FLAT: return "FLAT";
    case DT_TOPO_FAT_TREE: return "FAT_TREE";
    case DT_TOPO_TORUS: return "TORUS";
    case DT_TOPO_DRAGONFLY: return "DRAGONFLY";
    case DT_TOPO_RAIL: return "FAT_TREE";  // a fat tree for SimGrid (platform.h)
    }
    return "?";
}

// ---- parsing ----

// A positive integer made of digits only, at most 1e6; moves *p past it. 0 on failure.
static int parse_int(const char **p) {
    const char *s = *p;
    long v = 0;
    if (*s < '0' || *s > '9') return 0;
    while (*s >= '0' && *s <= '9') {
        v = v * 10 + (*s - '0');
        if (v > 1000000) return 0;
        s++;
    }
    *p = s;
    return (int)v;
}

// "a,b,c" up to max numbers, ending at sep or '\0'; returns the count, -1 if malformed.
static int parse_list(const char **p, int *out, int max, char sep) {
    int n = 0;
    for (;;) {
        if (n == max) return -1;
        int v = parse_int(p);
        if (v <= 0) return -1;
        out[n++] = v;
        if (**p == ',') { (*p)++; continue; }
        if (**p == sep || **p == '\0') return n;
        return -1;
    }
}

static int parse_fat_tree(const char *s, dt_topo *t) {
    const char *p = s;
    t->levels = parse_int(&p);
    if (t->levels < 1 || t->levels > DT_TOPO_MAX_LEVELS || *p++ != ';') return -1;
    int *lists[3] = {t->down, t->up, t->count};
    for (int i = 0; i < 3; i++) {
        if (parse_list(&p, lists[i], DT_TOPO_MAX_LEVELS, ';') != t->levels) return -1;
        if (i < 2 && *p++ != ';') return -1;
    }
    return *p == '\0' ? 0 : -1;
}

static int parse_torus(const char *s, dt_topo *t) {
    const char *p = s;
    t->ndims = parse_list(&p, t->dims, DT_TOPO_MAX_LEVELS, '\0');
    return t->ndims > 0 && *p == '\0' ? 0 : -1;
}

static int parse_dragonfly(const char *s, dt_topo *t) {
    const char *p = s;
    int pair[2];
    int *dst[3][2] = {{&t->groups, &t->blue}, {&t->chassis, &t->black}, {&t->blades, &t->green}};
    for (int i = 0; i < 3; i++) {
        if (parse_list(&p, pair, 2, ';') != 2 || *p++ != ';') return -1;
        *dst[i][0] = pair[0];
        *dst[i][1] = pair[1];
    }
    t->per_blade = parse_int(&p);
    return t->per_blade > 0 && *p == '\0' ? 0 : -1;
}

static const char *topo_syntax(dt_topo_kind k) {
    switch (k) {
    case DT_TOPO_FAT_TREE:
    case DT_TOPO_RAIL: return "\"levels;down,..;up,..;links,..\" e.g. \"2;16,8;1,16;1,1\"";
    case DT_TOPO_TORUS: return "\"x,y,z\" e.g. \"4,4,8\"";
    case DT_TOPO_DRAGONFLY: return "\"groups,1;chassis,1;routers,1;nodes\" e.g. \"2,1;2,1;4,1;4\"";
    default: return "nothing (FLAT takes no parameters)";
    }
}

// Checks the parsed topology against the node count and SimGrid's constraints.
static int topo_check(const dt_topo *t, int nodes, const char *given, dt_error *err) {
    long long prod = 1;
    switch (t->kind) {
    case DT_TOPO_FLAT: return 0;
    case DT_TOPO_FAT_TREE:
    case DT_TOPO_RAIL:  // (resolved as a fat tree: dt_topo_resolve)
        for (int i = 0; i < t->levels; i++) prod *= t->down[i];
        break;
    case DT_TOPO_TORUS:
        for (int i = 0; i < t->ndims; i++) {
            if (t->ndims > 1 && t->dims[i] < 2)
                return dt_fail(err, DT_EXIT_USAGE,
                               "cluster topo_params \"%s\": a torus dimension of size 1 beside "
                               "others is not supported by SimGrid 3.32 (drop it)", given);
            prod *= t->dims[i];
        }
        break;
    case DT_TOPO_DRAGONFLY:
        if (t->groups > t->blades)
            return dt_fail(err, DT_EXIT_USAGE,
                           "cluster topo_params \"%s\": %d dragonfly groups need at least %d "
                           "routers per chassis (SimGrid 3.32 reaches group j through router j)",
                           given, t->groups, t->groups);
        prod = (long long)t->groups * t->chassis * t->blades * t->per_blade;
        break;
    }
    if (prod != nodes)
        return dt_fail(err, DT_EXIT_USAGE,
                       "cluster topo_params \"%s\": the %s describes %lld nodes, the cluster "
                       "has %d", given, dt_topo_name(t->kind), prod, nodes);
    return 0;
}

// ---- deriving parameters from the node count ----

// Two-level fat tree: leaves of D nodes (the largest divisor of nodes <= leaf: 16, or a rail
// unit's 32), S = nodes/D leaves, each leaf with U = D/oversubscription up links (one to each
// of U spine switches of S ports): non-blocking when U = D. Up to `leaf` nodes, or when nodes
// has no divisor in 2..leaf, one switch ("1;nodes;1;1", non-blocking whatever the
// oversubscription).
static void derive_fat_tree(int nodes, double oversub, int leaf, dt_topo *t) {
    int d = 1;
    for (int k = 2; k <= leaf && k <= nodes; k++)
        if (nodes % k == 0) d = k;
    if (nodes <= leaf || d == 1) {
        t->levels = 1;
        t->down[0] = nodes, t->up[0] = 1, t->count[0] = 1;
        return;
    }
    int u = (int)lround(d / (oversub >= 1 ? oversub : 1));
    t->levels = 2;
    t->down[0] = d, t->up[0] = 1, t->count[0] = 1;
    t->down[1] = nodes / d, t->up[1] = u < 1 ? 1 : u, t->count[1] = 1;
}

// Torus x <= y <= z with x·y·z = nodes and the smallest z (then the largest x): as close to
// a cube as the factors allow; dimensions of size 1 are dropped.
static void derive_torus(int nodes, dt_topo *t) {
    int best[3] = {1, 1, nodes};
    for (int x = 1; (long long)x * x * x <= nodes; x++) {
        if (nodes % x) continue;
        for (int y = x; (long long)x * y * y <= nodes; y++) {
            if ((nodes / x) % y) continue;
            int z = nodes / x / y;
            if (z < best[2] || (z == best[2] && x > best[0]))
                best[0] = x, best[1] = y, best[2] = z;
        }
    }
    t->ndims = 0;
    for (int i = 0; i < 3; i++)
        if (best[i] > 1) t->dims[t->ndims++] = best[i];
    if (t->ndims == 0) t->dims[t->ndims++] = 1;
}

// Dragonfly g·c·b·n = nodes with g <= b, the largest factor as small as possible, then as
// many nodes per router and routers per chassis as possible; one link per connection.
static void derive_dragonfly(int nodes, dt_topo *t) {
    int best[4] = {1, 1, nodes, 1}, best_max = nodes;
    for (int g = 1; g <= nodes; g++) {
        if (nodes % g) continue;
        for (int c = 1; c <= nodes / g; c++) {
            if ((nodes / g) % c) continue;
            for (int b = g; b <= nodes / g / c; b++) {
                if ((nodes / g / c) % b) continue;
                int n = nodes / g / c / b;
                int m = g > c ? g : c;
                m = m > b ? m : b;
                m = m > n ? m : n;
                if (m < best_max || (m == best_max && (n > best[3] || (n == best[3] && b > best[2])))) {
                    best_max = m;
                    best[0] = g, best[1] = c, best[2] = b, best[3] = n;
                }
            }
        }
    }
    t->groups = best[0], t->chassis = best[1], t->blades = best[2], t->per_blade = best[3];
    t->blue = t->black = t->green = 1;
}

int dt_topo_resolve(const dt_cluster *c, dt_topo *t, dt_error *err) {
    memset(t, 0, sizeof *t);
    t->kind = c->topo == DT_TOPO_RAIL ? DT_TOPO_FAT_TREE : c->topo;  // rails: a fat tree
    if ((int)c->topo < DT_TOPO_FLAT || (int)c->topo > DT_TOPO_RAIL)
        return dt_fail(err, DT_EXIT_USAGE, "cluster topo: %d is not a topology", (int)c->topo);
    const char *s = c->topo_params;
    if (s[0] == '\0') {
        if (c->topo == DT_TOPO_FAT_TREE)
            derive_fat_tree(c->nodes, c->oversubscription, DT_FAT_TREE_LEAF, t);
        if (c->topo == DT_TOPO_RAIL)
            derive_fat_tree(c->nodes, c->oversubscription, DT_RAIL_LEAF, t);
        if (c->topo == DT_TOPO_TORUS) derive_torus(c->nodes, t);
        if (c->topo == DT_TOPO_DRAGONFLY) derive_dragonfly(c->nodes, t);
        return 0;
    }
    int rc = -1;
    switch (c->topo) {
    case DT_TOPO_FLAT: rc = -1; break;
    case DT_TOPO_FAT_TREE:
    case DT_TOPO_RAIL: rc = parse_fat_tree(s, t); break;
    case DT_TOPO_TORUS: rc = parse_torus(s, t); break;
    case DT_TOPO_DRAGONFLY: rc = parse_dragonfly(s, t); break;
    }
    if (rc != 0)
        return dt_fail(err, DT_EXIT_USAGE, "cluster topo_params \"%s\": a %s expects %s", s,
                       dt_topo_name(c->topo), topo_syntax(c->topo));
    return topo_check(t, c->nodes, s, err);
}

static void append(char *buf, size_t size, size_t *len, const char *fmt, int v) {
    if (*len >= size) return;
    int n = snprintf(buf + *len, size - *len, fmt, v);
    if (n > 0) *len += (size_t)n;
}

void dt_topo_format(const dt_topo *t, char *buf, size_t size) {
    size_t len = 0;
    if (size == 0) return;
    buf[0] = '\0';
    switch (t->kind) {
    case DT_TOPO_FLAT: break;
    case DT_TOPO_FAT_TREE:
    case DT_TOPO_RAIL: {
        const int *lists[3] = {t->down, t->up, t->count};
        append(buf, size, &len, "%d", t->levels);
        for (int l = 0; l < 3; l++)
            for (int i = 0; i < t->levels; i++)
                append(buf, size, &len, i == 0 ? ";%d" : ",%d", lists[l][i]);
        break;
    }
    case DT_TOPO_TORUS:
        for (int i = 0; i < t->ndims; i++) append(buf, size, &len, i ? ",%d" : "%d", t->dims[i]);
        break;
    case DT_TOPO_DRAGONFLY:
        append(buf, size, &len, "%d", t->groups);
        append(buf, size, &len, ",%d", t->blue);
        append(buf, size, &len, ";%d", t->chassis);
        append(buf, size, &len, ",%d", t->black);
        append(buf, size, &len, ";%d", t->blades);
        append(buf, size, &len, ",%d", t->green);
        append(buf, size, &len, ";%d", t->per_blade);
        break;
    }
}

// ---- mean route length ----

// Links of SimGrid 3.32's minimal dragonfly route between routers (g1,c1,b1) and (g2,c2,b2)
// (DragonflyZone::get_local_route, followed step by step), node links included.
static int dragonfly_links(int g1, int c1, int b1, int g2, int c2, int b2) {
    if (g1 == g2 && c1 == c2 && b1 == b2) return 2;  // node -> router -> node
    int links = 2, cc = c1, cb = b1;
    if (g2 != g1) {
        if (cb != g2) links++, cb = g2;  // green: to the router of our chassis wired to g2
        if (cc != 0) links++;            // black: to chassis 0 of our group
        links++;                         // blue: the optical hop between groups
        cc = 0, cb = g1;
    }
    if (b2 != cb) links++, cc = 0;  // green (SimGrid then stands at chassis 0 of the group)
    if (c2 != cc) links++;          // black
    return links;
}

double dt_topo_mean_links(const dt_topo *t, int nodes) {
    if (nodes < 2) return 2;
    double n1 = nodes - 1.0;
    switch (t->kind) {
    case DT_TOPO_FLAT: return 2;  // node -> switch -> node
    case DT_TOPO_FAT_TREE:
    case DT_TOPO_RAIL: {
        // A pair whose lowest common switch is at level k crosses 2k links; m_k nodes lie
        // under one switch of level k.
        double mean = 0, m_prev = 1, m = 1;
        for (int k = 1; k <= t->levels; k++) {
            m *= t->down[k - 1];
            mean += 2.0 * k * (m - m_prev) / n1;
            m_prev = m;
        }
        return mean;
    }
    case DT_TOPO_TORUS: {
        // Sum over dimensions of the mean ring distance; one link per hop.
        double sum = 0;
        for (int i = 0; i < t->ndims; i++) {
            int k = t->dims[i];
            double r = 0;
            for (int o = 1; o < k; o++) r += o < k - o ? o : k - o;
            sum += (double)nodes / k * r;
        }
        return sum / n1;
    }
    case DT_TOPO_DRAGONFLY: {
        // Every ordered pair of routers (strided beyond 2048 routers), n² node pairs each,
        // less the pairs of a node with itself.
        int per_group = t->chassis * t->blades, routers = t->groups * per_group;
        int stride = routers > 2048 ? routers / 2048 : 1;
        double sum = 0, pairs = 0, n = t->per_blade;
        for (int r1 = 0; r1 < routers; r1 += stride)
            for (int r2 = 0; r2 < routers; r2++) {
                double w = r1 == r2 ? n * (n - 1) : n * n;
                sum += w * dragonfly_links(r1 / per_group, r1 % per_group / t->blades,
                                           r1 % t->blades, r2 / per_group,
                                           r2 % per_group / t->blades, r2 % t->blades);
                pairs += w;
            }
        return pairs > 0 ? sum / pairs : 2;
    }
    }
    return 2;
}
