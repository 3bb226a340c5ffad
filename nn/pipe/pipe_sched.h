// pipe_sched.h — a pipeline's schedule as data: for each of p stages, the order in which it
// runs the forward and the backward of m micro-batches, and what that order costs. The same
// schedule is priced by the simulator's analytic mode (sim/dtsim_3d.c), checked for deadlock
// before anything runs, and is what lesson 12 asks a student to write.
//
// The model's blocks are cut into p*v consecutive chunks ("virtual stages"); stage s holds
// chunks s, s+p, s+2p, ... (v of them: Narayanan et al. 2021, §2.2.2's interleaving; v = 1 is a
// plain pipeline). An op is one chunk's forward or backward of one micro-batch. Sends are
// implied by the ops: the forward of virtual stage k on micro-batch j sends its activations to
// virtual stage k+1; its backward sends their gradient to k-1. A stage runs its ops in order;
// an op starts when the stage is free and its input has arrived (sends never block: the
// runner posts them non-blocking).
//
// Schedules (docs/parallelism.md, "One step"):
//   gpipe        all m forwards, then all m backwards (Huang et al. 2019)
//   1f1b         a warm-up of forwards, then one forward and one backward in turn, then
//                the remaining backwards (PipeDream-Flush: Narayanan et al. 2021, §2.2.1;
//                lesson 12): the same bubble as GPipe, at most p-s micro-batches in flight
//   interleaved  1f1b over v chunks per stage (Narayanan et al. 2021, §2.2.2: m a multiple
//                of p): the bubble divided by v, for v times the point-to-point messages
// With uniform costs (a chunk's forward f/v, its backward b/v, free messages) a step takes
//   gpipe, 1f1b:  (m + p - 1) (f + b)        interleaved:  m (f + b) + (p - 1)(f + b) / v
// so the bubble's share of the step is (p - 1) / (m + p - 1), interleaved (p-1) / (v m + p - 1).
// Not here: the layers of a stage (nn/models_gpt.c), the 3D layout's costs (sim/dtsim_3d.c).
#ifndef DT_PIPE_SCHED_H
#define DT_PIPE_SCHED_H

#include <stddef.h>

#include "dt.h"

typedef enum { DT_PIPE_GPIPE, DT_PIPE_1F1B, DT_PIPE_INTERLEAVED } dt_pipe_kind;

typedef struct {
    int bwd;    // 0: forward, 1: backward
    int chunk;  // 0..v-1: the stage's chunk, virtual stage chunk*p + s
    int micro;  // 0..m-1
} dt_pipe_op;

typedef struct {
    int p, m, v;
    dt_pipe_op *ops;  // stage s runs ops[start[s]] .. ops[start[s+1] - 1] in order
    int *start;       // p + 1 entries
} dt_pipe_sched;

// The name a schedule is given on the command line ("gpipe", "1f1b", "interleaved"), -1 if
// none
int dt_pipe_kind_parse(const char *name);
const char *dt_pipe_kind_name(dt_pipe_kind k);

// Builds the schedule of kind k for p stages, m micro-batches and v chunks per stage (v is
// 1 unless k is interleaved, which needs v >= 2 and m a multiple of p). Returns 0, or -1
// with err set (DT_EXIT_USAGE: which of p, m, v is wrong and why).
int dt_pipe_build(dt_pipe_sched *s, dt_pipe_kind k, int p, int m, int v, dt_error *err);
void dt_pipe_free(dt_pipe_sched *s);

// What one virtual stage's ops cost: its forward and backward of one micro-batch (seconds),
// and the message it sends (its activations forward, their gradient backward; paid only
// between two stages). recompute is added before each backward (activation recomputation:
// the chunk's forward again).
typedef struct {
    double fwd, bwd, p2p, recompute;
} dt_pipe_cost;

typedef struct {
    double step_s;  // the last op's finish: one step's pipeline
    double busy_s;  // the busiest stage's compute
    double bubble;  // 1 - (a stage's compute) / step_s, the mean over stages
    int max_inflight;  // most chunk-micro-batches whose forward ran and backward did not, on
                       // any stage (the activations it holds: divide by v for whole stages)
} dt_pipe_price;

// Runs the schedule against the costs, as the stages would: c holds n_costs entries, 1 (every
// virtual stage alike) or p*v (virtual stage k's in c[k]). Returns 0, or -1 with `why`
// saying which op never became ready (a deadlock or an op that is missing, repeated or out
// of order). inflight, when not NULL, receives each stage's peak count (p entries).
int dt_pipe_run(const dt_pipe_sched *s, const dt_pipe_cost *c, int n_costs, dt_pipe_price *out,
                int *inflight, char *why, size_t why_n);

#endif
