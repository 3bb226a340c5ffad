// fuzz.h — what every harness of tests/fuzz shares: the libFuzzer entry point it defines,
// a file made of the fuzzer's bytes (the readers take paths, as the programs do), and the
// rule each harness enforces on a rejected input: DT_EXIT_USAGE (exit 2 in the programs)
// with a message that names the file. Anything else — a crash, a sanitizer report, another
// exit code, a message without the file — aborts, which libFuzzer records as a finding.
// The same harnesses run without libFuzzer over the committed corpora (replay.c).
#ifndef DT_FUZZ_H
#define DT_FUZZ_H

#include <stddef.h>
#include <stdint.h>

#include "dt.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

// Writes prefix (may be NULL) then data to DIR/name, DIR a directory of this process made
// once; returns the path (valid until the next call).
const char *fuzz_file(const char *name, const void *prefix, size_t prefix_len,
                      const uint8_t *data, size_t size);
// The directory fuzz_file writes into.
const char *fuzz_dir(void);
// A reader's verdict: rc 0 accepted (nothing to check), else err must be DT_EXIT_USAGE with a
// message naming `path` (NULL: any non-empty message), or abort() with what was wrong.
void fuzz_verdict(const char *reader, int rc, const dt_error *err, const char *path);

#endif
