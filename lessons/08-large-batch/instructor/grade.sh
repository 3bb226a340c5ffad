#!/usr/bin/env bash
# instructor/grade.sh — lesson 08's instructor-only cases (lessons/grade 08 --instructor;
# kept beside solution/, so the handout has neither): the same grader on what the public run
# never draws (grader --instructor): layer-sized tensors of 1 to 2.4 million elements
# (public: up to 5,000) whose norms a few large elements dominate, and schedules at the
# landmarks' scale (batches of 8k to 64k, multiples of 256 included; warm-ups of 500 to 5,000
# steps and up to 100,000 in all). run_grader.sh names the checks instructor.<check>.
set -u
: "${LESSON_GRADER:?}"
exec "$LESSON_GRADER" --instructor
