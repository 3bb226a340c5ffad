// dtsim_jobs.c — the independent simulations of `dtsim sweep` and of `dtsim plan`'s
// confirmations, -j at a time in forked processes (each child runs the same code the
// sequential run does and hands its result back through a pipe, so the output is the same
// bytes), or in slices: --slice K/N runs only the runs i with i % N == K (round robin, so
// each slice gets small and large runs alike) and saves each result in --results DIR;
// --gather DIR reads them back. A result file is the dtsim binary's own result struct behind
// a header (magic, its size, the run's index and count, what the run is): readable by the
// same dtsim build only, which the script's tasks are (it names this binary's path).
// Not here: what a run is (dtsim.c's sweep, dtsim_plan_out.c's confirmation).
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "atomic_file.h"
#include "dtsim_jobs.h"
#include "opt_table.h"

// --slice K/N: task K of N
static int slice(const dt_opt *d, const char *what, const char *s, void *v, dt_error *err) {
    dtsim_jobs_opts *j = v;
    char tail;
    if (sscanf(s, "%d/%d%c", &j->slice_k, &j->slice_n, &tail) != 2 || j->slice_n < 1 ||
        j->slice_n > 100000 || j->slice_k < 0 || j->slice_k >= j->slice_n)
        return dt_opt_bad(err, what, s, d->want);
    return 0;
}

// --results, --gather, --slurm: a directory, with room for the file names under it
static int dir(const dt_opt *d, const char *what, const char *s, void *v, dt_error *err) {
    if (!s[0] || strlen(s) >= d->size - 32) return dt_opt_bad(err, what, s, d->want);
    snprintf(v, d->size, "%s", s);
    return 0;
}

#define AT(member) DT_OPT_AT(dtsim_jobs_opts, member)
#define DIR_WANT "a directory path (under 480 characters)"

static const dt_opt jobs_rows[] = {
    {.type = DT_OPT_SECTION, .help = "parallel and cluster runs (independent simulations: "
     "docs/dtsim.md, \"Many runs\"):"},
    {.name = "j", .arg = "N", .type = DT_OPT_INT, AT(jobs), .lo = 1, .hi = 256,
     .want = "a count of 1..256",
     .help = "N simulations at a time on this machine (1); the same output"},
    {.name = "slurm", .arg = "DIR", .type = DT_OPT_CUSTOM, AT(slurm), .parse = dir,
     .want = DIR_WANT, .help = "write DIR/dtsim.sbatch (a Slurm job array) and\n"
     "DIR/dtsim-srun.sh (srun tasks), each task a slice of the runs;\nprint the gather"},
    {.name = "slurm-tasks", .arg = "N", .type = DT_OPT_INT, AT(slurm_tasks), .lo = 1,
     .hi = 100000, .want = "a count of 1..100000", .help = "the array's tasks (one per run)"},
    {.name = "submit", .type = DT_OPT_SWITCH, AT(submit), .help = "sbatch it"},
    {.name = "slice", .arg = "K/N", .type = DT_OPT_CUSTOM, .offset = 0,
     .size = sizeof(dtsim_jobs_opts), .parse = slice,
     .want = "K/N with 0 <= K < N (task K of N)",
     .help = "what each task runs: the runs i with i % N == K, with"},
    {.name = "results", .arg = "DIR", .type = DT_OPT_CUSTOM, AT(results), .parse = dir,
     .want = DIR_WANT, .help = "where a slice saves each run's result"},
    {.name = "gather", .arg = "DIR", .type = DT_OPT_CUSTOM, AT(gather), .parse = dir,
     .want = DIR_WANT,
     .help = "the slices' results into the table the one-machine run prints"},
};
_Static_assert(sizeof jobs_rows / sizeof *jobs_rows == DTSIM_JOBS_ROWS, "dtsim_jobs.h's count");

dt_opt_table dtsim_jobs_table(dtsim_jobs_opts *j, unsigned char *given) {
    return (dt_opt_table){.opts = jobs_rows, .n = DTSIM_JOBS_ROWS, .base = j, .given = given};
}

