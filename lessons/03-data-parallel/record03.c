// record03.c — lesson 03's records (subject03.h): one file per rank, LESSON_RECORDS/rank-R,
// of frames [u32 tag][u64 length][bytes]. The files are kept in arrays indexed by the rank,
// so that the ranks of an SMPI run, which share one process, each have their own (the
// recording writes them, the judge reads them back).
#define _GNU_SOURCE  // O_NOFOLLOW, O_CLOEXEC
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "subject03.h"

enum { MAX_RANKS = 1024 };

// A rank beyond the arrays ends the program with status 3.
static void check_rank(int rank) {
    if (rank < 0 || rank >= MAX_RANKS) {
        printf("grader: rank %d: lesson 03's records hold ranks 0..%d\n", rank, MAX_RANKS - 1);
        subject_stop(3);
    }
}

// LESSON_RECORDS/rank-R opened with mode ("wb" or "rb"), or NULL; a run without the
// variable ends the program with status 3 (lessons/grade's drivers set it). For reading
// only a plain file, not a link: the folder is the student's run's, and the judge, root
// perhaps, must not read another file of the machine into its messages.
static FILE *open_rank(int rank, const char *mode) {
    const char *dir = getenv("LESSON_RECORDS");
    if (!dir || !*dir) {
        printf("grader: LESSON_RECORDS (the folder of the submission's results) is not set: "
               "grade with lessons/grade, which sets it\n");
        subject_stop(3);
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/rank-%d", dir, rank);
    if (mode[0] == 'w') return fopen(path, mode);
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    struct stat st;
    FILE *f = NULL;
    if (fd >= 0 && !fstat(fd, &st) && S_ISREG(st.st_mode)) f = fdopen(fd, mode);
    if (!f && fd >= 0) close(fd);
    return f;
}

void rec03_put(int rank, uint32_t tag, const subject_buf *b) {
    static FILE *out[MAX_RANKS];  // by rank: SMPI's ranks share these arrays, not an entry
    check_rank(rank);
    FILE *f = out[rank];
    if (!f && !(f = out[rank] = open_rank(rank, "wb"))) {
        fprintf(stderr, "subject: cannot write its record (%s)\n", strerror(errno));
        subject_stop(3);
    }
    uint64_t n = b->len;
    if (fwrite(&tag, 4, 1, f) != 1 || fwrite(&n, 8, 1, f) != 1 ||
        (n && fwrite(b->p, 1, n, f) != n) || fflush(f)) {
        fprintf(stderr, "subject: cannot write its record (%s)\n", strerror(errno));
        subject_stop(3);
    }
}

int rec03_next(int rank, uint32_t tag, subject_buf *b) {
    static FILE *in[MAX_RANKS];
    static char ended[MAX_RANKS];
    check_rank(rank);
    if (ended[rank]) return -1;
    FILE *f = in[rank];
    if (!f && !(f = in[rank] = open_rank(rank, "rb"))) return ended[rank] = 1, -1;
    uint32_t got;
    uint64_t n;
    if (fread(&got, 4, 1, f) != 1 || fread(&n, 8, 1, f) != 1)  // the end (or a cut header)
        return ended[rank] = 1, -1;
    b->len = b->at = 0, b->bad = 0;
    if (got != tag || n > SUBJECT_MAX_FRAME) {
        printf("grader: the submission's process wrote a malformed record (a frame of tag %u "
               "where %u was due): a failing grade (its records are data, never verdicts)\n",
               got, tag);
        subject_stop(3);
    }
    unsigned char chunk[4096];
    for (uint64_t left = n; left;) {  // in chunks: a cut frame is the end, not an allocation
        size_t k = left < sizeof chunk ? (size_t)left : sizeof chunk;
        if (fread(chunk, 1, k, f) != k) return ended[rank] = 1, -1;
        sb_put(b, chunk, k);
        left -= k;
    }
    b->at = 0;
    return 0;
}
