// subject03.h — lesson 03's split grader (lessons/kit/subject.h): data_parallel.c talks MPI
// itself, so it runs in a recording program of its own and the judge replays what it
// returned.
//   the recording (subject03_mpi.c): grader.c's own sequence of calls with the student's
//     files, its verdicts quiet, under mpirun (subject_mpi) or smpirun (subject_smpi.so),
//     as another user with an empty environment; after each call of the student's four
//     functions, what the call returned is written to this rank's record;
//   the judge (remote.c): grader.c with stubs of the four functions that read the record
//     back, rank by rank, in the same order (the same seed, the same arguments, so the
//     same calls), and the checks, the references and the verdict lines of its own.
// The records are lesson 03's (record03.c), not the kit's record_put/replay_next: under
// SMPI every rank of a run is in one process, so each rank needs its own record file open
// at once (the kit keeps one per process).
#ifndef LESSON03_SUBJECT03_H
#define LESSON03_SUBJECT03_H

#include "../kit/subject.h"

// A record's frames, one per call: what the call returned.
enum {
    SUBJECT03_SHARD = 1,  // u64 global_batch, rank, size; i64 *first, *count
    SUBJECT03_BROADCAST,  // u64 n_total; the n_total floats of net->params
    SUBJECT03_AVERAGE,    // u64 n_trainable; the n_trainable floats of net->grads
    SUBJECT03_STEP,       // u64 n_total; the n_total floats of net->params after the step
    SUBJECT03_SPAN,       // double [start, end]: the simulated time around the timed step
};

// ---- what grader.c asks the program it is linked into ----
// 1 in the recording (subject03_mpi.c), 0 in the judge (remote.c).
int lesson03_recording(void);
// The timed step's [start, end] on world rank `wrank` (grader.c's check_time, under SMPI):
// the recording writes what it measured around the student's step to the record; the
// judge, whose step is a replay that takes no simulated time, reads it back into se.
void lesson03_step_span(int wrank, double se[2]);

// ---- one record per rank: LESSON_RECORDS/rank-R (record03.c) ----
// Appends one frame [u32 tag][u64 length][bytes], flushed: what a call returned stays
// written when the program dies at the next one.
void rec03_put(int rank, uint32_t tag, const subject_buf *b);
// The rank's next frame, which must be of `tag`: 0, or -1 at the end of the record (the
// recording stopped before: replay_missing says how). A frame of another tag ends the judge
// with status 3 (the records are data, never verdicts).
int rec03_next(int rank, uint32_t tag, subject_buf *b);

#endif
