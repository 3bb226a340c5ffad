// coll.c — the allreduce library's front door (coll.h): options, creating the
// communicators an algorithm needs, and choosing the algorithm of a call. Not here: the
// algorithms' names and constraints (coll_algos.c), their schedules (coll_sched.c,
// coll_tree.c, coll_hier.c), running them (coll_request.c over the core runner coll_run.c),
// the cost model (coll_cost.c).
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "coll_cost.h"
#include "coll_internal.h"
#include "../opt_table.h"

// Shared memory on one workstation: ~2 µs per message, ~10 GB/s per link, ~5 GB/s adds.
dt_cost_params dt_cost_params_default(void) {
    dt_cost_params c;
    memset(&c, 0, sizeof c);
    c.alpha = c.alpha_intra = 2e-6;
    c.beta = c.beta_intra = 1.0 / 10e9;
    c.gamma = 1.0 / 5e9;
    c.share = 1.0;
    return c;
}

dt_coll_opts dt_coll_opts_default(void) {
    dt_coll_opts o;
    memset(&o, 0, sizeof o);
    o.algo = DT_ALGO_RING;
    o.inner = DT_ALGO_RING;
    o.cost = dt_cost_params_default();
    return o;
}

// A launcher's count of ranks, 0 when it is not one
static int env_int(const char *name) {
    const char *v = getenv(name);
    long long x;
    return v && !dt_parse_int(v, 1, 1 << 20, &x) ? (int)x : 0;
}

// Slurm's compressed list: comma-separated entries "C" (one node of C tasks) or "C(xK)"
// (K nodes of C tasks), nodes in SLURM_NODEID order.
int dt_slurm_tasks_on_node(const char *spec, int node) {
    if (!spec || node < 0) return 0;
    const char *s = spec;
    long seen = 0;
    int found = 0;
    while (*s) {  // the whole list is read: a malformed one gives 0 for every node
        char *end;
        long c = strtol(s, &end, 10), k = 1;
        if (end == s || c <= 0 || c > 1 << 20) return 0;
        s = end;
        if (*s == '(') {
            if (s[1] != 'x') return 0;
            k = strtol(s + 2, &end, 10);
            if (end == s + 2 || k <= 0 || k > 1 << 24 || *end != ')') return 0;
            s = end + 1;
        }
        if (!found && node < seen + k) found = (int)c;
        seen += k;
        if (*s == ',' && s[1]) s++;
        else if (*s) return 0;
    }
    return found;
}

int dt_coll_local_size(void) {
    int n = env_int("DT_LOCAL_SIZE");
    if (!n) n = env_int("OMPI_COMM_WORLD_LOCAL_SIZE");
    if (!n) n = env_int("MPI_LOCALNRANKS");
    const char *nodeid = getenv("SLURM_NODEID");
    if (!n && nodeid && *nodeid) {
        char *end;
        long id = strtol(nodeid, &end, 10);
        const char *spec = getenv("SLURM_STEP_TASKS_PER_NODE");
        if (!spec || !*spec) spec = getenv("SLURM_TASKS_PER_NODE");
        if (!*end && id >= 0 && id < 1 << 20) n = dt_slurm_tasks_on_node(spec, (int)id);
    }
    return n;
}

