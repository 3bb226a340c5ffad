// replay.c — a harness of tests/fuzz without libFuzzer: every file named on the command
// line, or found in a directory named there, goes through LLVMFuzzerTestOneInput once. The
// committed corpora (seeds and every input a campaign found) run this way in the ordinary
// test suite, with the ordinary compiler. Prints "replayed N inputs".
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

static long one(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return perror(path), exit(1), 0;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *b = malloc(n ? (size_t)n : 1);
    if (n && fread(b, 1, (size_t)n, f) != (size_t)n) perror(path), exit(1);
    fclose(f);
    LLVMFuzzerTestOneInput(b, (size_t)n);
    free(b);
    return 1;
}

int main(int argc, char **argv) {
    long count = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) != 0) return perror(argv[i]), 1;
        if (!S_ISDIR(st.st_mode)) {
            count += one(argv[i]);
            continue;
        }
        DIR *d = opendir(argv[i]);
        for (struct dirent *e; d && (e = readdir(d));) {
            if (e->d_name[0] == '.') continue;
            char p[4096];
            snprintf(p, sizeof p, "%s/%s", argv[i], e->d_name);
            count += one(p);
        }
        if (d) closedir(d);
    }
    printf("replayed %ld inputs\n", count);
    return count ? 0 : 1;
}
