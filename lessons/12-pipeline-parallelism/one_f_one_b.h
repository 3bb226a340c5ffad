// one_f_one_b.h — lesson 12's contract: a pipeline's 1F1B schedule (PipeDream-Flush,
// Narayanan et al. 2021 §2.2.1; Megatron-LM's default). A model's blocks are cut into p
// stages of consecutive blocks, one a rank; a step's batch into m micro-batches. Every
// stage runs the forward and the backward of every micro-batch once; the forward of
// micro-batch j on stage s needs stage s-1's activations of j, its backward needs stage
// s+1's gradient of j (the last stage starts j's backward from its own loss).
//
// GPipe (Huang et al. 2019) runs all m forwards, then all m backwards: stage 0 holds the
// activations of all m micro-batches at once. 1F1B runs a few forwards to fill the
// pipeline (the warm-up), then alternates one forward and one backward (the steady
// state), then the backwards that are left (the cool-down): no stage ever holds more
// than p - s micro-batches' activations, for the same bubble, (p-1)/(m+p-1) of the step
// when every stage's forward takes f and backward b.
//
// You write one_f_one_b in one_f_one_b.c. The grader (grader.c) runs your schedule on a
// model of the stages' clocks (an op starts when its stage is free and its input has
// arrived: nn/pipe/pipe_sched.h's dt_pipe_run, the simulator's) and then inside the real
// dtrain (`--pp 2`, two MPI ranks), where it must train bit for bit like one process.
#ifndef LESSON12_ONE_F_ONE_B_H
#define LESSON12_ONE_F_ONE_B_H

typedef struct {
    int bwd;      // 0: the forward of micro-batch `micro`, 1: its backward
    int micro;    // 0 .. m-1
    int send_to;  // the stage this op's output goes to: a forward sends its activations to
                  // s + 1, a backward their gradient to s - 1; -1 where there is no such
                  // stage (the last stage's forward ends in the loss, stage 0's backward
                  // in the embedding)
} pipe_op;

// Writes stage s's ops (0 <= s < p, 1 <= m), in the order the stage runs them, to
// ops[0 .. 2m-1], and returns how many it wrote (2m). 1F1B, as Megatron-LM runs it:
//   - the micro-batches' forwards in the order 0, 1, ..., m-1, and their backwards in the
//     same order (the plain step sums the micro-batches' gradients in that order: dtrain's
//     bits depend on it);
//   - stage s starts with as many forwards as the stages after it need to fill the
//     pipeline, and never has more than p - s micro-batches whose forward ran and whose
//     backward has not;
//   - in between, a forward and a backward in turn.
// Pure: no globals, no I/O, nothing but ops written (the grader calls it for every stage
// of many (p, m), in any order).
int one_f_one_b(int p, int m, int s, pipe_op *ops);

#endif
