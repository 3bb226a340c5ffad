// subject10.c — the process that holds lesson 10's answers.c (lessons/kit/subject.h): a
// server that answers the grader's one request with the answer sheet's values, as data:
// offer_flags ([u64 length][its bytes], the length UINT64_MAX for NULL) and the seven
// numbers of answers.h in its order. Whatever else answers.c does (a constructor that
// prints, that ends the process) happens here, away from the grader's verdicts.
#include <string.h>

#include "../kit/subject.h"
#include "answers.h"
#include "subject10.h"

static void serve_answers(subject_buf *req, subject_buf *reply) {
    if (req->len != 0) exit(2);  // the grader sends nothing
    if (offer_flags) {
        size_t n = strlen(offer_flags);
        sb_u64(reply, n);
        sb_put(reply, offer_flags, n);
    } else {
        sb_u64(reply, UINT64_MAX);
    }
    const double v[] = {offer_images_per_s, offer_time_to_train_min, whatif_second_nic,
                        whatif_4_gpus_per_node, whatif_h100, whatif_batch_64,
                        goyal_efficiency_256_vs_8};
    sb_put(reply, v, sizeof v);
}

int main(void) {
    const subject_handler h[] = {serve_answers};
    return subject_serve(h, 1);
}
