// dtsim_slurm.c — --slurm DIR: a search too large for one machine spread over a cluster with
// the scheduler its users already have. dtsim writes DIR/dtsim.sbatch, a Slurm job array
// (sbatch's --array, https://slurm.schedmd.com/job_array.html) whose task K of N runs the
// same command with --slice K/N --results DIR, and DIR/dtsim-srun.sh, the same slices as
// srun tasks inside an allocation (task K: $SLURM_PROCID); then the same command with
// --gather DIR prints the one table. --submit hands the array to sbatch. Nothing here
// schedules: Slurm does.
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "atomic_file.h"
#include "dtsim_jobs.h"

// s single-quoted for sh (' as '\'')
static void sq(FILE *f, const char *s) {
    fputc('\'', f);
    for (; *s; s++) {
        if (*s == '\'') fputs("'\\''", f);
        else fputc(*s, f);
    }
    fputc('\'', f);
}

// 1 for the options that say how to run (not what): left out of the tasks' command,
// *skip set to 1 when the value is the next argument
static int how_option(const char *a, int *skip) {
    static const char *with_value[] = {"--slurm", "--slurm-tasks", "--slice", "--results",
                                       "--gather"};
    *skip = 0;
    if (!strcmp(a, "-j")) return *skip = 1, 1;
    if (!strncmp(a, "-j", 2)) return 1;  // -jN
    if (!strcmp(a, "--submit")) return 1;
    for (size_t i = 0; i < sizeof with_value / sizeof *with_value; i++) {
        size_t n = strlen(with_value[i]);
        if (!strncmp(a, with_value[i], n) && a[n] == '=') return 1;
        if (!strcmp(a, with_value[i])) return *skip = 1, 1;
    }
    return 0;
}

// The command (this binary's absolute path, the subcommand, the user's options less the
// ones of how to run) on f
static void command(FILE *f, const char *exe, const char *sub, int argc, char **argv) {
    sq(f, exe);
    fprintf(f, " %s", sub);
    for (int i = 1; i < argc; i++) {
        int skip;
        if (how_option(argv[i], &skip)) {
            i += skip;
            continue;
        }
        fputc(' ', f);
        sq(f, argv[i]);
    }
}

static int write_script(const char *path, const char *what, void (*body)(FILE *, void *),
                        void *ctx) {
    dt_atomic_file a;
    dt_error err;
    if (dt_atomic_open(&a, path, what, &err)) return fprintf(stderr, "dtsim: %s\n", err.msg), 2;
    body(a.f, ctx);
    if (dt_atomic_finish(&a, &err) || dt_atomic_commit(&a, &err))
        return fprintf(stderr, "dtsim: %s: %s\n", what, err.msg), 1;
    chmod(path, 0755);
    return 0;
}

typedef struct {
    const char *exe, *sub, *dir, *cwd;
    int argc, tasks, n;
    char **argv;
} script;

static void head(FILE *f, const script *s, const char *how) {
    fprintf(f, "#!/bin/sh\n# dtsim %s, %d independent simulations in %d slices: %s task K of "
               "%d runs\n# the simulations i with i %% %d == K and saves each result in this "
               "directory.\n# When every task has finished, one table (the bytes the "
               "one-machine run prints):\n#   ", s->sub, s->n, s->tasks, how, s->tasks,
            s->tasks);
    command(f, s->exe, s->sub, s->argc, s->argv);
    fprintf(f, " --gather ");
    sq(f, s->dir);
    fputc('\n', f);
}

