// remote.c — lesson 10's grader reads the student's answer sheet through the subject
// instead of linking it (the judge's side of the split grader, lessons/kit/subject.h):
// answers.c, which holds only values but is C (it could hold a constructor that prints a
// score or ends the process), is linked into the subject (subject10.c), and the grader
// holds these copies of answers.h's variables, set by answers_fetch from the subject's
// reply before the checks.
#include <stdio.h>
#include <string.h>

#include "../kit/subject.h"
#include "answers.h"
#include "subject10.h"

const char *offer_flags;
double offer_images_per_s;
double offer_time_to_train_min;
double whatif_second_nic;
double whatif_4_gpus_per_node;
double whatif_h100;
double whatif_batch_64;
double goyal_efficiency_256_vs_8;

void answers_fetch(void) {
    static char flags[LESSON10_FLAGS_MAX + 1];
    const char *what = "reading answers.c's values";
    subject_buf req = {0}, rep = {0};
    subject_call(SUBJECT10_ANSWERS, &req, &rep, what);
    uint64_t n = sb_get_u64(&rep);
    if (n == UINT64_MAX) {
        offer_flags = NULL;
    } else {
        if (n > LESSON10_FLAGS_MAX) subject_malformed(what);
        sb_get(&rep, flags, (size_t)n);
        flags[n] = 0;
        if (strlen(flags) != n) subject_malformed(what);  // no NUL inside: it was a C string
        offer_flags = flags;
    }
    double v[7];
    sb_get(&rep, v, sizeof v);
    if (rep.bad || rep.at != rep.len) subject_malformed(what);
    offer_images_per_s = v[0], offer_time_to_train_min = v[1], whatif_second_nic = v[2];
    whatif_4_gpus_per_node = v[3], whatif_h100 = v[4], whatif_batch_64 = v[5];
    goyal_efficiency_256_vs_8 = v[6];
    sb_free(&rep);
}
