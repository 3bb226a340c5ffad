// subject.c — the student's code in a process of its own (subject.h says why and how).
#define _GNU_SOURCE
#include "subject.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

// ---- the byte buffer ----
void sb_put(subject_buf *b, const void *x, size_t n) {
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n) cap *= 2;
        unsigned char *p = realloc(b->p, cap);
        if (!p) {
            fprintf(stderr, "subject: out of memory (%zu bytes)\n", cap);
            subject_stop(3);
        }
        b->p = p, b->cap = cap;
    }
    memcpy(b->p + b->len, x, n);
    b->len += n;
}
void sb_u64(subject_buf *b, uint64_t v) { sb_put(b, &v, sizeof v); }
int sb_get(subject_buf *b, void *x, size_t n) {
    if (b->bad || n > b->len - b->at) {
        b->bad = 1;
        memset(x, 0, n);
        return -1;
    }
    memcpy(x, b->p + b->at, n);
    b->at += n;
    return 0;
}
uint64_t sb_get_u64(subject_buf *b) {
    uint64_t v;
    sb_get(b, &v, sizeof v);
    return v;
}
void sb_free(subject_buf *b) {
    free(b->p);
    memset(b, 0, sizeof *b);
}

// ---- frames: [u32 tag][u64 length][bytes] ----
static int write_all(int fd, const void *p, size_t n) {
    const char *c = p;
    while (n) {
        ssize_t w = write(fd, c, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return -1;
        c += w, n -= (size_t)w;
    }
    return 0;
}
static int put_frame(int fd, uint32_t tag, const subject_buf *b) {
    unsigned char h[12];
    uint64_t n = b ? b->len : 0;
    memcpy(h, &tag, 4), memcpy(h + 4, &n, 8);
    return write_all(fd, h, 12) || (n && write_all(fd, b->p, n)) ? -1 : 0;
}
// Reads n bytes, waiting at most until `deadline` (CLOCK_MONOTONIC seconds; 0: forever).
// 0 read, -1 end of file or error, -2 timed out.
static int read_all(int fd, void *p, size_t n, double deadline) {
    char *c = p;
    while (n) {
        if (deadline > 0) {
            struct timespec ts;
            clock_gettime(CLOCK_MONOTONIC, &ts);
            double left = deadline - (ts.tv_sec + ts.tv_nsec * 1e-9);
            struct pollfd q = {fd, POLLIN, 0};
            int rc = left > 0 ? poll(&q, 1, (int)(left * 1e3) + 1) : 0;
            if (rc < 0 && errno == EINTR) continue;
            if (rc == 0) return -2;
        }
        ssize_t r = read(fd, c, n);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return -1;
        c += r, n -= (size_t)r;
    }
    return 0;
}
// -1 end of file, -2 timed out, -3 malformed (too long); else 0 and the frame in b
static int get_frame(int fd, uint32_t *tag, subject_buf *b, double deadline) {
    unsigned char h[12];
    uint64_t n;
    int rc = read_all(fd, h, 12, deadline);
    if (rc) return rc;
    memcpy(tag, h, 4), memcpy(&n, h + 4, 8);
    if (n > SUBJECT_MAX_FRAME) return -3;
    b->len = b->at = 0, b->bad = 0;
    if (n > b->cap) {
        unsigned char *p = realloc(b->p, n);
        if (!p) return -3;
        b->p = p, b->cap = n;
    }
    b->len = n;
    return n ? read_all(fd, b->p, n, deadline) : 0;
}

// ---- what the judge says when the subject fails: its log's last lines ----
static void log_tail(const char *prefix_note) {
    const char *log = getenv("LESSON_SUBJECT_LOG");
    FILE *f = log ? fopen(log, "r") : NULL;
    if (!f) return;
    char buf[4096];
    fseek(f, 0, SEEK_END);
    long end = ftell(f), from = end > (long)sizeof buf - 1 ? end - (long)sizeof buf + 1 : 0;
    fseek(f, from, SEEK_SET);
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    char *lines[64];
    int k = 0;
    char *line = buf;
    if (from > 0 && (line = strchr(buf, '\n'))) line++;  // a whole first line
    for (char *nl; line && *line; line = nl ? nl + 1 : NULL) {
        nl = strchr(line, '\n');
        if (nl) *nl = 0;
        if (k == 64) memmove(lines, lines + 1, 63 * sizeof *lines), k = 63;
        lines[k++] = line;
    }
    if (k) printf("%s\n", prefix_note);
    for (int i = k > 8 ? k - 8 : 0; i < k; i++) printf("submission| %s\n", lines[i]);
}

// ---- the judge's side of a server subject ----
// One server per slot and process: SMPI's ranks share slot 0 (they run one at a time);
// ranks whose calls call back into a collective take a slot each (subject_call_cb).
typedef struct {
    pid_t pid;
    int to, from;
} server;
static server srvs[SUBJECT_MAX_SLOTS];

static void srv_kill_one(server *v) {
    if (v->pid > 0) kill(-v->pid, SIGKILL), kill(v->pid, SIGKILL);
}
static void srv_kill(void) {
    for (int i = 0; i < SUBJECT_MAX_SLOTS; i++) srv_kill_one(&srvs[i]);
}

// The judge stops with this status (3: the submission crashed, 124: it hung), its subject
// with it; _exit, so that the status is this one under SMPI too (whose exit handler would
// abort the simulation) and no MPI finalisation waits for ranks that will not come.
void subject_stop(int status) {
    fflush(NULL);
    srv_kill();
    _exit(status);
}
static void srv_exit(void) {  // the judge is done: the servers are not needed any more
    for (int i = 0; i < SUBJECT_MAX_SLOTS; i++) {
        server *v = &srvs[i];
        if (v->pid <= 0) continue;
        close(v->to);
        srv_kill_one(v);
        waitpid(v->pid, NULL, 0);
        v->pid = 0;
    }
}

// The environment a subject gets: nothing of the grader's (its seed, its variables, the
// paths of its files), only what a program needs to run and the two OpenBLAS settings the
// machine's environment chose.
static char **subject_env(void) {
    static char *env[8];
    static char core[128], l2[128];
    int k = 0;
    env[k++] = "PATH=/usr/bin:/bin";
    env[k++] = "LANG=C.UTF-8";
    env[k++] = "OMP_NUM_THREADS=1";
    env[k++] = "OPENBLAS_NUM_THREADS=1";
    const char *v;
    if ((v = getenv("OPENBLAS_CORETYPE")) && strlen(v) < 100)
        snprintf(core, sizeof core, "OPENBLAS_CORETYPE=%s", v), env[k++] = core;
    if ((v = getenv("OPENBLAS_L2_SIZE")) && strlen(v) < 100)
        snprintf(l2, sizeof l2, "OPENBLAS_L2_SIZE=%s", v), env[k++] = l2;
    env[k] = NULL;
    return env;
}

// The subject's file system read-only (Landlock, Linux 5.13+; Salaün 2021): with no rule
// given, every way of writing or creating a file is refused to it and what it runs, so it
// cannot write a verdict, a record or the grade's files, whichever user it runs as (the
// grade's own user when not root). Its descriptors 1 and 2 (its log) stay writable: they
// are open. Where the kernel has no Landlock this does nothing, and says so in the log.
#ifndef SYS_landlock_create_ruleset  // (x86-64's numbers, for a libc that predates them)
#define SYS_landlock_create_ruleset 444
#define SYS_landlock_restrict_self 446
#endif
#define DT_LL_WRITE 0x1ff2ULL  // ABI 1: write_file (bit 1), remove_dir .. make_sym (4-12)
#define DT_LL_TRUNCATE (1ULL << 14)  // ABI 3
static void confine_files(void) {
    long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, 1u /* ..._VERSION */);
    struct {
        uint64_t handled_access_fs;
    } attr = {DT_LL_WRITE | (abi >= 3 ? DT_LL_TRUNCATE : 0)};
    int fd = abi >= 1 ? (int)syscall(SYS_landlock_create_ruleset, &attr, sizeof attr, 0u) : -1;
    if (fd < 0 || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
        syscall(SYS_landlock_restrict_self, fd, 0u)) {
        dprintf(2, "subject: no Landlock here (%s): its files are as writable as its user's\n",
                strerror(errno));
    }
    if (fd >= 0) close(fd);
}


