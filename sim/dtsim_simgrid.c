// dtsim_simgrid.c — running SimGrid for dtsim (sim/dtsim_run.c builds the command): the rank
// program and the speed-only preloads found beside dtsim (or the build's copies), smpirun in a
// process group of its own, a signal to dtsim (Ctrl-C, a timeout) passed on to that group, and
// SimGrid's resident memory watched so that it is stopped before the kernel would kill it.
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "dtsim.h"

#ifndef DT_RANK_SO
#define DT_RANK_SO "dtsim_rank.so"
#endif
#ifndef DT_MALLOC_SO  // the build found no jemalloc: glibc's malloc unless DTSIM_MALLOC names one
#define DT_MALLOC_SO NULL
#endif

// A file installed next to the dtsim executable, else the build's copy.
static char *beside_dtsim(const char *name, const char *fallback) {
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 64);
    if (n > 0) {
        self[n] = 0;
        char *slash = strrchr(self, '/');
        if (slash) {
            strcpy(slash + 1, name);
            if (access(self, R_OK) == 0) return strdup(self);
        }
    }
    return strdup(fallback);
}

char *dtsim_rank_program_path(void) {
    const char *env = getenv("DTSIM_RANK_SO");
    if (env && *env) return strdup(env);
    return beside_dtsim("dtsim_rank.so", DT_RANK_SO);
}

// SimGrid runs with two libraries preloaded, each only for speed (same results without):
// - sim/cputime_shim.c (its comment says why); DTSIM_CPUTIME_SHIM=0 turns it off, a path
//   replaces it;
// - jemalloc, where the build found it (DT_MALLOC_SO): SimGrid allocates and frees several
//   small objects per simulated message, and with glibc's malloc a 4096-GPU rhd run took
//   1.5x as long (bench/DTSIM-SPEED.md, 2026-11-27 "a faster malloc"); DTSIM_MALLOC=0 turns
//   it off, a path replaces it (another allocator, e.g. mimalloc).
static void preload(const char *var, const char *name, const char *fallback) {
    const char *env = getenv(var);
    if (env && !strcmp(env, "0")) return;
    if (!(env && *env) && !fallback) return;
    char *lib = env && *env ? strdup(env)
                : name      ? beside_dtsim(name, fallback)
                            : strdup(fallback);
    if (access(lib, R_OK) == 0) {
        const char *old = getenv("LD_PRELOAD");
        char *v = mallocCheck(strlen(lib) + (old ? strlen(old) : 0) + 2);
        sprintf(v, "%s%s%s", lib, old && *old ? ":" : "", old && *old ? old : "");
        setenv("LD_PRELOAD", v, 1);
        free(v);
    } else if (env && *env) {
        fprintf(stderr, "dtsim: %s=%s: cannot read it; running without it (slower, same "
                "results)\n", var, env);
    }
    free(lib);
}

static void preload_speedups(void) {
    preload("DTSIM_CPUTIME_SHIM", "dtsim_cputime.so", DT_CPUTIME_SO);
    preload("DTSIM_MALLOC", NULL, DT_MALLOC_SO);  // a system library, not one beside dtsim
    if (getenv("DTSIM_VERBOSE"))
        fprintf(stderr, "dtsim: SimGrid runs with LD_PRELOAD=%s\n",
                getenv("LD_PRELOAD") ? getenv("LD_PRELOAD") : "");
}

// A signal while SimGrid runs (Ctrl-C, a timeout's SIGTERM, a closed terminal): SimGrid's
// process group is stopped, the caller removes the run's folder, and dtsim then ends as the
// signal would have ended it (dtsim_end_if_signalled). The one mutable global of dtsim, set by
// the handler only.
static volatile sig_atomic_t g_signal;
static void on_signal(int s) { g_signal = s; }
static const int g_sigs[3] = {SIGINT, SIGTERM, SIGHUP};

void dtsim_end_if_signalled(void) {
    if (!g_signal) return;
    signal(g_signal, SIG_DFL);
    raise(g_signal);
}

// A process's proportional share of memory (bytes; -1: unreadable): its Pss, in which a
// page it maps n times counts 1/n. SimGrid's folded shared mallocs (sim/rank.c's arena) map
// one file block at every 16 MiB of the arena: the resident set counts each mapping again
// (11.6 GB for 1024 GPUs of gpt3-175b, whose SimGrid holds 0.12 GB of its own), Pss once.
static double pss_of(const char *pid) {
    char path[300], line[256];
    snprintf(path, sizeof path, "/proc/%s/smaps_rollup", pid);
    FILE *f = fopen(path, "r");
    double kb = -1;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "Pss: %lf kB", &kb) == 1) break;
    if (f) fclose(f);
    return kb < 0 ? -1 : kb * 1024.0;
}