int dtsim_jobs_check(const dtsim_jobs_opts *j, const char *prog) {
    const char *why = NULL;
    if (j->slice_n && !j->results[0]) why = "--slice K/N needs --results DIR (where its results go)";
    else if (j->results[0] && !j->slice_n) why = "--results DIR goes with --slice K/N";
    else if (j->gather[0] && (j->slice_n || j->slurm[0]))
        why = "--gather reads the slices' results: not with --slice or --slurm";
    else if (j->slurm[0] && j->slice_n) why = "--slurm writes the slices' script: not with --slice";
    else if ((j->submit || j->slurm_tasks) && !j->slurm[0])
        why = "--submit and --slurm-tasks go with --slurm DIR";
    if (why) fprintf(stderr, "%s: %s\n", prog, why);
    if (!why && j->slice_n) {  // the directory must be there (the job script makes it)
        struct stat st;
        if (stat(j->results, &st) || !S_ISDIR(st.st_mode))
            return fprintf(stderr, "%s: option --results: '%s' is not a directory\n", prog,
                           j->results), 2;
    }
    return why ? 2 : 0;
}

// ---- result files ----

typedef struct {
    char magic[8];       // "DTSIMR1"
    uint32_t size;       // sizeof the result struct of the build that wrote it
    int32_t index, n;
    char key[512];       // what the run is (its flags)
} res_header;

static void res_path(const char *dir, const char *what, int i, char *buf, size_t n) {
    snprintf(buf, n, "%s/%s-%d.res", dir, what, i);
}

static int res_save(const dtsim_jobs_opts *j, const dtsim_job_set *s, int i, int n,
                    const void *r, size_t size) {
    res_header h;
    memset(&h, 0, sizeof h);
    memcpy(h.magic, "DTSIMR1", 8);
    h.size = (uint32_t)size, h.index = i, h.n = n;
    s->key(s->ctx, i, h.key, sizeof h.key);
    char path[1024];
    res_path(j->results, s->what, i, path, sizeof path);
    dt_atomic_file a;
    dt_error err;
    if (dt_atomic_open(&a, path, "--results", &err))
        return fprintf(stderr, "dtsim: %s\n", err.msg), 1;
    if (fwrite(&h, sizeof h, 1, a.f) != 1 || fwrite(r, size, 1, a.f) != 1 ||
        dt_atomic_finish(&a, &err) || dt_atomic_commit(&a, &err)) {
        dt_atomic_abort(&a);
        return fprintf(stderr, "dtsim: --results: cannot write %s\n", path), 1;
    }
    fprintf(stderr, "[dtsim] slice %d/%d: run %d of %d saved in %s\n", j->slice_k, j->slice_n,
            i, n, path);
    return 0;
}

// Run i's result from --gather DIR: 0, 1 missing, or 2 with a message (not this command's)
static int res_load(const dtsim_jobs_opts *j, const dtsim_job_set *s, int i, int n, void *r,
                    size_t size) {
    char path[1024], key[512];
    res_path(j->gather, s->what, i, path, sizeof path);
    FILE *f = fopen(path, "rb");
    if (!f) return 1;
    res_header h;
    int ok = fread(&h, sizeof h, 1, f) == 1 && fread(r, size, 1, f) == 1 && fgetc(f) == EOF;
    fclose(f);
    s->key(s->ctx, i, key, sizeof key);
    h.key[sizeof h.key - 1] = 0;
    if (!ok || memcmp(h.magic, "DTSIMR1", 8) || h.size != size) {
        fprintf(stderr, "dtsim: --gather: %s is not a result of this dtsim build\n", path);
        return 2;
    }
    if (h.index != i || h.n != n || strcmp(h.key, key)) {
        fprintf(stderr, "dtsim: --gather: %s is run %d of %d (%s), not run %d of %d of this "
                        "command (%s): gather with the command the slices ran\n", path,
                h.index, h.n, h.key, i, n, key);
        return 2;
    }
    return 0;
}

static int gather(const dtsim_jobs_opts *j, int n, const dtsim_job_set *s, char *res,
                  size_t size, size_t stride) {
    int missing = 0, first = -1, rc = 0;
    int *refused = calloc((size_t)n + 1, sizeof *refused);
    if (!refused) return fprintf(stderr, "dtsim: out of memory\n"), 1;
    for (int i = 0; i < n && !rc; i++) {
        rc = s->prepare(s->ctx, i);
        if (rc == 1) refused[i] = 1, rc = 0;  // as the run that refused it: done with rc 2
        if (rc || refused[i]) continue;
        rc = res_load(j, s, i, n, res + (size_t)i * stride, size);
        if (rc == 1 && first < 0) first = i;
        missing += rc == 1;
        rc = rc == 2 ? 2 : 0;
    }
    if (!rc && missing) {
        char path[1024];
        res_path(j->gather, s->what, first, path, sizeof path);
        fprintf(stderr, "dtsim: --gather %s: %d of %d results missing (the first: %s): their "
                        "slices have not finished or failed (their logs: %s/slice-*.log)\n",
                j->gather, missing, n, path, j->gather);
        rc = 1;
    }
    for (int i = 0; i < n && !rc; i++)
        rc = s->done(s->ctx, i, refused[i] ? 2 : 0, res + (size_t)i * stride);
    free(refused);
    return rc;
}

