// grader.c — lesson 10's grader: the student's answer sheet (answers.c) against dtsim's
// own outputs, run here: the offer's flags must describe the same cluster as the README's
// prose (dtsim's description line, and the same simulated iteration within 0.5 %), and
// every number must be what dtsim gives for that question within 2 % (1 point for the
// efficiency). dtsim is $DT_BUILD/dtsim (lessons/grade sets DT_BUILD); each check says the
// command it ran, so a failure can be reproduced by hand.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../kit/grade.h"
#include "answers.h"

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

static sim run_dtsim(const char *flags) {
    sim r = {0};
    const char *b = getenv("DT_BUILD");
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "'%s/dtsim' %s --iters 1 --json 2>&1", b && *b ? b : "build", flags);
    FILE *f = popen(cmd, "r");
    if (!f) return snprintf(r.err, sizeof r.err, "cannot run dtsim"), r;
    char line[4096], last[400] = "";
    while (fgets(line, sizeof line, f)) {
        if (!strncmp(line, "dtsim: ", 7)) {
            const char *colon = strchr(line + 7, ':');  // after the cluster's name
            if (colon && !r.describe[0]) snprintf(r.describe, sizeof r.describe, "%.399s", colon + 1);
            else snprintf(last, sizeof last, "%.399s", line);
        }
        if (line[0] == '[') {
            r.images_s = num_after(line, "\"images_per_s\": ");
            r.iter_s = num_after(line, "\"iter_s\": ");
            r.gpus = num_after(line, "\"gpus\": ");
            r.ok = isfinite(r.images_s) && r.images_s > 0;
        }
    }
    int rc = pclose(f);
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