// Check and complete the options for p ranks. Fails with a message naming the option.
static int resolve_opts(dt_coll_opts *o, int p, dt_error *err) {
    dt_algo_def entry, *def = &entry;
    if (dt_algo_get(o->algo, &entry))
        return dt_fail(err, DT_EXIT_USAGE, "allreduce: algorithm %d out of range (valid: 0..%d)",
                       (int)o->algo, dt_algo_count() - 1);
    if (o->inner != DT_ALGO_RING && o->inner != DT_ALGO_RHD)
        return dt_fail(err, DT_EXIT_USAGE, "allreduce: the inner algorithm of hier/torus2d must "
                       "be ring or rhd, not %s", dt_algo_name(o->inner));
    if (o->sharp && o->algo != DT_ALGO_HIER && o->algo != DT_ALGO_TORUS2D &&
        o->algo != DT_ALGO_AUTO)
        return dt_fail(err, DT_EXIT_USAGE, "allreduce: reduction in the switches (sharp) is "
                       "hier's or torus2d's allreduce between nodes, not %s's", def->name);
    if (o->wire_f16 && (def->flags & DT_ALGO_SUMS_IN_WIRE_TYPE))
        return dt_fail(err, DT_EXIT_USAGE, "allreduce: fp16 on the wire needs one of our "
                       "algorithms (%s's allreduce sums in the wire type); not %s",
                       def->sums_by ? def->sums_by : "another library", def->name);
    if (o->group < 0 || o->group > p)
        return dt_fail(err, DT_EXIT_USAGE, "allreduce: group size %d: expected 1..%d (the number "
                       "of ranks)", o->group, p);
    if (o->group == 0) {
        o->group = dt_coll_local_size();
        if (o->group <= 0 || o->group > p) o->group = 1;
    }
    if (def->check && def->check(o, p, err)) return -1;  // the algorithm's own constraints
    if (o->tx < 0 || o->ty < 0 || o->segments < 0)
        return dt_fail(err, DT_EXIT_USAGE, "allreduce: negative torus or segment count");
    if (o->tx || o->ty) {
        if (!o->tx) o->tx = p % o->ty ? 0 : p / o->ty;
        if (!o->ty) o->ty = p % o->tx ? 0 : p / o->tx;
        if ((long)o->tx * o->ty != p)
            return dt_fail(err, DT_EXIT_USAGE, "allreduce: torus %dx%d does not hold %d ranks "
                           "(X*Y must equal the number of ranks)", o->tx, o->ty, p);
    }
    if (getenv("DTCOLL_CHECK") && strcmp(getenv("DTCOLL_CHECK"), "0")) o->checked = 1;
    if (def->settle) def->settle(o, p);  // what the algorithm completes (torus2d's grid, ...)
    return 0;
}

// The communicator span->which of the ranks first, first + stride, ... (count of them, in
// that order), made by those ranks alone (MPI_Comm_create_group, MPI-3). Every split the
// entries ask for is such a progression, so no rank needs the others' colors: MPI_Comm_split
// would be one collective over all P ranks, which SMPI runs as a linear gather, O(P^2) host
// work at 16K simulated ranks (bench/DTSIM-SPEED.md). Only members call this.
static void subcomm(dt_coll *c, const dt_comm_span *span) {
    MPI_Group all, g;
    MPI_Comm_group(c->comms[DT_COMM_ALL], &all);
    int range[1][3] = {{span->first, span->first + (span->count - 1) * span->stride,
                        span->stride}};
    MPI_Group_range_incl(all, 1, range, &g);
    int w = span->which;
    MPI_Comm_create_group(c->comms[DT_COMM_ALL], g, w, &c->comms[w]);
    MPI_Group_free(&g);
    MPI_Group_free(&all);
    MPI_Comm_rank(c->comms[w], &c->rank[w]);
    MPI_Comm_size(c->comms[w], &c->size[w]);
}

// The sub-communicators every entry of the registry asks for (dt_algo_def.comms), in table
// order: hier's groups, leaders and cross sets, then torus2d's rows and columns
static void make_comms(dt_coll *c, int r, int p) {
    for (int i = 0, n = dt_algo_count(); i < n; i++) {
        dt_algo_def d;
        dt_comm_span spans[DT_MAX_SPANS];
        if (dt_algo_get((dt_algo)i, &d) || !d.comms) continue;
        for (int k = 0, ns = d.comms(&c->o, r, p, spans); k < ns; k++)
            if (c->comms[spans[k].which] == MPI_COMM_NULL) subcomm(c, &spans[k]);
    }
}

