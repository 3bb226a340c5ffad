// fuzz_util.c — see fuzz.h.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz.h"

const char *fuzz_dir(void) {
    static char dir[256];
    if (!dir[0]) {
        snprintf(dir, sizeof dir, "%s/dtfuzz-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
        if (!mkdtemp(dir)) perror("mkdtemp"), abort();
    }
    return dir;
}

const char *fuzz_file(const char *name, const void *prefix, size_t prefix_len,
                      const uint8_t *data, size_t size) {
    static char path[512];
    snprintf(path, sizeof path, "%s/%s", fuzz_dir(), name);
    FILE *f = fopen(path, "wb");
    if (!f || (prefix_len && fwrite(prefix, 1, prefix_len, f) != prefix_len) ||
        (size && fwrite(data, 1, size, f) != size) || fclose(f) != 0) {
        perror(path);
        abort();
    }
    return path;
}

void fuzz_verdict(const char *reader, int rc, const dt_error *err, const char *path) {
    if (rc == 0) return;
    if (err->code != DT_EXIT_USAGE) {
        fprintf(stderr, "%s: rejected with code %d (want %d, bad input): %s\n", reader,
                err->code, DT_EXIT_USAGE, err->msg);
        abort();
    }
    if (!err->msg[0] || (path && !strstr(err->msg, path))) {
        fprintf(stderr, "%s: the message does not name the file %s: '%s'\n", reader,
                path ? path : "", err->msg);
        abort();
    }
}