static void spawn(server *v) {
    const char *exe = getenv("LESSON_SUBJECT");
    if (!exe || !*exe) {
        printf("grader: LESSON_SUBJECT (the program that runs the student's code) is not set: "
               "grade with lessons/grade, which sets it\n");
        subject_stop(3);
    }
    static char abs_exe[4096];  // the child runs in /: a relative path would not resolve there
    if (realpath(exe, abs_exe)) exe = abs_exe;
    if (access(exe, X_OK)) {
        printf("grader: LESSON_SUBJECT=%s is not a program this grader can run (%s): build "
               "the lesson with lessons/grade, which sets it\n", exe, strerror(errno));
        subject_stop(2);
    }
    const char *log = getenv("LESSON_SUBJECT_LOG");
    int lfd = open(log && *log ? log : "/dev/null", O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    int a[2], b[2];
    if (lfd < 0 || pipe2(a, O_CLOEXEC) || pipe2(b, O_CLOEXEC)) {
        printf("grader: cannot start the submission's process (%s)\n", strerror(errno));
        subject_stop(3);
    }
    char **env = subject_env();
    char *argv[] = {(char *)exe, NULL};
    // not root: the subject runs as this user, who may ptrace or read /proc/<pid>/mem and
    // environ of its own processes; a process that is not dumpable is closed to them
    if (geteuid() != 0) prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
    fflush(stdout), fflush(stderr);
    pid_t pid = fork();
    if (pid == 0) {  // the subject: its own session, another user when root, fds 0-4 only
        setsid();
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        int in = fcntl(a[0], F_DUPFD, 10), out = fcntl(b[1], F_DUPFD, 10);
        int nul = open("/dev/null", O_RDONLY);
        if (in < 0 || out < 0 || nul < 0 || dup2(nul, 0) < 0 || dup2(lfd, 1) < 0 ||
            dup2(lfd, 2) < 0 || dup2(in, 3) < 0 || dup2(out, 4) < 0)
            _exit(127);
        close_range(5, ~0u, 0);
        struct rlimit cpu = {300, 300}, fsize = {64u << 20, 64u << 20}, core = {0, 0};
        setrlimit(RLIMIT_CPU, &cpu), setrlimit(RLIMIT_FSIZE, &fsize), setrlimit(RLIMIT_CORE, &core);
        if (geteuid() == 0 && (setgroups(0, NULL) || setgid(65534) || setuid(65534))) _exit(126);
        if (chdir("/")) _exit(126);
        confine_files();
        execve(exe, argv, env);
        dprintf(2, "subject: cannot run %s: %s\n", exe, strerror(errno));
        _exit(127);
    }
    close(a[0]), close(b[1]), close(lfd);
    if (pid < 0) {
        printf("grader: cannot start the submission's process (fork: %s)\n", strerror(errno));
        subject_stop(3);
    }
    signal(SIGPIPE, SIG_IGN);
    v->pid = pid, v->to = a[1], v->from = b[0];
    static int registered;
    if (!registered++) atexit(srv_exit);
}

void subject_malformed(const char *what) {
    printf("grader: the submission's process returned a malformed reply to %s: a crash, "
           "whatever it printed (its replies are data, never verdicts)\n", what);
    subject_stop(3);
}

// The server stopped answering: say how it ended, with its log's last lines.
static void server_failed(server *v, int rc, const char *what) {
    if (rc == -2) {
        printf("# hang: %s did not return within %s s: the submission's process was stopped "
               "(an endless loop, or a wait for something that never comes?)\n", what,
               getenv("LESSON_SUBJECT_TIMEOUT") ? getenv("LESSON_SUBJECT_TIMEOUT") : "10");
        subject_stop(124);
    }
    if (rc == -3) srv_kill_one(v);
    // the end of its channel: wait a moment for it to exit on its own, then stop it
    int st = 0;
    pid_t w = 0;
    for (int i = 0; i < 50 && (w = waitpid(v->pid, &st, WNOHANG)) == 0; i++) usleep(20000);
    if (w == 0) srv_kill_one(v), waitpid(v->pid, &st, 0);
    v->pid = 0;
    char how[160];
    if (rc == -3)
        snprintf(how, sizeof how, "returned a malformed reply (a frame over %u bytes)",
                 SUBJECT_MAX_FRAME);
    else if (w == 0)
        snprintf(how, sizeof how, "closed its channel to the grader and was stopped");
    else if (WIFSIGNALED(st))
        snprintf(how, sizeof how, "died of signal %d (%s)", WTERMSIG(st), strsignal(WTERMSIG(st)));
    else
        snprintf(how, sizeof how, "exited with status %d", WEXITSTATUS(st));
    log_tail("grader: what the submission's process printed last:");
    printf("grader: the submission's process (the student's code) %s during %s: a crash, "
           "whatever it printed (its output is never a verdict)\n", how, what);
#ifdef DT_SMPI  // a rank program of dtsim's (lesson 07): dtsim shows SimGrid's stderr, not stdout
    fprintf(stderr, "grader: the submission's process (the student's code) %s during %s\n", how,
            what);
#endif
    subject_stop(3);
}

static int callback_slot;
int subject_callback_slot(void) { return callback_slot; }

// The request, then frames until the reply (tag 0): a frame of tag t >= 1 is the
// subject's call back into the grader, answered by callbacks[t - 1] in this process.
void subject_call_cb(int slot, uint32_t fn, const subject_buf *req, subject_buf *reply,
                     const char *what, const subject_handler *callbacks, int n_callbacks) {
    if (slot < 0 || slot >= SUBJECT_MAX_SLOTS) {
        printf("grader: subject slot %d out of range (0..%d)\n", slot, SUBJECT_MAX_SLOTS - 1);
        subject_stop(3);
    }
    server *v = &srvs[slot];
    if (!v->pid) spawn(v);
    if (put_frame(v->to, fn, req)) server_failed(v, -1, what);
    const char *t = getenv("LESSON_SUBJECT_TIMEOUT");
    double secs = t && atof(t) > 0 ? atof(t) : 10;
    subject_buf back = {0};
    for (;;) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        uint32_t tag;
        int rc = get_frame(v->from, &tag, reply, ts.tv_sec + ts.tv_nsec * 1e-9 + secs);
        if (rc) server_failed(v, rc, what);
        reply->at = 0;
        if (tag == 0) break;
        if (tag > (uint32_t)n_callbacks) subject_malformed(what);
        back.len = back.at = 0, back.bad = 0;
        callback_slot = slot;
        callbacks[tag - 1](reply, &back);
        if (reply->bad) subject_malformed(what);
        if (put_frame(v->to, 0, &back)) server_failed(v, -1, what);
    }
    sb_free(&back);
}

