// coll_opts.h — the allreduce library's vocabulary (part of the API; coll.h includes it): the
// algorithms by name and number, the element types, the α-β-γ machine of the cost model and
// the options of a communicator. Apart from coll.h so that the schedules (coll_sched.h) and
// the cost model (coll_cost.h) read these types without depending on the API above them.
#ifndef DT_COLL_OPTS_H
#define DT_COLL_OPTS_H

#include <stddef.h>

#include "../dt.h"

// The built-in algorithms: each names one line of the registry (coll_algos.c's
// DT_ALGO_BUILTINS, which a compile-time assertion holds to this list); a build with more
// entries (DT_ALGO_EXTRA) numbers them from DT_ALGO_COUNT on.
typedef enum {
    DT_ALGO_MPI,
    DT_ALGO_PS,
    DT_ALGO_RING,
    DT_ALGO_RHD,
    DT_ALGO_DBTREE,
    DT_ALGO_HIER,
    DT_ALGO_TORUS2D,
    DT_ALGO_NCCL,  // only where an extension is attached (dt_coll_set_ext)
    DT_ALGO_AUTO,  // the cheapest by the cost model, chosen per call from its size
    DT_ALGO_COUNT  // the built-ins
} dt_algo;

const char *dt_algo_name(dt_algo a);
// The registry's names, "mpi, ps, ring, ...", a build's extra entries included, into buf (n
// bytes; DT_ALGO_NAMES_MAX holds them all); returns buf. For help texts and messages.
const char *dt_algo_names(char *buf, size_t n);
#define DT_ALGO_NAMES_MAX 512
// The same as an expression for one call's arguments (printf("%s", DT_ALGO_VALID)): its
// buffer lives until the end of the enclosing block.
#define DT_ALGO_VALID dt_algo_names((char[DT_ALGO_NAMES_MAX]){0}, DT_ALGO_NAMES_MAX)
// Parse an algorithm name; unknown names fail with DT_EXIT_USAGE and a message listing the
// valid ones (`what` names the option or variable, e.g. "--algo" or "DTCOLL_ALGO").
int dt_algo_parse(const char *s, const char *what, dt_algo *out, dt_error *err);

typedef enum { DT_F32, DT_F64 } dt_dtype;

// The α-β-γ machine of the cost model (docs/formulas.md, "Collective costs"): α seconds per message, β seconds per
// byte sent, γ seconds per byte reduced. `intra` is the link inside a group (hier's first
// and last phase, torus2d's X rings); the flat algorithms use the outer figures.
typedef struct {
    double alpha, beta, gamma;
    double alpha_intra, beta_intra;
    // ranks of one group (a node's GPUs: opts.group) that reach the network through the same
    // links, β being that node's whole network: an rhd step that pairs ranks of different
    // nodes moves every rank's bytes through them at once, at share·β each (as hier rs's
    // inner allreduce does). 0 or 1: each rank has the network to itself (flat platforms).
    double share;
    // dbtree with share > 1 (coll_cost.c): how its trees cross the nodes of `g` ranks, for p
    // ranks; filled by dt_dbtree_links_of (dt_coll_create does it for its communicator)
    struct {
        int p, g;                 // the shape it describes (0: none)
        int edges;                // the most tree edges leaving or entering one node
        signed char intra[33];    // [c]: the most intra-node hops of a root path with c
    } dbt;                        // cross-node hops (-1: no such path)
} dt_cost_params;

// Shared memory on one machine (a few µs per message, ~10 GB/s, ~5 GB/s of additions): a
// default under which `auto` chooses sensibly on a workstation.
dt_cost_params dt_cost_params_default(void);

typedef struct {
    dt_algo algo;
    int wire_f16;       // fp16 on the wire (float32 buffers only; not with algo mpi)
    int group;          // hier: ranks per group; 0 = dt_coll_local_size() (the launcher's
                        // ranks per node), or 1 when it does not say
    dt_algo inner;      // hier's and torus2d's inner allreduce: DT_ALGO_RING or DT_ALGO_RHD
    int hier_rs;        // hier variant: 0 reduce/allreduce/broadcast, 1 rs/allreduce/ag
    int tx, ty;         // torus2d grid X×Y with X*Y == P; 0,0 = the squarest factorisation
    int segments;       // dbtree pipeline segments per half; 0 = chosen by the cost model
    int checked;        // every call first checks that all ranks passed the same count
                        // (one extra small allreduce); also on when DTCOLL_CHECK=1
    // SMPI only: a poll completes requests with MPI_Waitany and a tick instead of MPI_Test,
    // which SimGrid 3.32 makes slower with every request it completes (coll_sweep.c). For
    // polls spaced by computation, as dtsim's trainer makes them between kernels; a busy
    // loop of polls is slower with it. Real MPI ignores it.
    int sweep;
    // Timing-only simulation (the model device, whose buffers hold no data): merge up to
    // `coarsen` consecutive rounds that talk to the same peers into one round of one message
    // k times longer, and let the device wait (k-1)·α first (dev->delay), so the simulated
    // time is kept while SimGrid handles k times fewer messages (a ring over 1024 ranks:
    // 2046 rounds become 64). The sums are then meaningless. 0 or 1: off.
    int coarsen;
    // The same for dbtree's pipeline (coll_tree.c): up to `coarsen_tree` consecutive
    // segments per simulated message. Exact on an uncontended fabric (tests/coll); on a
    // shared one it moves the simulated time (bench/DTSIM-SPEED.md), so dtsim merges them
    // only when asked (--coarsen-dbtree). 0 or 1: off.
    int coarsen_tree;
    // Timing-only simulation too: hier's and torus2d's inner allreduce reduced in the
    // switches (in-network reduction: Mellanox SHARP, Graham et al. 2016, which NCCL's
    // CollNet runs on HDR and NDR InfiniBand), not by the ranks (coll_sharp.c). Each member's
    // bytes cross its link once each way, after every member has arrived; the sums are
    // meaningless, and dt_coll_create refuses it without a device that can wait (dev->delay:
    // the model device). 0: off.
    int sharp;
    // dbtree's depth for this many ranks; dt_coll_create fills it for algo dbtree and auto
    // (0: computed on demand, O(P log P) each time, which the fusion planner's thousands of
    // cost calls cannot afford)
    int dbtree_depth;
    // device buffers go to MPI as they are (a CUDA-aware MPI); else they are staged through
    // pinned host memory (see above). No effect on host-addressable memory.
    int gpu_direct;
    // use the caller's communicator itself instead of a duplicate (MPI_Comm_dup). For a
    // program that creates one library per rank in one process, and whose own traffic on
    // the communicator is collectives only (their tags never meet ours): dtsim, where P
    // duplicates of MPI_COMM_WORLD cost SimGrid memory for every rank. The caller keeps the
    // communicator until dt_coll_free.
    int share_comm;
    // no sub-communicator: every message goes on the caller's communicator, a sub-group's
    // rank j addressed as the caller's rank first + j * stride (its dt_comm_span), so the
    // library makes no communicator of its own and every rank uses the same ones (they
    // never run out on one rank before another). Messages of one request between two ranks
    // keep their order (MPI's non-overtaking rule, and every algorithm posts its rounds in
    // the same order on both sides). For libdtcoll_mpi.so under other people's programs;
    // the default (0) makes each sub-group a communicator with MPI_Comm_create_group, by its
    // members alone.
    int one_comm;
    dt_cost_params cost;
} dt_coll_opts;

// algo ring, inner ring, everything else automatic, cost = dt_cost_params_default()
dt_coll_opts dt_coll_opts_default(void);

#endif
