#!/usr/bin/env bash
# answers_key.sh PROGRAMS_DIR — lesson 09's answer key (kit/answers.py), from the underflow
# program built with the student's to_half (PROGRAMS_DIR/underflow resnet20 32, the README's
# experiment): the share of nonzero gradients lost at loss scale 1, and how many doublings
# of the scale 65536 (the one that loses nothing) are left before the largest |g| overflows
# half's 65504.
set -u
u="$1/underflow"
[ -x "$u" ] || { echo "$u is not built (cmake --build build --target lesson09_student_underflow)" >&2; exit 2; }
"$u" resnet20 32 | awk '
  /\|g\| from/ { for (i = 1; i <= NF; i++) if ($i == "to") max = $(i + 1) + 0 }
  $1 == "1" && NF >= 4 { lost = $2; sub("%", "", lost) }
  END { if (lost == "") printf "lost_pct_scale1\tNA\t-\tunderflow resnet20 32 printed no row for scale 1\n"
        else printf "lost_pct_scale1\t%s\t3%%\tunderflow resnet20 32: the lost (0) column at loss scale 1, in %%\n", lost
        if (max > 0) printf "doublings_left_at_65536\t%d\t0\tunderflow resnet20 32: floor(log2(65504 / (65536 × the largest |g|)))\n", int(log(65504 / (65536 * max)) / log(2))
        else printf "doublings_left_at_65536\tNA\t-\tunderflow printed no range of |g|\n" }'
