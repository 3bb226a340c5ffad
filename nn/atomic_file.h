// atomic_file.h — writing a file so that no reader ever sees it half written
// (docs/conventions.md, atomic writes: never a partial file left as if whole): write
// PATH.tmp.<pid>, flush, fsync, rename over PATH (POSIX rename is atomic), fsync the
// directory. Used by the platform and plot writers, the trace and the rank program's result
// of sim/. Not a general I/O layer.
#ifndef DT_SIM_ATOMIC_FILE_H
#define DT_SIM_ATOMIC_FILE_H

#include <stdio.h>

#include "dt.h"

typedef struct {
    FILE *f;          // write here
    char tmp[4200];   // PATH.tmp.<pid>
    char path[4096];  // the final name
} dt_atomic_file;

// Opens PATH.tmp.<pid>. -1 with DT_EXIT_USAGE naming `what` and the path when it cannot be
// created (missing directory, no permission, path too long).
int dt_atomic_open(dt_atomic_file *a, const char *path, const char *what, dt_error *err);
// Flushes, fsyncs and closes the temporary file; 0 or -1 (DT_EXIT_RUNTIME, temp removed).
int dt_atomic_finish(dt_atomic_file *a, dt_error *err);
// Renames the finished temporary over the final path; -1 (temp removed) on failure.
int dt_atomic_commit(dt_atomic_file *a, dt_error *err);
// Closes (if open) and removes the temporary file: nothing is left behind.
void dt_atomic_abort(dt_atomic_file *a);

#endif
