// subject.h — the student's code in a process of its own, which returns data and never
// verdicts. A lesson's grader is split in two:
//   the judge: the grader's checks, its references and its output (the verdict lines that
//     lessons/kit/run_grader.sh counts), linked WITHOUT the student's files: where the
//     grader calls the student's function, a stub of the same signature asks the subject
//     and takes the result as data (a schedule, an array, a count);
//   the subject: the student's files and a small server (or, where the student's code
//     itself talks MPI, a recording harness under mpirun), run as another user when the
//     grade runs as root, with a scrubbed environment, its output to a log that the judge
//     shows indented (never counted), and nothing of the grader's state in its memory.
// What the student's code prints, which descriptors it closes, whether it exits early with
// 0 or kills its parent: none of it can write a verdict; a subject that stops answering is
// a crash or a hang that the judge names, with the log's last lines.
// Two channels, one frame format ([u32 tag][u64 length][bytes]):
//   subject_open/subject_call  a request-response pipe to a server subject (pure
//       functions: lesson 04's student_ring builds a schedule);
//   record_open/record_put, replay_open/replay_next  a per-rank file a recording subject
//       writes under mpirun and the judge reads back (lesson 04's student_ring_mpi).
#ifndef DT_LESSON_SUBJECT_H
#define DT_LESSON_SUBJECT_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

// Under SMPI (smpi_helpers.h) exit, usleep and clock_gettime are the simulation's (one
// rank's end, simulated time, a yield to the other ranks): here a judge that stops stops
// the whole run, the channel's time limits are real seconds, and no rank runs while
// another waits for the subject's reply (the ranks share one subject).
#ifdef DT_SMPI
#undef exit
#undef usleep
#undef clock_gettime
#endif

#define SUBJECT_MAX_FRAME (512u << 20)  // a reply larger than this is refused as malformed

// ---- a growable byte buffer, for requests and replies ----
typedef struct {
    unsigned char *p;
    size_t len, cap, at;  // at: the read position
    int bad;              // a read past the end (a malformed reply)
} subject_buf;

void sb_put(subject_buf *b, const void *x, size_t n);
void sb_u64(subject_buf *b, uint64_t v);
int sb_get(subject_buf *b, void *x, size_t n);  // 0, or -1 (and b->bad) past the end
uint64_t sb_get_u64(subject_buf *b);
void sb_free(subject_buf *b);

// fn (tag of a request) -> handler, which reads the request and writes the reply: the
// server's functions (subject_serve), and the judge's callbacks (subject_call_cb).
typedef void (*subject_handler)(subject_buf *req, subject_buf *reply);

// ---- the judge's side of a server subject ----
// The server is LESSON_SUBJECT (an executable: run_grader.sh sets it), started on the
// first call and shared by the calls of this process (SMPI's ranks included); its output
// goes to LESSON_SUBJECT_LOG (else /dev/null). A call that gets no reply in
// LESSON_SUBJECT_TIMEOUT seconds (10 by default) ends the judge with status 124 after a
// "# hang: " line; a subject that died, or replied with a malformed frame, ends it with
// status 3 after saying how (its exit status or signal, its log's last lines). `what`
// names the call in those messages ("student_ring(r=0, p=4, n=13)").
void subject_call(uint32_t fn, const subject_buf *req, subject_buf *reply, const char *what);

// The same, for a student's function that calls back into the grader (07's overlap starts
// allreduces with the grader's library, 11's sharded step runs its reduce-scatter there):
// while it runs, the subject may send requests of tag t >= 1 (subject_callback), each
// answered by callbacks[t - 1] in the judge before the call goes on. `slot` picks the
// server, one per slot: SMPI's ranks, which share the judge's process, need one each
// (slot = the rank) when a callback blocks in a collective that the others must enter.
#define SUBJECT_MAX_SLOTS 256
void subject_call_cb(int slot, uint32_t fn, const subject_buf *req, subject_buf *reply,
                     const char *what, const subject_handler *callbacks, int n_callbacks);
// Inside a callback, before anything that may let another SMPI rank run: the slot of the
// call it answers (a static of the judge's would hold whichever rank called last).
int subject_callback_slot(void);
// Ends the judge with `status` (3: a crash of the submission, 124: a hang), its output
// flushed and its subject stopped.
void subject_stop(int status) __attribute__((noreturn));
// A reply that is not what `what` returns (too short, too long, out of range): status 3.
void subject_malformed(const char *what) __attribute__((noreturn));


// ---- the server's side ----
// Serves requests on descriptors 3 (in) and 4 (out) until the judge closes the pipe.
int subject_serve(const subject_handler *handlers, int n);
// Inside a handler: asks the judge's callback fn (0-based) and waits for its answer.
void subject_callback(uint32_t fn, const subject_buf *req, subject_buf *reply);

// ---- a recording subject (under mpirun) and its replay in the judge ----
// The recording subject appends one frame per call to LESSON_RECORDS/rank-R; the judge's
// stub reads them back in order. replay_next returns 0, or -1 at the end of the record;
// then replay_missing ends the judge as the subject ended: status 124 with its "# hang: "
// lines when it hung (LESSON_SUBJECT_RC=124), else status 3 with its exit status; only
// the rank that `speaks` says so (rank 0 of a hang: every rank stopped at the same call).
void record_put(int rank, uint32_t tag, const subject_buf *b);
int replay_next(int rank, uint32_t tag, subject_buf *b);
void replay_missing(const char *what, int speak);

#endif
