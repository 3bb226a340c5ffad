#!/usr/bin/env bash
# instructor/grade.sh — lesson 09's instructor-only cases (lessons/grade 09 --instructor;
# kept beside solution/, so the handout has neither): the same grader on what the public run
# does not try (grader --instructor): every NaN bit pattern (public: five), every 257th of
# all 2^32 floats (public: 400,000 drawn from 2^-30 .. 2^17), the loss scaler at GradScaler's
# defaults (S from 65536, interval 2000) over 200,000 steps, the wire sum of 64 ranks.
# run_grader.sh names the checks instructor.<check>.
set -u
: "${LESSON_GRADER:?}"
exec "$LESSON_GRADER" --instructor