void subject_call(uint32_t fn, const subject_buf *req, subject_buf *reply, const char *what) {
    subject_call_cb(0, fn, req, reply, what, NULL, 0);
}

// ---- the server's side ----
int subject_serve(const subject_handler *h, int n) {
    subject_buf req = {0}, reply = {0};
    for (;;) {
        uint32_t tag;
        int rc = get_frame(3, &tag, &req, 0);
        if (rc == -1) return 0;  // the judge is done
        if (rc || tag >= (uint32_t)n) {
            fprintf(stderr, "subject: a malformed request (tag %u)\n", tag);
            return 2;
        }
        reply.len = reply.at = 0;
        h[tag](&req, &reply);
        if (put_frame(4, 0, &reply)) return 0;
    }
}

void subject_callback(uint32_t fn, const subject_buf *req, subject_buf *reply) {
    uint32_t tag;
    if (put_frame(4, fn + 1, req) || get_frame(3, &tag, reply, 0) || tag != 0) exit(0);
    reply->at = 0;
}

// ---- records (under mpirun) ----
static FILE *open_record(int rank, const char *mode) {
    const char *dir = getenv("LESSON_RECORDS");
    if (!dir || !*dir) {
        printf("grader: LESSON_RECORDS (the folder of the submission's results) is not set: "
               "grade with lessons/grade, which sets it\n");
        subject_stop(3);
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/rank-%d", dir, rank);
    if (mode[0] == 'w') return fopen(path, mode);
    // the judge reads what the subject (another user) wrote: a plain file, never a link to
    // one of the judge's (O_NOFOLLOW), nor a fifo that would block it
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) || !S_ISREG(st.st_mode)) {
        if (fd >= 0) close(fd);
        return NULL;
    }
    fcntl(fd, F_SETFL, 0);
    return fdopen(fd, mode);
}

