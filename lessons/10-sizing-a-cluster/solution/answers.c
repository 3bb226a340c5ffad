// answers.c — lesson 10's reference answers, each from the dtsim command in its comment
// (2026-11-25; rerun them if the simulator's model changes, `lessons/grade 10 --solution`
// says which).
#include "answers.h"

// the README's offer
const char *offer_flags = "--gpus 256 --gpus-per-node 8 --gpu a100 --intra nvswitch --intra-bw 300 --net-bw 25 --nics 1 --net-lat 2 --topology fat-tree --precision fp16";
double offer_images_per_s = 379465;      // dtsim <offer> --iters 1: images/s
double offer_time_to_train_min = 5.064;  // 90 x 1281167 / 379465 / 60
double whatif_second_nic = 1.1234;       // <offer> --nics 2: 426296 / 379465
double whatif_4_gpus_per_node = 0.9466;  // <offer> --gpus-per-node 4: 359193 / 379465
double whatif_h100 = 1.3110;             // <offer> --gpu h100: 497483 / 379465
double whatif_batch_64 = 1.3386;         // <offer> --per-gpu-batch 64: 507954 / 379465
double goyal_efficiency_256_vs_8 = 96.76;  // --preset goyal2017 at 256 and 8 GPUs
