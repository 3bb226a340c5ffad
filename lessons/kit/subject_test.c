// subject_test.c — the kit's split grader (subject.h) tried from the student's side: one
// source, two programs. Built with -DSUBJECT_SIDE it is a subject whose handlers do what a
// submission that wants its grade might (report what it can see, print verdict lines and
// close its output, kill its parent, exit 0, never answer, write a forged frame, write a
// file or trace its parent); without,
// it is the judge that calls one of them (argv[1]) and prints what it received.
// kit/subject_test.sh runs the cases and checks the judge's status and output.
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "subject.h"

enum { T_SEE, T_FORGE, T_EXIT0, T_HANG, T_BAD, T_CALLBACK, T_ESCAPE, T_COUNT };

#ifdef SUBJECT_SIDE
extern char **environ;

// what the subject sees: its variables, its uid, its open descriptors, and whether its
// stdout is the file the judge's is (the request carries the judge's st_dev, st_ino)
static void see(subject_buf *req, subject_buf *rep) {
    uint64_t dev = sb_get_u64(req), ino = sb_get_u64(req);
    char line[512];
    for (char **e = environ; *e; e++) {
        snprintf(line, sizeof line, "env %.400s\n", *e);
        sb_put(rep, line, strlen(line));
    }
    snprintf(line, sizeof line, "uid %d\n", (int)getuid());
    sb_put(rep, line, strlen(line));
    DIR *d = opendir("/proc/self/fd");
    for (struct dirent *x; d && (x = readdir(d));)
        if (x->d_name[0] != '.' && atoi(x->d_name) != dirfd(d)) {
            snprintf(line, sizeof line, "fd %s\n", x->d_name);
            sb_put(rep, line, strlen(line));
        }
    if (d) closedir(d);
    struct stat st;
    fstat(1, &st);
    snprintf(line, sizeof line, "stdout %s\n",
             (uint64_t)st.st_dev == dev && (uint64_t)st.st_ino == ino ? "shared" : "own");
    sb_put(rep, line, strlen(line));
}
// a full score on its output, its output closed, its parent killed; then a normal reply
static void forge(subject_buf *req, subject_buf *rep) {
    (void)req;
    puts("PASS forged_check everything");
    puts("# 9 of 9 checks passed");
    fflush(stdout);
    int z = open("/dev/null", O_WRONLY);
    dup2(z, 1), dup2(z, 2);
    kill(getppid(), SIGKILL);
    sb_put(rep, "answered\n", 9);
}
static void exit0(subject_buf *req, subject_buf *rep) {
    (void)req, (void)rep;
    puts("PASS forged_check before exiting");
    exit(0);
}
static void hang(subject_buf *req, subject_buf *rep) {
    (void)req, (void)rep;
    for (;;) pause();
}
// a frame header of its own on the reply channel: 1 GiB announced
static void bad(subject_buf *req, subject_buf *rep) {
    (void)req, (void)rep;
    unsigned char h[12] = {0};
    uint64_t n = 1ull << 30;
    memcpy(h + 4, &n, 8);
    if (write(4, h, 12) != 12) exit(1);
    pause();
}

// asks the judge twice (its callback doubles a number) before it replies: 3 -> 6 -> 12
static void callback(subject_buf *req, subject_buf *rep) {
    (void)req;
    subject_buf q = {0}, a = {0};
    uint64_t v = 3;
    for (int i = 0; i < 2; i++) {
        q.len = 0;
        sb_u64(&q, v);
        subject_callback(0, &q, &a);
        v = sb_get_u64(&a);
    }
    char line[64];
    snprintf(line, sizeof line, "callbacks gave %llu\n", (unsigned long long)v);
    sb_put(rep, line, strlen(line));
}

// reach past the channel: whether Landlock is there (its ABI), then create a file in /tmp
// (anyone's to write) and in / , and attach to the judge with ptrace and read its
// environment; each line says whether it was refused
static void escape(subject_buf *req, subject_buf *rep) {
    (void)req;
    char line[256], path[64];
    snprintf(line, sizeof line, "landlock abi %ld\n", syscall(444, NULL, 0, 1u));
    sb_put(rep, line, strlen(line));
    const char *dirs[2] = {"/tmp", ""};
    for (int i = 0; i < 2; i++) {
        snprintf(path, sizeof path, "%s/dtlab-subject-escape-%d", dirs[i], (int)getpid());
        int fd = open(path, O_CREAT | O_WRONLY | O_EXCL, 0644);
        snprintf(line, sizeof line, "create %s: %s\n", i ? "/" : "/tmp",
                 fd < 0 ? "refused" : "done");
        if (fd >= 0) close(fd), unlink(path);
        sb_put(rep, line, strlen(line));
    }
    pid_t judge = getppid();
    long t = ptrace(PTRACE_ATTACH, judge, NULL, NULL);
    if (!t) ptrace(PTRACE_DETACH, judge, NULL, NULL);
    snprintf(line, sizeof line, "ptrace judge: %s\n", t ? "refused" : "done");
    sb_put(rep, line, strlen(line));
    snprintf(path, sizeof path, "/proc/%d/environ", (int)judge);
    int fd = open(path, O_RDONLY);
    snprintf(line, sizeof line, "read judge environ: %s\n", fd < 0 ? "refused" : "done");
    if (fd >= 0) close(fd);
    sb_put(rep, line, strlen(line));
}

int main(void) {
    const subject_handler h[T_COUNT] = {see, forge, exit0, hang, bad, callback, escape};
    return subject_serve(h, T_COUNT);
}
#else
static void doubler(subject_buf *req, subject_buf *rep) { sb_u64(rep, 2 * sb_get_u64(req)); }

int main(int argc, char **argv) {
    const char *names[T_COUNT] = {"see", "forge", "exit0", "hang", "bad", "callback", "escape"};
    int t = 0;
    while (argc == 2 && t < T_COUNT && strcmp(argv[1], names[t])) t++;
    if (argc != 2 || t == T_COUNT) {
        fprintf(stderr, "usage: subject_test see|forge|exit0|hang|bad|callback|escape\n");
        return 2;
    }
    subject_buf req = {0}, rep = {0};
    struct stat st;
    fstat(1, &st);
    sb_u64(&req, (uint64_t)st.st_dev), sb_u64(&req, (uint64_t)st.st_ino);
    const subject_handler cb[1] = {doubler};
    subject_call_cb(t == T_CALLBACK ? 7 : 0, (uint32_t)t, &req, &rep, names[t], cb, 1);
    printf("judge: reply of %zu bytes\n", rep.len);
    fwrite(rep.p, 1, rep.len, stdout);
    printf("judge: still here\n");
    return 0;
}
#endif
