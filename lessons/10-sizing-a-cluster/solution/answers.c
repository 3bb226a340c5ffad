// answers.c — lesson 10's reference answers, each from the dtsim command in its comment
// (2026-12-07, after the launches and the waves of the modelled GPU; rerun them if the
// simulator's model changes, `lessons/grade 10 --solution` says which).
#include "answers.h"

// the README's offer
const char *offer_flags = "--gpus 256 --gpus-per-node 8 --gpu a100 --intra nvswitch --intra-bw 300 --net-bw 25 --nics 1 --net-lat 2 --topology fat-tree --precision fp16";
double offer_images_per_s = 423364;      // dtsim <offer> --iters 1: images/s
double offer_time_to_train_min = 4.539;  // 90 x 1281167 / 423364 / 60
double whatif_second_nic = 1.2003;       // <offer> --nics 2: 508148 / 423364
double whatif_4_gpus_per_node = 0.9453;  // <offer> --gpus-per-node 4: 400195 / 423364
double whatif_h100 = 1.2594;             // <offer> --gpu h100: 533187 / 423364
double whatif_batch_64 = 1.4900;         // <offer> --per-gpu-batch 64: 630807 / 423364
double goyal_efficiency_256_vs_8 = 94.50;  // --preset goyal2017 at 256 and 8 GPUs