// ---- running ----

typedef struct {
    pid_t pid;
    int fd, i;
} child;

int dtsim_jobs_run(const dtsim_jobs_opts *j, int n, const dtsim_job_set *s, void *res,
                   size_t size, size_t stride) {
    char *rs = res;
    if (j->gather[0]) return gather(j, n, s, rs, size, stride);
    int *state = calloc((size_t)n + 1, sizeof *state);  // 0 waiting, 1 running, 2 done
    int *rcs = calloc((size_t)n + 1, sizeof *rcs);
    child ch[256];
    int jobs = j->jobs > 0 ? j->jobs : 1, running = 0, next = 0, reported = 0, stop = 0;
    if (!state || !rcs) return free(state), free(rcs), fprintf(stderr, "dtsim: out of memory\n"), 1;
    for (;;) {
        while (!stop && running < jobs && next < n) {
            int i = next++;
            if (j->slice_n && i % j->slice_n != j->slice_k) {
                state[i] = 3;  // another slice's
                continue;
            }
            int rc = s->prepare(s->ctx, i);
            if (rc) {
                state[i] = 2, rcs[i] = rc == 1 ? 2 : rc;
                if (rc != 1) stop = rc;
                continue;
            }
            if (s->started) s->started(s->ctx, i);
            void *r = rs + (size_t)i * stride;
            if (jobs == 1) {  // in this process: the sequential run
                rcs[i] = s->simulate(s->ctx, i, r);
                state[i] = 2;
                break;
            }
            int pfd[2];
            if (pipe(pfd)) {
                state[i] = 2, rcs[i] = stop = 1;
                fprintf(stderr, "dtsim: -j: no pipe for a child process\n");
                break;
            }
            fflush(stdout);
            fflush(stderr);
            pid_t pid = fork();
            if (pid == 0) {
                close(pfd[0]);
                int rc = s->simulate(s->ctx, i, r);
                const char *p = r;
                for (size_t got = 0; !rc && got < size;) {
                    ssize_t k = write(pfd[1], p + got, size - got);
                    if (k <= 0) rc = 1;
                    else got += (size_t)k;
                }
                _exit(rc);
            }
            close(pfd[1]);
            if (pid < 0) {
                close(pfd[0]);
                state[i] = 2, rcs[i] = stop = 1;
                fprintf(stderr, "dtsim: -j: cannot start a process for run %d\n", i);
                break;
            }
            ch[running++] = (child){pid, pfd[0], i};
            state[i] = 1;
        }
        // report in index order what has finished; a slice saves its results
        while (reported < n && state[reported] >= 2) {
            int i = reported++;
            if (state[i] == 3) continue;
            void *r = rs + (size_t)i * stride;
            if (!rcs[i] && j->slice_n && res_save(j, s, i, n, r, size)) rcs[i] = 1;
            int rc = s->done(s->ctx, i, rcs[i], r);
            if (rc && !stop) stop = rc;
        }
        if (!running && (stop || next >= n)) break;
        if (!running) continue;
        int st;
        pid_t pid = wait(&st);
        if (pid < 0) break;
        int c = 0;
        while (c < running && ch[c].pid != pid) c++;
        if (c == running) continue;  // not one of ours
        int i = ch[c].i;
        size_t got = 0;
        for (ssize_t k; got < size && (k = read(ch[c].fd, rs + (size_t)i * stride + got,
                                                size - got)) > 0;)
            got += (size_t)k;
        close(ch[c].fd);
        rcs[i] = !WIFEXITED(st) ? 1 : WEXITSTATUS(st) ? WEXITSTATUS(st) : got == size ? 0 : 1;
        state[i] = 2;
        ch[c] = ch[--running];
    }
    free(state);
    free(rcs);
    return stop;
}
