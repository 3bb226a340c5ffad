// fuzz_util.c — see fuzz.h.
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz.h"

static char dir[256];

static void remove_dir(void) {  // at exit: the files fuzz_file wrote, then the directory
    DIR *d = opendir(dir);
    for (struct dirent *e; d && (e = readdir(d));) {
        char p[600];
        if (e->d_name[0] == '.') continue;
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        unlink(p);
    }
    if (d) closedir(d);
    rmdir(dir);
}

const char *fuzz_dir(void) {
    if (!dir[0]) {  // memory, not disk: the input is written anew for every execution
        const char *base = getenv("TMPDIR") ? getenv("TMPDIR")
                           : access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
        snprintf(dir, sizeof dir, "%s/dtfuzz-XXXXXX", base);
        if (!mkdtemp(dir)) perror("mkdtemp"), abort();
        atexit(remove_dir);
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
