// coll_sched.h — inside the allreduce library: the schedule every algorithm compiles to, the
// functions that build one, and the registry entry that names an algorithm. Not part of the
// API (nn/coll/coll.h is).
//
// A schedule is one or more independent *lanes* (dbtree runs its two trees as two lanes, so
// neither waits for the other); a lane is a list of *rounds*; a round is a list of ops. The
// runner (coll_run.c) posts every message of a round at once (MPI_Irecv / MPI_Isend), and
// when all of them have completed it runs the round's local work in op order: RECV_ADD adds
// what arrived into the buffer (dev->add: the γ term of the cost model), RECV_COPY installs
// it. QUANT runs when the round is posted, before its sends (fp16 wire: the owner of a
// finished chunk rounds its own copy as the receivers will see it). NATIVE is the MPI
// library's own allreduce of the range (the `mpi` algorithm, coll_native.c). RECV_NOTE is a
// message whose arrival is all that counts (coll_sharp.c's): it lands in tmp, nothing is done
// with it, no kernel is charged. Offsets and counts are in elements of the buffer; ops with
// count 0 are never recorded, and since both ends of a message compute the same count,
// neither side posts it.
#ifndef DT_COLL_SCHED_H
#define DT_COLL_SCHED_H

#include <stddef.h>
#include <stdint.h>

#include "coll_opts.h"

enum { DT_OP_SEND, DT_OP_RECV_ADD, DT_OP_RECV_COPY, DT_OP_QUANT, DT_OP_NATIVE,
       DT_OP_RECV_NOTE };

// Communicators an op can name (dt_coll.comms[]): everyone; hier's group (consecutive
// ranks), its leaders (local rank 0 of each group) and its cross sets (the same local rank
// in every group, only when the groups are equal); torus2d's rows (X consecutive ranks) and
// columns. A rank outside one holds MPI_COMM_NULL there.
enum { DT_COMM_ALL, DT_COMM_GROUP, DT_COMM_LEADERS, DT_COMM_CROSS, DT_COMM_ROW, DT_COMM_COL,
       DT_COMM_COUNT };

typedef struct {
    uint8_t kind;  // DT_OP_*
    uint8_t comm;  // DT_COMM_*
    int peer;      // rank in that communicator
    size_t off;    // elements into the buffer
    size_t count;  // elements
} dt_op;

typedef struct {
    dt_op *ops;
    int n_ops, cap_ops;
    int *round_start;  // round k is ops [round_start[k], round_start[k+1])
    int n_rounds, cap_rounds;
    double *delay;     // seconds to wait before posting round k (coll_coarsen.c); NULL: none
    // coarsening (coll_coarsen.c): key[k] = (phase << 20) | step for the rounds of a ring
    // phase, whose step s is the same step on every rank of the ring, with DT_KEY_TREE set
    // for a tree's pipeline (coll_tree.c); 0 for any other round
    int *key;
    int next_key, phases;
} dt_lane;

#define DT_KEY_TREE (1 << 30)  // a key of dbtree's pipeline: merged by opts.coarsen_tree

#define DT_MAX_LANES 2

typedef struct {
    dt_lane lanes[DT_MAX_LANES];
    int n_lanes;
    int coarsened;  // dt_sched_coarsen ran (coll_coarsen.c): it does not run twice
} dt_sched;

// Building (coll_sched.c)
void dt_lane_round(dt_lane *l);  // opens a new round (empty rounds are dropped)
void dt_lane_op(dt_lane *l, int kind, int comm, int peer, size_t off, size_t count);
void dt_lane_close(dt_lane *l);  // drops a trailing empty round
// the open round waits `seconds` more before it is posted (dt_lane.delay, made on first use)
void dt_lane_wait(dt_lane *l, double seconds);
void dt_sched_free(dt_sched *s);
// The chunk i of n elements split into p nearly equal parts: [chunk_lo(i), chunk_lo(i+1))
static inline size_t dt_chunk_lo(size_t n, int p, int i) {
    return (size_t)((unsigned __int128)n * (unsigned)i / (unsigned)p);
}

// The algorithms (coll_sched.c: ps; coll_ring.c; coll_rhd.c; coll_tree.c; coll_hier.c:
// the binomial trees, hier, torus2d) append their rounds to lane l for
// the buffer range [off, off+n) over communicator `comm` (rank r of p). `quant` is set
// when the wire is fp16 (the allgather phases then round the owner's chunk first).
void dt_sched_ps(dt_lane *l, int comm, int r, int p, size_t off, size_t n, int quant);
void dt_sched_ring(dt_lane *l, int comm, int r, int p, size_t off, size_t n, int quant);
// whole: recursive doubling (short messages; dt_rhd_whole in coll_cost.h decides)
void dt_sched_rhd(dt_lane *l, int comm, int r, int p, size_t off, size_t n, int quant,
                  int whole);
// reduce-scatter and allgather halves of the ring (hier rs, torus2d); rank r owns
// chunk r of the p chunks of [off, off+n) in between
void dt_sched_ring_rs(dt_lane *l, int comm, int r, int p, size_t off, size_t n);
void dt_sched_ring_ag(dt_lane *l, int comm, int r, int p, size_t off, size_t n, int quant);
// binomial-tree reduce to rank 0 and broadcast from rank 0 (quant: the root first rounds its
// own copy to the fp16 bits it sends, also when it is alone, so that its group ends equal)
void dt_sched_binomial_reduce(dt_lane *l, int comm, int r, int p, size_t off, size_t n);
void dt_sched_binomial_bcast(dt_lane *l, int comm, int r, int p, size_t off, size_t n,
                             int quant);
