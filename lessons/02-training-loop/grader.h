// grader.h — what lesson 02's grader files share (grader.c: sgd_step against a float64
// re-computation of torch.optim.SGD; grader_train.c: the training loop and the evaluation).
#ifndef LESSON02_GRADER_H
#define LESSON02_GRADER_H

#include "../kit/grade.h"
#include "training.h"

// The outcome of the sgd_step checks that the training checks depend on.
typedef struct {
    int in_range;  // sgd_step touched only its n elements (else the loop would corrupt memory)
    int all_ok;    // every sgd_step check passed
} sgd_outcome;

sgd_outcome grade_sgd(grade_t *g);
void grade_train(grade_t *g, const sgd_outcome *sgd);

#endif
