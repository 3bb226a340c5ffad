#!/usr/bin/env bash
# answers_key.sh PROGRAMS_DIR — lesson 01's answer key (kit/answers.py), the closed forms of
# the README's questions 2 and 3 on ResNet-50's shapes (the --time table): the gemm's FLOPs
# per float im2col copies, 2·OC·K·N / (K·N) = 2·OC, for layer4's 3x3 conv (OC = 512); and
# the columns a 1x1 stride-1 conv does not write per image when x_b goes to the gemm as it
# is (dt_conv_is_pointwise): K·N floats of 4 bytes, layer1's 1x1 256->64 on 56x56 (K = 256,
# N = 3136), in MB (10^6 bytes).
set -u
awk 'BEGIN { printf "gemm_flops_per_copied_float_layer4\t%d\t0\t2·OC·K·N FLOPs over K·N copied floats = 2·OC, OC = 512\n", 2 * 512 }'
awk 'BEGIN { printf "pointwise_columns_mb_layer1\t%.6g\t1%%\tK·N·4 bytes, K = 256, N = 56·56 = 3136, in 10^6 bytes\n", 256 * 3136 * 4 / 1e6 }'