// reduction in the switches (coll_sharp.c, timing only: opts.sharp): every rank's arrival
// at rank 0 of comm, `wire_s` seconds for the bytes to cross a link each way, the release
// from rank 0; one element of [off, off+n) on the wire
void dt_sched_sharp(dt_lane *l, int comm, int r, int p, size_t off, size_t n, double wire_s);
// double binary tree: lanes 0 and 1 of s, `segments` pipeline segments per half
void dt_sched_dbtree(dt_sched *s, int comm, int r, int p, size_t off, size_t n, int segments,
                     int quant);


// ---- the registry (coll_algos.c): one entry names an algorithm ----
// To add an algorithm: write its schedule (a function like dt_sched_ring) and a builder
// with the signature below, then add one entry to the table in coll_algos.c. dtrain --algo,
// dtsim --algo, dtcoll-bench --algos, DTCOLL_ALGO, `auto`, every --help that lists the
// algorithms and the test lists of tests/coll (cmake/dtlab_algos.cmake reads the table's
// lines: one entry a line, its flags by name) all follow that table.
// (A build can add entries without editing the table: see DT_ALGO_EXTRA in coll_algos.c.)

// What a builder knows of its communicator (coll.c fills it from dt_coll): this rank's place
// in every communicator of coll_sched.h's DT_COMM_* (-1 / 0 where the rank holds none) and
// the resolved options. Builders take this, not the dt_coll, so that a schedule depends on
// nothing above it.
typedef struct {
    int rank[DT_COMM_COUNT];
    int size[DT_COMM_COUNT];
    const dt_coll_opts *o;
} dt_build_ctx;

// One sub-communicator an algorithm needs: the ranks first, first + stride, ... (count of
// them) as DT_COMM_* `which`, made by its members alone (coll.c, MPI_Comm_create_group).
typedef struct {
    int which, first, stride, count;
} dt_comm_span;

#define DT_MAX_SPANS 4  // sub-communicators one entry may ask for on one rank

typedef struct {
    const char *name;  // as on the command line (--algo NAME)
    // The whole allreduce of n elements (x: the rank in each communicator, the resolved
    // options): append its rounds to lane 0 of s (s->n_lanes = 2 for two lanes). quant:
    // fp16 on the wire. NULL: not a schedule (auto, resolved first; nccl, run by another
    // library).
    void (*build)(const dt_build_ctx *x, size_t n, int quant, dt_sched *s);
    // Seconds for one allreduce of `bytes` per rank on p ranks by the α-β-γ model
    // (coll_cost.c), NaN where the shape does not fit. NULL: unknown — auto never picks it
    // and the fusion planner prices it as a ring.
    double (*cost)(const dt_coll_opts *o, int p, double bytes);
    // NULL: runs on any p. Else 0, or -1 with err set (DT_EXIT_USAGE, naming the option)
    // when it cannot run on p ranks with the options o (checked by dt_coll_create).
    int (*check)(const dt_coll_opts *o, int p, dt_error *err);
    // May auto choose it on p ranks with o? NULL: wherever its cost is known.
    int (*in_auto)(const dt_coll_opts *o, int p);
    unsigned flags;    // DT_ALGO_*, below
    // Completes the options it runs with on p ranks, once they are checked (torus2d's
    // default grid, dbtree's depth). NULL: nothing to complete.
    void (*settle)(dt_coll_opts *o, int p);
    // The sub-communicators rank r of p needs for it, with the resolved options o, into
    // out[0 .. DT_MAX_SPANS): returns how many. dt_coll_create asks every entry, in table
    // order (auto may run any of them). NULL: none, DT_COMM_ALL only.
    int (*comms)(const dt_coll_opts *o, int r, int p, dt_comm_span *out);
    // With DT_ALGO_SUMS_IN_WIRE_TYPE: whose allreduce it is, for the message that refuses
    // fp16 on the wire ("the MPI library")
    const char *sums_by;
} dt_algo_def;

// The flags: what an algorithm can take. 0 is an algorithm of ours that runs on any P with
// fp16 on the wire or not, from its schedule alone.
#define DT_ALGO_SUMS_IN_WIRE_TYPE 1u  // another library sums, in the wire's type: no fp16 wire
#define DT_ALGO_USES_GROUPS 2u        // shaped by opts.group (hier): tests give it groups
#define DT_ALGO_USES_GRID 4u          // shaped by opts.tx x opts.ty (torus2d)
#define DT_ALGO_EXTERNAL 8u           // run by an attached extension (dt_coll_set_ext), no schedule
#define DT_ALGO_CHOOSES 16u           // picks another algorithm per call (auto), no schedule

int dt_algo_get(dt_algo a, dt_algo_def *out);  // its entry into *out; -1: a names none
int dt_algo_count(void);                     // entries, built-ins and a build's extras

// The builders of the built-in algorithms, in the files of their schedules.
void dt_build_ps(const dt_build_ctx *x, size_t n, int quant, dt_sched *s);
void dt_build_ring(const dt_build_ctx *x, size_t n, int quant, dt_sched *s);
void dt_build_rhd(const dt_build_ctx *x, size_t n, int quant, dt_sched *s);
void dt_build_dbtree(const dt_build_ctx *x, size_t n, int quant, dt_sched *s);
void dt_build_hier(const dt_build_ctx *x, size_t n, int quant, dt_sched *s);
void dt_build_torus2d(const dt_build_ctx *x, size_t n, int quant, dt_sched *s);
void dt_build_native(const dt_build_ctx *x, size_t n, int quant, dt_sched *s);
// The sub-communicators of hier (its groups, their leaders, its rs variant's cross sets) and
// of torus2d (rows and columns), in coll_hier.c
int dt_comms_hier(const dt_coll_opts *o, int r, int p, dt_comm_span *out);
int dt_comms_torus2d(const dt_coll_opts *o, int r, int p, dt_comm_span *out);

#endif
