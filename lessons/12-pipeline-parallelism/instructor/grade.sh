#!/usr/bin/env bash
# instructor/grade.sh — lesson 12's instructor-only cases (lessons/grade 12 --instructor;
# kept beside solution/, so the handout has neither): the same grader on what the public run
# never draws (grader --instructor): up to 64 stages and 512 micro-batches, and fewer
# micro-batches than stages (m < p), where the warm-up must be cut to m. run_grader.sh names
# the checks instructor.<check>.
set -u
: "${LESSON_GRADER:?}"
exec "$LESSON_GRADER" --instructor