static void sbatch_body(FILE *f, void *ctx) {
    const script *s = ctx;
    head(f, s, "array");
    fprintf(f, "#SBATCH --job-name=dtsim-%s\n#SBATCH --array=0-%d\n#SBATCH --ntasks=1\n"
               "#SBATCH --cpus-per-task=1\n#SBATCH --output=%s/slice-%%a.log\n",
            s->sub, s->tasks - 1, s->dir);
    fprintf(f, "# (a 16,384-GPU simulation needs about 12 GiB: add #SBATCH --mem=... to "
               "suit; docs/dtsim.md)\ncd ");
    sq(f, s->cwd);
    fprintf(f, " || exit 1\nexec ");
    command(f, s->exe, s->sub, s->argc, s->argv);
    fprintf(f, " --slice \"${SLURM_ARRAY_TASK_ID:?run by sbatch}/%d\" --results ", s->tasks);
    sq(f, s->dir);
    fputc('\n', f);
}

static void srun_body(FILE *f, void *ctx) {
    const script *s = ctx;
    head(f, s, "srun");
    fprintf(f, "# Inside an allocation (salloc -n %d, or a batch script's): sh %s/dtsim-srun.sh\n"
               "cd ", s->tasks, s->dir);
    sq(f, s->cwd);
    fprintf(f, " || exit 1\nexec srun --ntasks=%d --cpus-per-task=1 --output=%s/slice-%%t.log "
               "sh -c 'exec \"$@\" --slice \"$SLURM_PROCID/%d\"' dtsim ", s->tasks, s->dir,
            s->tasks);
    command(f, s->exe, s->sub, s->argc, s->argv);
    fprintf(f, " --results ");
    sq(f, s->dir);
    fputc('\n', f);
}

// sbatch on path: its exit code (127: not on PATH)
static int sbatch(const char *path) {
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid == 0) {
        execlp("sbatch", "sbatch", path, (char *)NULL);
        _exit(127);
    }
    int st;
    if (pid < 0 || waitpid(pid, &st, 0) < 0) return 127;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}

int dtsim_slurm_write(const dtsim_jobs_opts *j, const char *sub, int argc, char **argv, int n) {
    char exe[PATH_MAX], dir[PATH_MAX], cwd[PATH_MAX], path[PATH_MAX + 32];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (len <= 0) snprintf(exe, sizeof exe, "dtsim");
    else exe[len] = 0;
    if (mkdir(j->slurm, 0777) && access(j->slurm, W_OK)) {
        fprintf(stderr, "dtsim: option --slurm: cannot create the directory '%s'\n", j->slurm);
        return 2;
    }
    if (!realpath(j->slurm, dir) || !getcwd(cwd, sizeof cwd)) {
        fprintf(stderr, "dtsim: option --slurm: '%s' is not a usable directory\n", j->slurm);
        return 2;
    }
    if (n < 1) {
        fprintf(stderr, "dtsim: --slurm: nothing to simulate\n");
        return 2;
    }
    script s = {exe, sub, dir, cwd, argc, j->slurm_tasks && j->slurm_tasks < n ? j->slurm_tasks
                                                                               : n, n, argv};
    snprintf(path, sizeof path, "%s/dtsim-srun.sh", dir);
    int rc = write_script(path, "--slurm", srun_body, &s);
    snprintf(path, sizeof path, "%s/dtsim.sbatch", dir);
    if (!rc) rc = write_script(path, "--slurm", sbatch_body, &s);
    if (rc) return rc;
    printf("dtsim %s: %d simulations in %d slices: %s (a job array), %s/dtsim-srun.sh (srun "
           "tasks)\n", sub, n, s.tasks, path, dir);
    if (j->submit) {
        rc = sbatch(path);
        if (rc == 127) {
            fprintf(stderr, "dtsim: --submit: sbatch is not on PATH (no Slurm here): submit %s "
                            "where it is\n", path);
            return 1;
        }
        if (rc) return fprintf(stderr, "dtsim: --submit: sbatch %s exited %d\n", path, rc), 1;
    } else {
        printf("submit:  sbatch %s\n", path);
    }
    printf("gather:  ");
    command(stdout, exe, sub, argc, argv);
    printf(" --gather ");
    sq(stdout, dir);
    printf("\n");
    return fflush(stdout) ? 1 : 0;
}
