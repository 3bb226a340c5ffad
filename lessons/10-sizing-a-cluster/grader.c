// grader.c — lesson 10's grader: the student's answer sheet (answers.c) against dtsim's
// own outputs, run here: the offer's flags must describe the same cluster as the README's
// prose (dtsim's description line, and the same simulated iteration within 0.5 %), and
// every number must be what dtsim gives for that question within 2 % (1 point for the
// efficiency). dtsim is $DT_BUILD/dtsim (lessons/grade sets DT_BUILD); each check says the
// command it ran, so a failure can be reproduced by hand.
// The grader is split (lessons/kit/subject.h): answers.c is linked into a process of its own
// (subject10.c) that returns its values; the grader holds copies (remote.c, answers_fetch).
// The student's flags are data here too: dtsim runs with them as its arguments, split at
// blanks, never through a shell (a ';' or a '$(...)' in them is no command), and without
// the options that write or read files of their own (refused_option).
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../kit/grade.h"
#include "answers.h"
#include "subject10.h"

// The README's offer: 32 nodes of 8 A100 on NVSwitch (300 GB/s), one 25 GB/s HDR NIC per
// node, 2 us per link, a non-blocking fat tree; ResNet-50 in fp16, 32 images per GPU, LARS.
#define OFFER "--gpus 256 --gpus-per-node 8 --gpu a100 --intra nvswitch --intra-bw 300 " \
              "--net-bw 25 --nics 1 --net-lat 2 --topology fat-tree --precision fp16"
#define IMAGENET_EPOCHS (90.0 * 1281167.0)

typedef struct {
    int ok;
    char describe[400];  // dtsim's "dtsim: NAME: N nodes x ..." line, the name cut off
    double images_s, iter_s, gpus;
    char err[400];
} sim;

static double num_after(const char *s, const char *key) {
    const char *p = strstr(s, key);
    return p ? strtod(p + strlen(key), NULL) : NAN;
}

#define MAX_WORDS 96

// Splits `flags` at blanks into argv[first ..] (words point into buf); the count, or -1
// when there are too many.
static int split_words(const char *flags, char *buf, size_t size, char **argv, int first) {
    snprintf(buf, size, "%s", flags);
    int n = first;
    char *save = NULL;
    for (char *w = strtok_r(buf, " \t\n", &save); w; w = strtok_r(NULL, " \t\n", &save)) {
        if (n == MAX_WORDS - 4) return -1;
        argv[n++] = w;
    }
    return n;
}

// An option of dtsim's that the flags may not hold (it writes or reads a file of its own,
// or runs another mode of dtsim's), or NULL.
static const char *refused_option(char **argv, int from, int to) {
    static const char *refused[] = {"--csv", "--trace", "--plot", "--keep", "--slurm", "--submit",
                                    "--results", "--gather", "--platform", "--profile",
                                    "--device"};
    static const char *modes[] = {"sweep", "calibrate", "plan", "calibrations"};
    for (size_t k = 0; k < sizeof modes / sizeof *modes; k++)
        if (from < to && !strcmp(argv[from], modes[k])) return argv[from];
    for (int i = from; i < to; i++)
        for (size_t k = 0; k < sizeof refused / sizeof *refused; k++)
            if (!strcmp(argv[i], refused[k])) return argv[i];
    return NULL;
}

// Runs dtsim with argv (argv[0] its path), its output and errors read line by line into r.
static int read_dtsim(char **argv, sim *r, char *last, size_t last_size) {
    int fd[2];
    if (pipe(fd)) return -1;
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fd[1], 1), dup2(fd[1], 2), close(fd[0]), close(fd[1]);
        execv(argv[0], argv);
        dprintf(1, "dtsim: cannot run %s\n", argv[0]);
        _exit(127);
    }
    close(fd[1]);
    if (pid < 0) return close(fd[0]), -1;
    FILE *f = fdopen(fd[0], "r");
    char line[4096];
    while (f && fgets(line, sizeof line, f)) {
        if (!strncmp(line, "dtsim: ", 7)) {
            const char *colon = strchr(line + 7, ':');  // after the cluster's name
            if (colon && !r->describe[0]) snprintf(r->describe, sizeof r->describe, "%.399s", colon + 1);
            else snprintf(last, last_size, "%.*s", (int)strcspn(line, "\n"), line);
        }
        if (line[0] == '[') {
            r->images_s = num_after(line, "\"images_per_s\": ");
            r->iter_s = num_after(line, "\"iter_s\": ");
            r->gpus = num_after(line, "\"gpus\": ");
            r->ok = isfinite(r->images_s) && r->images_s > 0;
        }
    }
    if (f) fclose(f);
    else close(fd[0]);
    int st = 0;
    waitpid(pid, &st, 0);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static sim run_dtsim(const char *flags) {
    sim r = {0};
    if (!flags) return snprintf(r.err, sizeof r.err, "offer_flags is NULL"), r;
    const char *b = getenv("DT_BUILD");
    char path[1024], buf[LESSON10_FLAGS_MAX + 1], *argv[MAX_WORDS];
    snprintf(path, sizeof path, "%s/dtsim", b && *b ? b : "build");
    argv[0] = path;
    int n = split_words(flags, buf, sizeof buf, argv, 1);
    if (n < 0)
        return snprintf(r.err, sizeof r.err, "`dtsim %.200s...`: more than %d words", flags,
                        MAX_WORDS - 5), r;
    const char *no = refused_option(argv, 1, n);
    if (no)
        return snprintf(r.err, sizeof r.err, "`dtsim %.200s`: %s is not for the sheet (it "
                        "writes or reads files of its own, or runs another mode): the "
                        "cluster's and training's options only", flags, no), r;
    argv[n++] = "--iters", argv[n++] = "1", argv[n++] = "--json", argv[n] = NULL;
    char last[400] = "";
    int rc = read_dtsim(argv, &r, last, sizeof last);
    if (rc != 0 || !r.ok) {
        r.ok = 0;
        snprintf(r.err, sizeof r.err, "`dtsim %s` failed: %s", flags,
                 last[0] ? last : "no result (is dtsim built? DT_BUILD names the build)");
    }
    return r;
}

