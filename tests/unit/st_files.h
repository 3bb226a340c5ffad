// st_files.h — what the safetensors tests (test_safetensors.c, test_safetensors_reject.c)
// share: a fresh directory per run, whole-file reads and writes, a safetensors file assembled
// by hand (le64 header length, header text, data), and the check that a file is refused.
// Header-only (static functions), because the unit-test glob builds one program per test_*.c.
#ifndef DT_TEST_ST_FILES_H
#define DT_TEST_ST_FILES_H

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "safetensors.h"
#include "testutil.h"

static char g_dir[64];  // a fresh directory per run (tests may hold globals; nn/ may not)

static inline void path_in(char *out, size_t n, const char *name) {
    snprintf(out, n, "%s/%s", g_dir, name);
}

static inline void write_bytes(const char *path, const void *p, size_t n) {
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(p, 1, n, f), n);
    assert_int_equal(fclose(f), 0);
}

static inline unsigned char *read_bytes(const char *path, size_t *n) {
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long sz = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *p = malloc((size_t)sz + 1);
    assert_int_equal(fread(p, 1, (size_t)sz, f), (size_t)sz);
    fclose(f);
    *n = (size_t)sz;
    return p;
}

// A safetensors file assembled by hand: le64(hlen), header text, data.
static inline void write_st_raw(const char *path, uint64_t hlen, const char *header, const void *data,
                         size_t dlen) {
    size_t n = strlen(header);
    unsigned char *buf = malloc(8 + n + dlen + 1);
    for (int k = 0; k < 8; k++) buf[k] = (unsigned char)(hlen >> (8 * k));
    memcpy(buf + 8, header, n);
    if (dlen) memcpy(buf + 8 + n, data, dlen);
    write_bytes(path, buf, 8 + n + dlen);
    free(buf);
}
static inline void write_st(const char *path, const char *header, const void *data, size_t dlen) {
    write_st_raw(path, strlen(header), header, data, dlen);
}

// dt_st_open(path) must fail with code, a message naming the file and containing `needle`.
static inline void expect_reject(const char *path, int code, const char *needle) {
    dt_error err = {0};
    dt_st_file *f = dt_st_open(path, &err);
    if (f) {
        dt_st_close(f);
        fail_msg("%s was accepted, expected a rejection mentioning '%s'", path, needle);
    }
    printf("# rejected: %s\n", err.msg);
    assert_int_equal(err.code, code);
    if (!strstr(err.msg, path)) fail_msg("message does not name the file: %s", err.msg);
    if (needle && !strstr(err.msg, needle)) {
        fail_msg("message lacks '%s': %s", needle, err.msg);
    }
}

static inline int count_dir_entries(const char *dir, const char *needle) {
    DIR *d = opendir(dir);
    assert_non_null(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.' && (!e->d_name[1] || (e->d_name[1] == '.' && !e->d_name[2])))
            continue;
        if (!needle || strstr(e->d_name, needle)) n++;
    }
    closedir(d);
    return n;
}

// The group fixture: g_dir made, emptied and removed.
static inline int st_setup(void **state) {
    (void)state;
    snprintf(g_dir, sizeof g_dir, "/tmp/dt_test_st_XXXXXX");
    return mkdtemp(g_dir) ? 0 : -1;
}

static inline int st_teardown(void **state) {
    (void)state;
    DIR *d = opendir(g_dir);
    struct dirent *e;
    char p[512];
    while (d && (e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        snprintf(p, sizeof p, "%s/%s", g_dir, e->d_name);
        unlink(p);
    }
    if (d) closedir(d);
    return rmdir(g_dir);
}

#endif
