// dt.c — error records and checked allocation (see dt.h).
#include "dt.h"

#include <stdarg.h>
#include <string.h>
#include <time.h>

int dt_fail(dt_error *err, int code, const char *fmt, ...) {
    if (err) {
        err->code = code;
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
    }
    return -1;
}

void dt_error_clear(dt_error *err) {
    if (err) {
        err->code = 0;
        err->msg[0] = '\0';
    }
}

void *dt_malloc_check(size_t size, const char *file, int line) {
    void *p = malloc(size ? size : 1);
    if (!p) {
        fprintf(stderr, "dtlab: out of memory allocating %zu bytes at %s:%d\n", size, file, line);
        exit(DT_EXIT_RUNTIME);
    }
    return p;
}

void *dt_calloc_check(size_t n, size_t size, const char *file, int line) {
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p) {
        fprintf(stderr, "dtlab: out of memory allocating %zu x %zu bytes at %s:%d\n", n, size,
                file, line);
        exit(DT_EXIT_RUNTIME);
    }
    return p;
}

FILE *dt_fopen_check(const char *path, const char *mode, const char *file, int line) {
    FILE *f = fopen(path, mode);
    if (!f) {
        fprintf(stderr, "dtlab: cannot open %s (mode %s) at %s:%d\n", path, mode, file, line);
        exit(DT_EXIT_RUNTIME);
    }
    return f;
}

double dt_now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}
