// dtsim_3d_band.h — written by bench/megatron.py from bench/MEGATRON.md's runs; do not edit by hand.
// The band of a 3D layout's time-to-train: the most negative and most positive error (0 included)
// of the published 3D-parallel runs there (Megatron-LM's weak-scaling table, BLOOM-176B, MT-NLG 530B),
// predicted held out.
#ifndef DT_SIM_DTSIM_3D_BAND_H
#define DT_SIM_DTSIM_3D_BAND_H

#define DTSIM_3D_RUNS 14
#define DTSIM_3D_BAND_LO -0.083
#define DTSIM_3D_BAND_HI 0.221

#endif