// one_comm: every sub-group this rank is in, by its place in the caller's communicator
// (no MPI call: the runner sends there, coll_run.c)
static void spans_in_one_comm(dt_coll *c, int r, int p) {
    for (int i = 0, n = dt_algo_count(); i < n; i++) {
        dt_algo_def d;
        dt_comm_span spans[DT_MAX_SPANS];
        if (dt_algo_get((dt_algo)i, &d) || !d.comms) continue;
        for (int k = 0, ns = d.comms(&c->o, r, p, spans); k < ns; k++) {
            const dt_comm_span *sp = &spans[k];
            c->first[sp->which] = sp->first, c->stride[sp->which] = sp->stride;
            c->rank[sp->which] = (r - sp->first) / sp->stride, c->size[sp->which] = sp->count;
        }
    }
}

int dt_coll_opts_resolve(dt_coll_opts *o, int p, dt_error *err) {
    if (resolve_opts(o, p, err)) return -1;
    if (dt_dbtree_shares_links(&o->cost, p, o->group)) dt_dbtree_links_of(&o->cost, p, o->group);
    return 0;
}

dt_coll *dt_coll_create(MPI_Comm comm, dt_device *dev, const dt_coll_opts *o, dt_error *err) {
    int p, r;
    MPI_Comm_size(comm, &p);
    MPI_Comm_rank(comm, &r);
    dt_coll_opts ro = o ? *o : dt_coll_opts_default();
    if (dt_coll_opts_resolve(&ro, p, err)) return NULL;
    if (ro.sharp && !(dev && dev->delay)) {  // timing only (coll_sharp.c)
        dt_fail(err, DT_EXIT_USAGE, "allreduce: reduction in the switches (sharp) is simulated "
                "for its time alone: it needs the model device (dtsim)");
        return NULL;
    }
    dt_coll *c = callocCheck(1, sizeof *c);
    c->dev = dev;
    c->o = ro;
    for (int i = 0; i < DT_COMM_COUNT; i++) c->comms[i] = MPI_COMM_NULL, c->rank[i] = -1;
    if (ro.share_comm) c->comms[DT_COMM_ALL] = comm;
    else MPI_Comm_dup(comm, &c->comms[DT_COMM_ALL]);
    c->rank[DT_COMM_ALL] = r, c->size[DT_COMM_ALL] = p;
    if (ro.one_comm) spans_in_one_comm(c, r, p);
    else make_comms(c, r, p);
    c->tag_ub = 32767;
    int *ub = NULL, flag = 0;
    MPI_Comm_get_attr(c->comms[DT_COMM_ALL], MPI_TAG_UB, &ub, &flag);
    if (flag && ub && *ub > c->tag_ub) c->tag_ub = *ub > (1 << 24) ? 1 << 24 : *ub;
    c->hscratch.host = 1;
    dt_sweep_start(&c->sweep, ro.sweep);
    return c;
}

void dt_coll_set_ext(dt_coll *c, const dt_coll_ext *ext) {
    if (c->ext.destroy) c->ext.destroy(c->ext.ctx);
    c->ext = *ext;
}

int dt_coll_rank(const dt_coll *c) { return c->rank[DT_COMM_ALL]; }
uint64_t dt_coll_bytes_sent(const dt_coll *c) { return c->sent; }
int dt_coll_size(const dt_coll *c) { return c->size[DT_COMM_ALL]; }
int dt_coll_rank_in(const dt_coll *c, int comm) { return c->rank[comm]; }
int dt_coll_size_of(const dt_coll *c, int comm) { return c->size[comm]; }

dt_build_ctx dt_coll_build_ctx(const dt_coll *c) {
    dt_build_ctx x;
    memcpy(x.rank, c->rank, sizeof x.rank);
    memcpy(x.size, c->size, sizeof x.size);
    x.o = &c->o;
    return x;
}
const dt_coll_opts *dt_coll_get_opts(const dt_coll *c) { return &c->o; }

dt_algo dt_coll_resolve(const dt_coll *c, size_t bytes) {
    if (c->o.algo != DT_ALGO_AUTO) return c->o.algo;
    return dt_coll_cheapest(&c->o, c->size[DT_COMM_ALL], (double)bytes);
}
