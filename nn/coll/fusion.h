// fusion.h — the gradient-fusion planner: which consecutive gradient-ready events of
// backward go into one allreduce ("tensor fusion", Jia et al. 2018; Horovod's fusion
// threshold; PyTorch DDP's buckets), and when each of those allreduces would run under a
// one-channel cost model. Pure host arithmetic: no MPI, no device, no allocation that
// outlives a call. Not here: running the allreduces (coll.h), the α-β-γ figures that price a
// message (the caller's cost function), or measuring the ready times (the trainer).
//
// Events. dt_net_backward calls ready(ctx, net, layer, lo, hi) after each layer (net.h);
// event i of backward carries the range [lo, hi) of the flat gradient buffer (elements) that
// just became final and the time it did. The ranges tile [0, n_trainable) from the top down:
// ev[0].hi == n_trainable, ev[i].hi == ev[i-1].lo, ev[n-1].lo == 0; layers without
// parameters give empty ranges (lo == hi). Ready times are seconds since backward started
// and never decrease (they are read off one clock in event order).
//
// Buckets. A bucket is a run of consecutive events, so a contiguous slice [lo, hi) of the
// gradient buffer; its allreduce can start once its LAST event has happened. Buckets are
// listed in backward order: bucket 0 holds the highest offsets. Every bucket holds at least
// one element (n_trainable == 0 gives no bucket). An event with an empty range carries no
// bytes; it joins the bucket BELOW it (the next one in backward order), so it never delays
// the bucket above; empty events after the last nonempty one join the last bucket.
//
// The model (wait-free backpropagation with merged gradients: Shi, Wang, Chu 2019,
// "MG-WFBP"; Jia et al. 2018, "tensor fusion"): one communication channel, allreduces in
// bucket order, none overlapping another:
//     start_j  = max(ready(last event of j), finish_{j-1})     (finish_{-1} = -inf)
//     finish_j = start_j + cost(bytes_j)
//     exposed  = max(0, finish_last - backward_end),  backward_end = ready of the last event.
// Few buckets pay the per-message latency α few times but start late; many buckets overlap
// backward but pay α each. The planner picks the split points:
//   NONE      one bucket per nonempty event (no fusion: one allreduce per layer)
//   BYTES     Horovod's HOROVOD_FUSION_THRESHOLD / DDP's bucket_cap_mb: walking backward,
//             close the bucket as soon as it holds >= `bytes`; the last one takes the rest
//   SEGMENTS  exactly K buckets whose K-1 split points minimise finish_last (Jia et al.
//             2018 use K = 2), by dynamic programming; K larger than the number of nonempty
//             events m means m
//   AUTO      the same minimum over every number of buckets
// All ranks must run the same plan (allreduces are matched by order): plan from ready times
// every rank agrees on (e.g. rank 0's, broadcast), never from each rank's own clock.
#ifndef DT_FUSION_H
#define DT_FUSION_H

#include <stddef.h>

#include "../dt.h"

// One gradient-ready event: at `ready` seconds after backward started, the gradient
// elements [lo, hi) became final.
typedef struct {
    double ready;   // seconds since backward start
    size_t lo, hi;  // elements of the flat gradient buffer
} dt_grad_event;

// One fusion bucket: events first_event..last_event (inclusive, indices into the event
// array), i.e. gradient elements [lo, hi), and the modelled start and finish of its
// allreduce (seconds since backward start).
typedef struct {
    int first_event, last_event;
    size_t lo, hi;         // elements; bytes = (hi - lo) * elem_bytes
    double start, finish;  // seconds
} dt_bucket;

// Modelled seconds to allreduce a message of `bytes` bytes (e.g. the α-β-γ model of the
// chosen algorithm). Must return a finite value >= 0.
typedef double (*dt_comm_cost_fn)(void *ctx, size_t bytes);

typedef enum {
    DT_FUSION_NONE,      // one bucket per event with a nonempty range
    DT_FUSION_BYTES,     // close a bucket once it holds >= bytes
    DT_FUSION_SEGMENTS,  // K = segments buckets, split points chosen by the cost model
    DT_FUSION_AUTO,      // any number of buckets, chosen by the cost model
} dt_fusion_mode;

typedef struct {
    dt_fusion_mode mode;
    size_t bytes;  // BYTES: the threshold in bytes (0: every nonempty event alone)
    int segments;  // SEGMENTS: K >= 1
} dt_fusion_opts;

#define DT_FUSION_VALID                                                                   \
    "none, auto, segments:K (K >= 1), or a byte threshold: an integer or decimal number " \
    "with an optional unit B, KB, MB, GB (powers of 1000) or KiB, MiB, GiB (powers of "  \
    "1024), e.g. 64MB, 512KiB, 1000000"

// Parse the --fusion option: "none", "auto", "segments:2", "64MB" (64e6 bytes), "512KiB"
// (524288 bytes), "1000000" (bytes), "1.5MiB". Units are case-insensitive. Returns 0, or -1
// with DT_EXIT_USAGE and a message naming --fusion and the accepted forms.
int dt_fusion_parse(const char *s, dt_fusion_opts *o, dt_error *err);

// The option back as text dt_fusion_parse accepts ("none", "auto", "segments:2", "64000000B"),
// truncated to n bytes with a terminating NUL. Returns buf.
char *dt_fusion_format(const dt_fusion_opts *o, char *buf, size_t n);

// Plan the buckets of n_ev events (backward order, see the top of this file) whose
// elements are elem_bytes bytes each on the wire (4: fp32, 2: fp16). Writes the buckets to
// out (room for n_ev), in backward order, with their modelled start and finish, and returns
// their number (0 when every range is empty or n_ev == 0). Returns -1 with DT_EXIT_USAGE on
// bad input: n_ev < 0, ranges that do not tile downwards to 0, ready times that are NaN,
// infinite or decreasing, segments < 1, elem_bytes == 0, a NULL cost, or a cost that is
// not finite and >= 0. Costs O(m^2) calls of cost and O(K m^2) arithmetic for m nonempty
// events (SEGMENTS), O(m^2) for AUTO.
int dt_fusion_plan(const dt_grad_event *ev, int n_ev, size_t elem_bytes,
                   const dt_fusion_opts *o, dt_comm_cost_fn cost, void *ctx, dt_bucket *out,
                   dt_error *err);

// Communication left after backward: max(0, finish of the last bucket - backward_end)
// seconds (0 for nb <= 0).
double dt_fusion_exposed(const dt_bucket *b, int nb, double backward_end);

#endif
