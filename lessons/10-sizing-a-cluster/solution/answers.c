// answers.c — lesson 10's reference answers, each from the dtsim command in its comment
// (2026-12-05, after the calibration table and its one-node rows; rerun them if the
// simulator's model changes, `lessons/grade 10 --solution` says which).
#include "answers.h"

// the README's offer
const char *offer_flags = "--gpus 256 --gpus-per-node 8 --gpu a100 --intra nvswitch --intra-bw 300 --net-bw 25 --nics 1 --net-lat 2 --topology fat-tree --precision fp16";
double offer_images_per_s = 391998;      // dtsim <offer> --iters 1: images/s
double offer_time_to_train_min = 4.902;  // 90 x 1281167 / 391998 / 60
double whatif_second_nic = 1.1394;       // <offer> --nics 2: 446646 / 391998
double whatif_4_gpus_per_node = 0.9455;  // <offer> --gpus-per-node 4: 370618 / 391998
double whatif_h100 = 1.3892;             // <offer> --gpu h100: 544565 / 391998
double whatif_batch_64 = 1.3575;         // <offer> --per-gpu-batch 64: 532123 / 391998
double goyal_efficiency_256_vs_8 = 96.76;  // --preset goyal2017 at 256 and 8 GPUs
