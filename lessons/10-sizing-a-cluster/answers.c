// answers.c — lesson 10: replace every TODO with what dtsim tells you (README.md has the
// cluster and the questions; answers.h the units). As handed out it fails every check.
#include "answers.h"

const char *offer_flags = "TODO";  // e.g. "--gpus ... --gpu ... --precision ..."
double offer_images_per_s = 0;       // TODO
double offer_time_to_train_min = 0;  // TODO
double whatif_second_nic = 0;        // TODO
double whatif_4_gpus_per_node = 0;   // TODO
double whatif_h100 = 0;              // TODO
double whatif_batch_64 = 0;          // TODO
double goyal_efficiency_256_vs_8 = 0;  // TODO
