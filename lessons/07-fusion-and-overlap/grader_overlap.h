// grader_overlap.h — lesson 07's grader, part 2: the overlap on a real network (see
// grader.c's header). Prints the three overlap_* checks.
#ifndef LESSON07_GRADER_OVERLAP_H
#define LESSON07_GRADER_OVERLAP_H

#include <stdint.h>

#include "../kit/grade.h"

void check_overlap(grade_t *g, uint64_t seed);

#endif
