// ring_keys.h — the keys that let a student's ring be simulated as dtlab's is. Timing-only
// simulation (dtsim above 16 GPUs: nn/coll/coll_coarsen.c) merges consecutive steps of a
// ring phase into one longer message; it finds them by the key of each round, phase << 20 |
// step, which dt_sched_ring_rs/_ag set. A ring of 2(p-1) rounds appended to lane l from
// round first_round on is tagged the same way here (reduce-scatter steps 0..p-2, then
// allgather steps 0..p-2), so that it simulates the same messages as dtlab's ring; any
// other shape keeps key 0: never merged. Used by lesson 04's registry entry "student" and
// lesson 05's "your_ring" (lesson 04's ring raced against halving-doubling).
#ifndef DT_LESSON_RING_KEYS_H
#define DT_LESSON_RING_KEYS_H

#include "coll/coll_sched.h"

static inline void lesson_tag_ring_steps(dt_lane *l, int first_round, int p) {
    if (p < 2 || l->n_rounds - first_round != 2 * (p - 1)) return;
    int phase = l->phases + 1;
    for (int k = 0; k < 2 * (p - 1); k++)
        l->key[first_round + k] = (phase + k / (p - 1)) << 20 | k % (p - 1);
    l->phases += 2;
}

#endif