// The memory of process group g (bytes), every process of it, from /proc: resident (cheap),
// or with `pss` each process's Pss where the kernel gives it (a page table's walk)
static double group_mem(pid_t g, int pss) {
    DIR *d = opendir("/proc");
    struct dirent *e;
    double sum = 0;
    while (d && (e = readdir(d))) {
        char path[300], buf[1024];
        if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
        snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
        FILE *f = fopen(path, "r");
        if (!f) continue;
        size_t n = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[n] = 0;
        const char *p = strrchr(buf, ')');  // after the command name: state ppid pgrp ...
        long pgrp = 0, rss = 0;
        if (!p || sscanf(p + 2, "%*c %*d %ld %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d "
                         "%*d %*d %*d %*d %*u %*u %ld", &pgrp, &rss) != 2 || pgrp != g)
            continue;
        double b = pss ? pss_of(e->d_name) : -1;
        sum += b >= 0 ? b : (double)rss * (double)sysconf(_SC_PAGESIZE);
    }
    if (d) closedir(d);
    return sum;
}

#define SIMGRID_MEMORY_SHARE 0.85  // of physical memory SimGrid may hold before it is stopped

// The bytes SimGrid may hold: DTSIM_MEMORY_LIMIT_GIB when set (a machine shared with other
// work, and the tests), else SIMGRID_MEMORY_SHARE of ram
double dtsim_simgrid_memory_limit(double ram) {
    const char *e = getenv("DTSIM_MEMORY_LIMIT_GIB");
    double g = e && *e ? strtod(e, NULL) : 0;
    return g > 0 ? g * 1073741824.0 : SIMGRID_MEMORY_SHARE * ram;
}

int dtsim_simgrid_run(char *const *argv, const char *out_path, double ram, double *peak) {
    fflush(stdout);  // or the child would write our buffered lines again
    fflush(stderr);
    struct sigaction sa, old[3];
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;  // no SA_RESTART: waitpid returns on the signal
    sigemptyset(&sa.sa_mask);
    for (int i = 0; i < 3; i++) sigaction(g_sigs[i], &sa, &old[i]);
    pid_t pid = fork();
    if (pid == 0) {
        for (int i = 0; i < 3; i++) sigaction(g_sigs[i], &old[i], NULL);
        setpgid(0, 0);  // smpirun and SimGrid: one group, stopped together
        preload_speedups();
        FILE *f = freopen(out_path, "w", stdout);
        (void)f;
        execvp(argv[0], argv);
        fprintf(stderr, "dtsim: cannot run %s: %s (install simgrid, or set DTSIM_SMPIRUN)\n",
                argv[0], strerror(errno));
        _exit(127);
    }
    if (pid > 0) setpgid(pid, pid);
    // wait, watching SimGrid's memory: stopped before the kernel would kill it (the estimate
    // of bench/DTSIM-SPEED.md counts GPUs, not a large model's buffers)
    int status = 0, sent = 0, over = 0, polls = 0;
    *peak = 0;
    for (pid_t w = 0; pid > 0 && w != pid;) {
        w = waitpid(pid, &status, WNOHANG);
        if (w < 0 && errno != EINTR) break;
        if (g_signal && !sent) kill(-pid, SIGTERM), sent = 1;
        if (w == 0) {  // (Pss only when the resident set is over the limit: one in ten)
            double lim = dtsim_simgrid_memory_limit(ram), mem = group_mem(pid, 0);
            if (ram > 0 && mem > lim) mem = polls++ % 10 ? 0 : group_mem(pid, 1);
            if (mem > *peak) *peak = mem;
            if (ram > 0 && mem > lim && !sent)
                kill(-pid, SIGKILL), sent = over = 1;
            struct timespec ts = {0, 100000000};  // 0.1 s
            nanosleep(&ts, NULL);
        }
    }
    for (int i = 0; i < 3; i++) sigaction(g_sigs[i], &old[i], NULL);
    if (g_signal) return 128 + g_signal;
    if (over) return -1;
    return pid > 0 && WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

