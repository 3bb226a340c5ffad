// ring.c — lesson 04: the ring allreduce as a schedule (student_ring.h has the contract;
// README.md explains it). Patarasuk & Yuan 2009, "Bandwidth optimal all-reduce algorithms
// for clusters of workstations"; Baidu's allreduce. Every rank sends 2(p-1) messages of n/p
// elements: 2(p-1)α + 2(p-1)/p·nβ + (p-1)/p·nγ (docs/formulas.md, "Collective costs").
// Grade with `lessons/grade 04`; then run it in dtrain and dtsim (README.md).
#include "student_ring.h"

void student_ring(dt_lane *l, int comm, int r, int p, size_t off, size_t n) {
    // TODO(student): append this rank's rounds of the ring allreduce of [off, off+n) to l.
    //   The contract — the result, the order of each chunk's sum, the shape and the cost —
    //   is in student_ring.h and the README ("Part 2"); stuck: HINTS.md, one hint
    //   at a time. As it stands, the schedule is empty: every rank keeps its own values.
    (void)l, (void)comm, (void)r, (void)p, (void)off, (void)n;
}
