// gpu_calib_rows.h — the rows of the calibration table (sim/gpu_calib.h), included once by
// sim/gpu_calib.c. Data: each row one published measurement, copied from the table its
// source names (a repository's README at a commit, or a page), never fitted to a multi-node
// run. In the order a run prefers them: the first row of a GPU, model family (CNN or
// transformer) and precision is that run's default, so each GPU's own variant and today's
// frameworks come first. Transformers are modelled on dtsim's GPT shapes: BERT-Large as
// gpt2-medium's 24 x 1024 with BERT's vocabulary and sequence (causal attention: half of
// BERT's score FLOPs; its MLM head runs on 15 % of tokens, dtsim's projection on all), MPT-1B
// as gpt3-xl's 24 x 2048 with MPT's 50,368-token vocabulary. A figure per GPU of 8 (gpus 8)
// is the node's over 8 (16 for a DGX-2): its allreduce (FSDP's gathers) is charged to the
// GPU's kernels.
// Not found in any source (docs/hardware.md, "Calibration table"): P40 training,
// transformers on the H100 PCIe and H200, bf16 ResNet-50 (the fp16 row stands in). ResNet-50
// on H100 (SXM and PCIe) and H200 is MLPerf's time to accuracy on one node, its epochs over
// its run time; so are the A100's MLPerf ResNet-50 and the H100's MLPerf BERT (samples over
// time), which follow the rows of their GPU (a run takes them with --calib, or as one node of
// its software in bench/HELDOUT.md).
#define DLE "NVIDIA/DeepLearningExamples "
#define RN50_PYT DLE "PyTorch/Classification/ConvNets/resnet50v1.5/README.md@7bdfc81d"
#define RN50_TF1 DLE "TensorFlow/Classification/ConvNets/resnet50v1.5/README.md@9de48bc9"
#define RN50_MX DLE "MxNet/Classification/RN50v1.5/README.md@1bd98ac3"
#define BERT_PYT_A80 DLE "PyTorch/LanguageModeling/BERT/README.md@a07d20a1"
#define BERT_PYT_V16 DLE "PyTorch/LanguageModeling/BERT/README.md@26c26761"
#define BERT_TF1 DLE "TensorFlow/LanguageModeling/BERT/README.md@9de48bc9"
#define MPT "mosaicml/llm-foundry scripts/train/benchmarking/README.md@c90b9b31"
#define MPT_NOTE "FSDP on 8 GPUs; tokens/s per GPU over 2048 tokens per sequence"
static const dt_gpu_calib rows[] = {
    // ---- ResNet-50 v1.5 (training images/s, real ImageNet through DALI) ----
    {"dle-pyt-rn50-v100-amp", "v100", "resnet50", 0, 0, "fp16", 256, 1, 1200,
     "PyTorch 21.03 (NGC), AMP", RN50_PYT ", 'Training performance: NVIDIA DGX-1 16GB (8x "
     "V100 16GB)', 1 GPU", "2021-04", "", 0, 1},
    {"dle-pyt-rn50-v100-fp32", "v100", "resnet50", 0, 0, "fp32", 112, 1, 367,
     "PyTorch 21.03 (NGC)", RN50_PYT ", 'Training performance: NVIDIA DGX-1 16GB (8x V100 "
     "16GB)', 1 GPU", "2021-04", "", 0, 1},
    {"dle-mx-rn50-v100-amp", "v100", "resnet50", 0, 0, "fp16", 192, 1, 1376,
     "MXNet 20.12 (NGC), AMP", RN50_MX ", 'Training performance: NVIDIA DGX-1 (8x V100 16GB)', "
     "1 GPU", "2022-12", "", 0, 1},
    {"dle-pyt-rn50-a100-amp", "a100", "resnet50", 0, 0, "fp16", 256, 1, 2470,
     "PyTorch 21.03 (NGC), AMP", RN50_PYT ", 'Training performance: NVIDIA DGX A100 (8x A100 "
     "80GB)', 1 GPU", "2021-04", "", 0, 1},
    {"dle-pyt-rn50-a100-tf32", "a100", "resnet50", 0, 0, "tf32", 256, 1, 938,
     "PyTorch 21.03 (NGC)", RN50_PYT ", 'Training performance: NVIDIA DGX A100 (8x A100 "
     "80GB)', 1 GPU", "2021-04", "", 0, 1},
    {"dle-mx-rn50-a100-amp", "a100", "resnet50", 0, 0, "fp16", 512, 1, 3410.52,
     "MXNet 22.10 (NGC), AMP", RN50_MX ", 'Training performance: NVIDIA DGX A100 (8x A100 "
     "80GB)', 1 GPU", "2022-12", "", 0, 1},
    {"dle-tf1-rn50-a100-40-amp", "a100-40", "resnet50", 0, 0, "fp16", 256, 1, 2375,
     "TensorFlow 1 20.06 (NGC), AMP, XLA", RN50_TF1 ", 'Training performance: NVIDIA DGX A100 "
     "(8x A100 40GB)', 1 GPU", "2020-11", "", 0, 1},
    {"dle-tf1-rn50-a100-40-tf32", "a100-40", "resnet50", 0, 0, "tf32", 256, 1, 909,
     "TensorFlow 1 20.06 (NGC), XLA", RN50_TF1 ", 'Training performance: NVIDIA DGX A100 (8x "
     "A100 40GB)', 1 GPU", "2020-11", "", 0, 1},
    {"mlperf2-rn50-dgxa100-1n", "a100", "resnet50", 0, 0, "fp16", 408, 8,
     35 * 1281167.0 / ((1718.323 + 1724.881 + 1720.164) / 3) / 8,
     "MXNet 22.04 (NGC), DALI, LARS, fp16", "MLPerf Training v2.0 results "
     "(mlcommons/training_results_v2.0@8437fbb7), NVIDIA/results/dgxa100_ngc22.04_mxnet/resnet/"
     "result_{0..4}.txt: 1 DGX A100 80GB, 35 epochs, run_start to run_stop", "2022-05",
     "scored as MLPerf scores: the mean of five runs less the fastest and result_2 (aborted); "
     "evaluation included", 0, 1},
    {"tf-rn50-p100-fp32", "p100", "resnet50", 0, 0, "fp32", 64, 1, 218,
     "TensorFlow 1.1 tf_cnn_benchmarks (real data)", "tensorflow/tensorflow "
     "tensorflow/docs_src/performance/benchmarks.md@5984ffef, 'Details for NVIDIA DGX-1 "
     "(NVIDIA Tesla P100) - Training real data', 1 GPU", "2017-05",
     "ResNet-50 v1 (the stride on the 1x1 convolution), measured with v1.5", 0, 1},
    {"fb-caffe2-rn50-p100-fp32", "p100", "resnet50", 0, 0, "fp32", 32, 8,
     90 * 1281167.0 / (29 * 3600) / 8, "Caffe2 + Gloo (Facebook, Big Basin)",
     "Goyal et al. 2017, arXiv:1706.02677, section 1: the baseline 'using 8 Tesla P100 GPUs, "
     "training time is 29 hours' (90 epochs, kn = 256)", "2017-06",
     "the paper's own one-server baseline; section 5.5's 'over 16 minutes' per epoch agrees "
     "(29 h is 19.3 min)", 0, 1},
    {"mlperf3-rn50-dgxh100-1n", "h100", "resnet50", 0, 0, "fp16", 400, 8,
     35 * 1281167.0 / ((814.917 + 816.057 + 817.177) / 3) / 8,
     "MXNet 23.04 (NGC), DALI, LARS, fp16", "MLPerf Training v3.0 results "
     "(mlcommons/training_results_v3.0@9f08e30c), NVIDIA/results/dgxh100_ngc23.04_mxnet/"
     "resnet/result_{0..4}.txt: 1 DGX H100, 35 epochs, run_start to run_stop",
     "2023-06", "scored as MLPerf scores: the mean of five runs less the fastest and the "
     "slowest (result_3 aborted); evaluation included", 0, 1},
    {"mlperf4-rn50-h100-pcie-1n", "h100-pcie", "resnet50", 0, 0, "fp16", 400, 8,
     35 * 1281167.0 / ((1243.855 + 1244.761 + 1245.238) / 3) / 8,
     "MXNet 24.04 (NGC), DALI, LARS, fp16", "MLPerf Training v4.0 results "
     "(mlcommons/training_results_v4.0@6fe9543), ASUSTeK/results/ESC8000A-E12-8xH100-PCIE-80GB/"
     "resnet/result_{1..5}.txt: 1 ASUS ESC8000A-E12, 8 H100 PCIe 80GB, 35 epochs, run_start to "
     "run_stop", "2024-05", "scored as MLPerf scores: the mean of five runs less the fastest "
     "and the slowest (result_3 aborted); evaluation included", 0, 1},
    {"mlperf4-rn50-h200-1n", "h200", "resnet50", 0, 0, "fp16", 400, 8,
     35 * 1281167.0 / ((721.345 + 721.437 + 722.035) / 3) / 8,
     "MXNet 24.04 (NGC), DALI, LARS, fp16", "MLPerf Training v4.0 results "
     "(mlcommons/training_results_v4.0@6fe9543), NVIDIA/results/h200_ngc24.04_mxnet/resnet/"
     "result_{0..4}.txt: 1 NVIDIA H200 node (8 H200 SXM 141GB), 35 epochs, run_start to "
     "run_stop", "2024-04", "scored as MLPerf scores: the mean of five runs less the fastest "
     "and the slowest; evaluation included", 0, 1},
    // ---- transformers (sequences/s) ----
    {"dle-pyt-bert512-a100-amp", "a100", "gpt2-medium", 512, 30522, "fp16", 32, 1, 210,
     "PyTorch 21.11 (NGC), AMP, LAMB", BERT_PYT_A80 ", 'Pre-training NVIDIA DGX A100 (8x A100 "
     "80GB)', phase 2, 1 GPU", "2022-05", "BERT-Large", 0, 1},
    {"dle-pyt-bert128-a100-amp", "a100", "gpt2-medium", 128, 30522, "fp16", 256, 1, 580,
     "PyTorch 21.11 (NGC), AMP, LAMB", BERT_PYT_A80 ", 'Pre-training NVIDIA DGX A100 (8x A100 "
     "80GB)', phase 1, 1 GPU", "2022-05", "BERT-Large", 0, 1},
    {"dle-pyt-bert512-a100-tf32", "a100", "gpt2-medium", 512, 30522, "tf32", 16, 1, 110,
     "PyTorch 21.11 (NGC), LAMB", BERT_PYT_A80 ", 'Pre-training NVIDIA DGX A100 (8x A100 "
     "80GB)', phase 2, 1 GPU", "2022-05", "BERT-Large", 0, 1},
    {"mpt1b-a100-bf16", "a100", "gpt3-xl", 2048, 50368, "bf16", 14, 8, 20513.0 / 2048,
     "Composer/llm-foundry, PyTorch FSDP, bf16", MPT ", 'A100 80GB with 1600 Gbps node-node "
     "interconnect (RoCE)', MPT-1B on 8 GPUs", "2023-10", "MPT-1B; " MPT_NOTE, 3, 4},
    {"dle-tf1-bert128-a100-40-amp", "a100-40", "gpt2-medium", 128, 30522, "fp16", 64, 1,
     356.845, "TensorFlow 1 20.06 (NGC), AMP, XLA, LAMB", BERT_TF1 ", 'Pre-training training "
     "performance: single-node on DGX A100 40GB', phase 1, 1 GPU", "2020-07", "BERT-Large", 0, 1},
    {"dle-tf1-bert512-a100-40-amp", "a100-40", "gpt2-medium", 512, 30522, "fp16", 16, 1,
     70.856, "TensorFlow 1 20.06 (NGC), AMP, XLA, LAMB", BERT_TF1 ", 'Pre-training training "
     "performance: single-node on DGX A100 40GB', phase 2, 1 GPU", "2020-07", "BERT-Large", 0, 1},
    {"dle-tf1-bert128-a100-40-tf32", "a100-40", "gpt2-medium", 128, 30522, "tf32", 64, 1,
     238.10, "TensorFlow 1 20.06 (NGC), XLA, LAMB", BERT_TF1 ", 'Pre-training training "
     "performance: single-node on DGX A100 40GB', phase 1, 1 GPU", "2020-07", "BERT-Large", 0, 1},
    {"mpt1b-a100-40-bf16", "a100-40", "gpt3-xl", 2048, 50368, "bf16", 8, 8, 19271.0 / 2048,
     "Composer/llm-foundry, PyTorch FSDP, bf16", MPT ", 'A100 40GB with 1600 Gbps node-node "
     "interconnect (RoCE)', MPT-1B on 8 GPUs", "2023-10", "MPT-1B; " MPT_NOTE, 3, 8},
    {"mpt1b-h100-bf16", "h100", "gpt3-xl", 2048, 50368, "bf16", 14, 8, 45455.0 / 2048,
     "Composer/llm-foundry, PyTorch FSDP, bf16", MPT ", 'H100 80GB BF16', MPT-1B on 8 GPUs",
     "2023-10", "MPT-1B; " MPT_NOTE, 3, 1},
    {"mlperf3-bert-dgxh100-1n", "h100", "gpt2-medium", 512, 30522, "fp16", 48, 8,
     20395745.0 / 2625.027 / 2 / 8, "PyTorch 23.04 (NGC), fp16, LAMB, packed sequences",
     "MLPerf Training v3.0 results (mlcommons/training_results_v3.0@9f08e30c), NVIDIA/results/"
     "dgxh100_ngc23.04_pytorch/bert/result_{0..9}.txt: 1 DGX H100, train_samples over "
     "run_start to run_stop", "2023-06", "BERT-Large phase 2, two samples packed in each 512-"
     "token sequence (48 a GPU, 768 samples a step): sequences/s is samples/s over 2; scored "
     "as MLPerf scores (ten runs less the fastest and the slowest); evaluation included; "
     "distributed LAMB (run_and_time.sh: --distributed_lamb), ZeRO stage 2", 2, 1},
    // The same tables' single-node (8-GPU) rows of the other MPT sizes without activation
    // checkpointing: a run of that network takes its own (likeness prefers the same network)
#define MPT_ROW(id, gpu, model, mb, ga, tps, name, table) \
    {id, gpu, model, 2048, 50368, "bf16", mb, 8, tps / 2048.0, \
     "Composer/llm-foundry, PyTorch FSDP, bf16", MPT ", '" table "', " name " on 8 GPUs", \
     "2023-10", name "; " MPT_NOTE, 3, ga}
#define MPT_A40 "A100 40GB with 1600 Gbps node-node interconnect (RoCE)"
#define MPT_H "H100 80GB BF16"
    MPT_ROW("mpt125m-a100-40-bf16", "a100-40", "gpt3-small", 26, 3, 136334.0, "MPT-125M", MPT_A40),
    MPT_ROW("mpt350m-a100-40-bf16", "a100-40", "gpt3-medium", 16, 4, 55995.0, "MPT-350M", MPT_A40),
    MPT_ROW("mpt760m-a100-40-bf16", "a100-40", "gpt3-large", 12, 4, 30173.0, "MPT-760M", MPT_A40),
    MPT_ROW("mpt3b-a100-40-bf16", "a100-40", "gpt3-2.7b", 5, 8, 10065.0, "MPT-3B", MPT_A40),
    MPT_ROW("mpt760m-h100-bf16", "h100", "gpt3-large", 24, 2, 63147.0, "MPT-760M", MPT_H),
    MPT_ROW("mpt7b-h100-bf16", "h100", "gpt3-6.7b", 6, 1, 10643.0, "MPT-7B", MPT_H),
    MPT_ROW("mpt13b-h100-bf16", "h100", "gpt3-13b", 2, 1, 4792.0, "MPT-13B", MPT_H),
#undef MPT_ROW
#undef MPT_A40
#undef MPT_H
    {"dle-pyt-bert128-v100-amp", "v100", "gpt2-medium", 128, 30522, "fp16", 16, 1, 125.44,
     "PyTorch 19.07 (NGC), AMP, LAMB", BERT_PYT_V16 ", 'Pre-training NVIDIA DGX-1 With 16G', "
     "phase 1, 1 GPU", "2019-08", "BERT-Large", 0, 1},
    {"dle-pyt-bert512-v100-amp", "v100", "gpt2-medium", 512, 30522, "fp16", 4, 1, 26.64,
     "PyTorch 19.07 (NGC), AMP, LAMB", BERT_PYT_V16 ", 'Pre-training NVIDIA DGX-1 With 16G', "
     "phase 2, 1 GPU", "2019-08", "BERT-Large", 0, 1},
    {"dle-tf1-bert128-v100-amp", "v100", "gpt2-medium", 128, 30522, "fp16", 64, 1, 188.04,
     "TensorFlow 1 20.06 (NGC), AMP, XLA, LAMB", BERT_TF1 ", 'Pre-training training "
     "performance: single-node on DGX-2 32GB', phase 1, 1 GPU", "2020-07",
     "BERT-Large on a V100 32GB SXM3 (DGX-2)", 0, 1},
    {"dle-tf1-bert128-dgx2h-amp", "v100", "gpt2-medium", 128, 30522, "fp16", 64, 16,
     3081.69 / 16, "TensorFlow 1 19.08 (NGC), AMP, XLA, Horovod, LAMB", BERT_TF1 ", "
     "'Pre-training training performance: multi-node on DGX-2H 32GB', 1 node (16 GPUs)",
     "2019-08", "BERT-Large on a DGX-2H's 16 V100 32GB SXM3", 0, 64},
    {"dle-tf1-bert512-dgx2h-amp", "v100", "gpt2-medium", 512, 30522, "fp16", 8, 16,
     577.79 / 16, "TensorFlow 1 19.08 (NGC), AMP, XLA, Horovod, LAMB", BERT_TF1 ", "
     "'Pre-training training performance: multi-node on DGX-2H 32GB', 1 node (16 GPUs)",
     "2019-08", "BERT-Large on a DGX-2H's 16 V100 32GB SXM3", 0, 256},
    {"dle-pyt-bert128-v100-fp32", "v100", "gpt2-medium", 128, 30522, "fp32", 8, 1, 33.36,
     "PyTorch 19.07 (NGC), LAMB", BERT_PYT_V16 ", 'Pre-training NVIDIA DGX-1 With 16G', "
     "phase 1, 1 GPU", "2019-08", "BERT-Large", 0, 1},
};
#undef DLE