static int near(double got, double want, double rel) {
    return isfinite(got) && fabs(got - want) <= rel * fabs(want);
}

static void check_number(grade_t *g, const char *name, double got, double want, double rel,
                         const char *how) {
    grade_check(g, near(got, want, rel), name, near(got, want, rel) ? "%.4g (dtsim: %.4g)"
                : "you answered %.6g; dtsim gives %.6g (%s)", got, want, how);
}

int main(void) {
    grade_t g = grade_begin("10-sizing-a-cluster", 0);
    answers_fetch();  // answers.c's values, from the process that holds it
    sim offer = run_dtsim(OFFER);
    if (!offer.ok) {
        printf("# the reference run failed: %s\n", offer.err);
        return 2;
    }
    // 1. the flags: the same cluster (description line) and the same iteration
    sim mine = run_dtsim(offer_flags);
    if (!mine.ok)
        grade_check(&g, 0, "offer_flags_describe_the_offer", "%s", mine.err);
    else if (strcmp(mine.describe, offer.describe))
        grade_check(&g, 0, "offer_flags_describe_the_offer", "your flags give\n    %s  the offer "
                    "is\n    %s", mine.describe, offer.describe);
    else
        grade_check(&g, near(mine.iter_s, offer.iter_s, 0.005), "offer_flags_describe_the_offer",
                    "the same cluster; iteration %.3f ms (the offer's %.3f ms: latency or "
                    "precision differ if not within 0.5 %%)", 1e3 * mine.iter_s, 1e3 * offer.iter_s);
    if (grade_stopped(&g)) return grade_end(&g);
    // 2. throughput and time-to-train
    check_number(&g, "offer_throughput", offer_images_per_s, offer.images_s, 0.02,
                 "images/s: `dtsim` with the offer's flags");
    check_number(&g, "offer_time_to_train", offer_time_to_train_min,
                 IMAGENET_EPOCHS / offer.images_s / 60, 0.02,
                 "minutes: 90 x 1,281,167 images at that throughput");
    if (grade_stopped(&g)) return grade_end(&g);
    // 3. the what-ifs
    struct {
        const char *name, *flags, *how;
        double answer;
    } w[] = {
        {"whatif_second_nic", OFFER " --nics 2", "--nics 2, over the offer", whatif_second_nic},
        {"whatif_4_gpus_per_node", OFFER " --gpus-per-node 4", "--gpus-per-node 4 (still 256 "
         "GPUs), over the offer", whatif_4_gpus_per_node},
        {"whatif_h100", OFFER " --gpu h100", "--gpu h100, over the offer", whatif_h100},
        {"whatif_batch_64", OFFER " --per-gpu-batch 64", "--per-gpu-batch 64, images/s over "
         "the offer's", whatif_batch_64},
    };
    for (size_t i = 0; i < sizeof w / sizeof w[0]; i++) {
        sim r = run_dtsim(w[i].flags);
        if (!r.ok) {
            printf("# the reference run failed: %s\n", r.err);
            return 2;
        }
        check_number(&g, w[i].name, w[i].answer, r.images_s / offer.images_s, 0.02, w[i].how);
        if (grade_stopped(&g)) return grade_end(&g);
    }
    // 4. the landmark's scaling, as its paper defines it (against one 8-GPU server)
    sim big = run_dtsim("--preset goyal2017 --gpus 256"), one = run_dtsim("--preset goyal2017 --gpus 8");
    if (!big.ok || !one.ok) {
        printf("# the reference run failed: %s%s\n", big.err, one.err);
        return 2;
    }
    double eff = 100 * (big.images_s / 256) / (one.images_s / 8);
    int ok = isfinite(goyal_efficiency_256_vs_8) && fabs(goyal_efficiency_256_vs_8 - eff) <= 1;
    grade_check(&g, ok, "goyal_scaling_efficiency", ok ? "%.1f %% (dtsim: %.1f %%)" :
                "you answered %.2f %%; dtsim gives %.2f %% (per-GPU images/s at 256 GPUs over "
                "that at 8, --preset goyal2017)", goyal_efficiency_256_vs_8, eff);
    return grade_end(&g);
}
