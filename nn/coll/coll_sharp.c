// coll_sharp.c — reduction in the switches (opts.sharp), as hier's and torus2d's inner
// allreduce: Mellanox SHARP (Graham et al. 2016, "Scalable Hierarchical Aggregation Protocol
// (SHArP): A Hardware Architecture for Efficient Data Reduction"), which NCCL runs as CollNet
// on HDR and NDR InfiniBand. The members send their buffers up a tree of switches that sum
// them on the way and send the sum back down: each member's link carries its n bytes once
// each way, at the same time, where any allreduce between hosts carries about 2n each way
// (the ring's 2(p-1)/p). SimGrid has no switch that computes, so the schedule keeps the
// dependency and prices the rest: every member tells rank 0 of the set that it has arrived
// (one element, a message across the fabric), rank 0 waits the bytes' time on one link
// (wire_s = n·β: the two directions overlap) and releases them (one element back).
// Simulated: 2α + nβ, coll_cost.c's closed form. Timing only: the sums are meaningless
// (coll_opts.h; dt_coll_create refuses it without the model device).
#include "coll_sched.h"

void dt_sched_sharp(dt_lane *l, int comm, int r, int p, size_t off, size_t n, double wire_s) {
    if (p == 1 || n == 0) return;
    dt_lane_round(l);  // arrival
    if (r == 0)
        for (int i = 1; i < p; i++) dt_lane_op(l, DT_OP_RECV_NOTE, comm, i, off, 1);
    else dt_lane_op(l, DT_OP_SEND, comm, 0, off, 1);
    dt_lane_round(l);  // release, after the bytes have crossed the links
    if (r == 0) {
        dt_lane_wait(l, wire_s);
        for (int i = 1; i < p; i++) dt_lane_op(l, DT_OP_SEND, comm, i, off, 1);
    } else {
        dt_lane_op(l, DT_OP_RECV_COPY, comm, 0, off, 1);
    }
    dt_lane_close(l);
}
