#!/usr/bin/env bash
# answers_key.sh PROGRAMS_DIR — lesson 05's answer key (kit/answers.py), from the α-β model
# of race.sh's platform (α = 2 µs, β = 0.8 ns/B; inside a host α' = 0.1 µs, β' = 10 ps/B):
# the size where the ring overtakes rhd with 4 ranks per host on 1024 ranks (rhd's 8
# halving steps that leave the host carry 4 ranks' bytes on one link), and the size below
# which recursive doubling of whole buffers (lg p rounds of α + nβ, dt_rhd_whole) beats
# rhd on the flat 1024 ranks.
set -u
awk 'BEGIN { a = 2e-6; b = 8e-10; ai = 1e-7; bi = 1e-11; p = 1024; k = 4; lg = 10; lgk = 2
  Ar = 2 * (p - 1) * a; Br = 2 * (p - 1) / p * b
  # rhd, 4 a host: steps of distance >= k leave the host (lg - lgk of them), shared by k
  Ah = 2 * ((lg - lgk) * a + lgk * ai); Bh = 0; f = 1
  for (s = 1; s <= lg; s++) { f /= 2; Bh += 2 * f * (s <= lg - lgk ? k * b : bi) }
  printf "crossover_bytes_4_per_host\t%.6g\t1%%\tthe ring A + B·n against rhd with 4 ranks a host on 1024: (A_ring - A_rhd) / (B_rhd - B_ring)\n", (Ar - Ah) / (Bh - Br)
  Aw = lg * a; Bw = lg * b; A = 2 * lg * a; Bd = Br
  printf "rhd_whole_wins_below_bytes\t%.6g\t2%%\tlg p (α + nβ) = 2 lg p α + 2(p-1)/p nβ on the flat 1024 ranks\n", (A - Aw) / (Bw - Bd) }'
