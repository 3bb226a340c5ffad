// student_ring.h — lesson 04's contract (provided: do not edit). You write student_ring in
// ring.c; registry.c turns it into an allreduce algorithm of dtlab's like any other, named
// "student": one more entry in the registry (nn/coll/coll_algos.c, DT_ALGO_EXTRA), so that
// the grader, dtrain --algo student and dtsim --algo student all run your ring through the
// same library, core runner (nn/coll/coll_run.c) and trainer as --algo ring.
#ifndef LESSON04_STUDENT_RING_H
#define LESSON04_STUDENT_RING_H

#include "coll/coll_cost.h"
#include "coll/coll_sched.h"

// Append to lane l this rank's rounds of the ring allreduce (Patarasuk & Yuan 2009) of the
// elements [off, off+n) of the buffer, over communicator comm, as rank r of p ranks
// (any p >= 1, n >= 0; every rank passes the same off and n):
//   result: once every rank's schedule has run, each element holds the sum over the p ranks
//     with the same bits on every rank (summed on one rank, then copied). Chunk c is
//     [off + dt_chunk_lo(n, p, c), off + dt_chunk_lo(n, p, c+1)); its sum is added up in
//     ring order from the rank after its owner, x(c+1) + x(c+2) + ... + x(c) (mod p), as
//     dtlab's own ring does, and after the first p-1 rounds (the reduce-scatter) rank r
//     holds chunk r summed; the last p-1 (the allgather) copy the sums to every rank.
//   shape: exactly 2(p-1) rounds (fewer only when chunks are empty), each one send of a
//     chunk to the right neighbour and one receive of a chunk from the left, with
//     DT_OP_RECV_ADD or DT_OP_RECV_COPY; no round receive-copies onto memory it also uses.
//   cost: 2(p-1)α + 2(p-1)/p·nβ + (p-1)/p·nγ (docs/formulas.md, "Collective costs").
// Open a round with dt_lane_round(l) and add its messages with dt_lane_op(l, kind, comm,
// peer, offset, count); ops of count 0 are dropped (both ends compute the same count).
// Of dtlab's library only dt_lane_round, dt_lane_op, dt_lane_close and dt_chunk_lo
// (calls.txt: the grade refuses dt_sched_ring and the rest).
void student_ring(dt_lane *l, int comm, int r, int p, size_t off, size_t n);

// The registry entry's functions (registry.c): the builder runs student_ring on the whole
// buffer (DT_COMM_ALL, every rank); the check refuses fp16 on the wire (beyond this lesson:
// --fp16-grads needs the owner of a chunk to round its own copy, a DT_OP_QUANT op); auto
// never picks it.
void build_student(const dt_build_ctx *x, size_t n, int quant, dt_sched *s);
int check_student(const dt_coll_opts *o, int p, dt_error *err);
int student_in_auto(const dt_coll_opts *o, int p);

//                      name       builder        cost          check          in auto          flags
#define DT_ALGO_EXTRA_ENTRIES \
    {"student", build_student, dt_cost_ring, check_student, student_in_auto, 0},

#endif
