// dt.h — the few things every file of dtlab needs: error reporting that carries
// __FILE__/__LINE__ (llm.c's mallocCheck/fopenCheck style), and the dt_error record through
// which library code reports bad input to the program that called it. Not a framework: no
// logging levels, no globals. nn/ has no mutable globals at all (the simulator runs every rank
// in one process: docs/architecture.md, "No mutable globals in nn/").
#ifndef DT_H
#define DT_H

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

// Exit codes, docs/conventions.md "Exit codes".
#define DT_EXIT_OK 0
#define DT_EXIT_RUNTIME 1
#define DT_EXIT_USAGE 2

// A failure that library code reports instead of exiting: code is DT_EXIT_USAGE for bad
// input (a file, an option, a size) and DT_EXIT_RUNTIME for anything else; msg names the
// file or option and what was expected.
typedef struct dt_error {
    int code;
    char msg[512];
} dt_error;

// Record a failure in err (may be NULL) and return -1, so callers write
// `return dt_fail(err, DT_EXIT_USAGE, "file %s: ...", path);`.
int dt_fail(dt_error *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void dt_error_clear(dt_error *err);

// Seconds on the host's monotonic clock (CLOCK_MONOTONIC: never set back), for the wall
// time of what a program does: the one clock of dtlab's native programs. Not the MPI clock:
// where MPI's time is meant (a step as the ranks see it; SimGrid's simulated time under
// SMPI) the code reads MPI_Wtime.
double dt_now_s(void);

// Programmer errors and out-of-memory: print where, and abort the process (exit 1).
void *dt_malloc_check(size_t size, const char *file, int line);
void *dt_calloc_check(size_t n, size_t size, const char *file, int line);
FILE *dt_fopen_check(const char *path, const char *mode, const char *file, int line);
#define mallocCheck(size) dt_malloc_check((size), __FILE__, __LINE__)
#define callocCheck(n, size) dt_calloc_check((n), (size), __FILE__, __LINE__)
#define fopenCheck(path, mode) dt_fopen_check((path), (mode), __FILE__, __LINE__)

#define DT_ASSERT(cond)                                                              \
    do {                                                                             \
        if (!(cond)) {                                                               \
            fprintf(stderr, "dtlab: internal error at %s:%d: %s\n", __FILE__, __LINE__, \
                    #cond);                                                          \
            abort();                                                                 \
        }                                                                            \
    } while (0)

#endif