void record_put(int rank, uint32_t tag, const subject_buf *b) {
    static FILE *f;
    if (!f && !(f = open_record(rank, "wb"))) {
        fprintf(stderr, "subject: cannot write its record (%s)\n", strerror(errno));
        subject_stop(3);
    }
    if (put_frame(fileno(f), tag, b)) subject_stop(3);  // unbuffered: what was returned stays
}

int replay_next(int rank, uint32_t tag, subject_buf *b) {
    static FILE *f;
    static int missing;
    if (missing) return -1;
    if (!f && !(f = open_record(rank, "rb"))) return missing = 1, -1;
    uint32_t got;
    int rc = get_frame(fileno(f), &got, b, 0);
    if (rc == -1) return missing = 1, -1;
    if (rc || got != tag) {
        printf("grader: the submission's process wrote a malformed record (a frame of tag %u "
               "where %u was due): a failing grade (its records are data, never verdicts)\n",
               got, tag);
        subject_stop(3);
    }
    b->at = 0;
    return 0;
}

void replay_missing(const char *what, int speak) {
    const char *s = getenv("LESSON_SUBJECT_RC");
    int rc = s ? atoi(s) : -1;
    const char *log = getenv("LESSON_SUBJECT_LOG");
    if (!speak) {
        // the speaking rank says why; mpirun ends the job at the first rank that exits, so
        // the others leave after it has (a silent rank first left the report empty under
        // load: lesson.03.crash_shows_in_the_score)
        sleep(3);
        subject_stop(rc == 124 || rc == 137 ? 124 : 3);
    }
    if (rc == 124 || rc == 137) {
        FILE *f = log ? fopen(log, "r") : NULL;
        char line[2048];
        int said = 0;
        while (f && fgets(line, sizeof line, f))
            if (!strncmp(line, "# hang: ", 8)) fputs(line, stdout), said = 1;
        if (f) fclose(f);
        if (!said)
            printf("# hang: %s never returned: the submission's run was stopped\n", what);
        subject_stop(124);
    }
    log_tail("grader: what the submission's run printed last:");
    printf("grader: the submission's run ended (status %d) before returning %s: a crash, "
           "whatever it printed (its output is never a verdict)\n", rc, what);
    subject_stop(3);
}
