// answers.h — lesson 10's answer sheet: what you write in answers.c (README.md has the
// cluster and the questions). Every number comes from a dtsim run you made; the grader runs
// dtsim itself and compares (2 % on throughputs and ratios, 1 point on efficiencies).
#ifndef LESSON10_ANSWERS_H
#define LESSON10_ANSWERS_H

// 1. The offer as dtsim flags (cluster, GPU, precision; dtsim's defaults for the rest)
extern const char *offer_flags;
// 2. Its throughput, images/s, and 90 epochs of ImageNet (1,281,167 images) in minutes
extern double offer_images_per_s;
extern double offer_time_to_train_min;
// 3. What-ifs, each as images/s of the changed cluster over the offer's (same 256 GPUs)
extern double whatif_second_nic;     // two NICs per node
extern double whatif_4_gpus_per_node;  // 4 GPUs per node (64 nodes, a NIC each)
extern double whatif_h100;           // H100 instead of A100
extern double whatif_batch_64;       // 64 images per GPU instead of 32
// 4. A landmark: Goyal et al.'s preset, per-GPU throughput at 256 GPUs over that at 8, in %
extern double goyal_efficiency_256_vs_8;

#endif
