#!/usr/bin/env python3
"""bench/heldout.py — dtsim on published multi-node runs it was never fitted to (bench/HELDOUT.md).

Each run below is configured only from its publication's hardware description (GPU, GPUs per
node, the link inside a node, NICs and their speed, batch, precision, optimizer, sharding),
as a dtsim command line with the source. One GPU's speed comes from the calibration table
(sim/gpu_calib_rows.h: published single-GPU or single-node measurements; `dtsim
calibrations`), the row dtsim picks by default for the run's GPU, model family and precision:
nothing is fitted to the run predicted. Each run is scored three ways: held out (that
default), the roofline alone (`--calib none`), and, for the landmark presets, fitted (the
preset's own paper figure, in-sample: bench/PAPERS.md).

Runs whose publication (or its software's own tables) also gives one node's figure are scored
a fourth way: calibrated from that node (`--calib ROW`), what a buyer who measures one node
gets (dtsim's --gpu-img-s).

From the held-out errors it derives the band dtsim prints (sim/dtsim_heldout.h, written
here): the most negative and most positive error (0 included) of the runs of its GPU
generation scored as it is calibrated (the table's row, one node of its software, or the
roofline alone); every generation's runs so scored where its own has fewer than three.
tests/sim/heldout_band.py recomputes them from the committed table.

usage: bench/heldout.py [--dtsim build/dtsim] [--out bench/HELDOUT.md]
                        [--header sim/dtsim_heldout.h] [--only ID ...] [-j N]
       bench/heldout.py --quick   (every command at a small GPU count, for CI: checks that
                                   each runs and that the calibration chosen is the table's)
"""
import argparse
import concurrent.futures
import json
import os
import statistics
import subprocess
import sys
import time

IMAGENET = 1281167

# Hardware descriptions shared by several runs (each figure's source is in the run's `hw`)
ABCI = "--preset mikami2018"  # 4 V100 SXM2, NVLink 2.0 (2 links/pair), 2 x EDR, fat tree
DGX2H = "--gpu v100 --gpus-per-node 16 --intra nvswitch --nics 8 --net-bw 100Gb"
DGXA100_40 = "--gpu a100-40"   # dtsim's a100-40 node: NVSwitch, 8 x HDR 200 Gb/s (DGX A100)
MOSAIC_A100_40 = "--gpu a100-40 --nics 8 --net-bw 200Gb"  # 1600 Gb/s per node, RoCE
BERT = "--model gpt2-medium --vocab 30522 --optimizer lamb --attention naive"  # BERT-Large

# MLPerf's ResNet-50 (NVIDIA/benchmarks/resnet/implementations/mxnet, v2.0 and v3.0 alike), as
# submitted: fp16 gradients on the wire (run_and_time.sh's --dtype float16: MXNet's gradients
# take the weights' type, the optimizer keeps fp32 copies, common/fit.py); Horovod with every
# gradient in one group (MXNET_HOROVOD_NUM_GROUPS=1, a 64 MB HOROVOD_FUSION_THRESHOLD over
# 51 MB) allreduced after backward ("Default is no NCCL and BWD overlap", config_DGX*_multi_
# *.sh; one node likewise), by NCCL over DGX nodes: reduce-scatter inside a node, the allreduce
# between nodes on each GPU's own NIC, allgather (hier rs). The runs of 64 nodes and more add
# SBATCH_NETWORK=sharp: NCCL's CollNet, the same pattern with the switches reducing (--sharp).
MLPERF_RN50 = ("--precision fp16 --optimizer lars --algo hier --hier-rs --fp16-grads "
               "--no-overlap --fusion segments:1")

# MLPerf v3.0's BERT-Large phase 2 on DGX H100: fused attention, fp16, LAMB, packed 512-token
# sequences (NVIDIA/benchmarks/bert/implementations/pytorch, config_DGXH100_*_pack*.sh), and
# run_and_time.sh's --distributed_lamb (gradients reduce-scattered, LAMB sharded, weights
# gathered: ZeRO stage 2)
MLPERF_BERT = ("--model gpt2-medium --vocab 30522 --optimizer lamb --attention flash "
               "--seq-len 512 --precision fp16 --algo hier --shard 2")

# seq 2048; FSDP wraps each MPTBlock (llm-foundry's fsdp_config): stage 3 a block at a time
MPT = "--vocab 50368 --optimizer adamw --precision bf16 --attention flash --shard-units block"

# id, generation, what is compared, the published figure, dtsim's arguments, and the sources.
# unit: "img" images/s in all, "seq" sequences/s in all, "tok" tokens/s per GPU.
RUNS = [
    dict(id="goyal2017", gen="pascal", unit="img", pub=90 * IMAGENET / 3600,
         args="--preset goyal2017", preset=True, stack="fb-caffe2-rn50-p100-fp32",
         src="Goyal et al. 2017, abstract: ResNet-50, 256 P100, batch 8K, 90 epochs in one hour",
         hw="the preset: 32 Big Basin servers of 8 P100 SXM2, NVLink, 50 Gb/s Ethernet (§4)"),
    dict(id="cho2017", gen="pascal", unit="img", pub=90 * IMAGENET / 3000,
         args="--preset cho2017", preset=True,
         src="Cho et al. 2017 (IBM DDL), abstract: 256 P100, 90 epochs in 50 min",
         hw="the preset: 64 Minsky servers of 4 P100, NVLink 1.0, InfiniBand (EDR assumed)"),
    dict(id="akiba2017", gen="pascal", unit="img", pub=90 * IMAGENET / 900,
         args="--preset akiba2017", preset=True,
         src="Akiba et al. 2017, abstract: 1024 P100, batch 32K, 90 epochs in 15 min",
         hw="the preset: PFN MN-1, 128 x 8 P100 PCIe, 2 x FDR InfiniBand, thin tree"),
    dict(id="jia2018", gen="pascal", unit="img", pub=90 * IMAGENET / 396,
         args="--preset jia2018", preset=True,
         src="Jia et al. 2018, abstract: 2048 P40, batch 64K, mixed precision, 6.6 min",
         hw="the preset: 256 x 8 P40, PCIe, 100 Gb/s RoCE (Mikami et al. 2018, Table 1)"),
    dict(id="mikami2018", gen="volta", unit="img", pub=90 * IMAGENET / 224,
         args="--preset mikami2018", preset=True,
         src="Mikami et al. 2018, abstract: 2176 V100 on ABCI, 90 epochs in 224 s",
         hw="the preset: ABCI, 544 x 4 V100 SXM2, NVLink 2.0, 2 x EDR InfiniBand"),
    dict(id="yamazaki2019", gen="volta", unit="img", pub=1.73e6,
         args=ABCI + " --gpus 2048 --per-gpu-batch 40 --optimizer lars --algo hier",
         src="Yamazaki et al. 2019 (Fujitsu), abstract: 'over 1.73 million images/sec' on 2048 "
             "V100 of ABCI, batch 81,920, MXNet, LARS, mixed precision",
         hw="ABCI as the mikami2018 preset (4 V100, NVLink 2.0, 2 x EDR); allreduce not "
            "stated: hier (NCCL's hierarchical pattern) assumed"),
    dict(id="dle-tf-bert128-dgx2h-4n", gen="volta", unit="seq", pub=13192.0,
         args=DGX2H + " --gpus 64 " + BERT + " --seq-len 128 --per-gpu-batch 1024 "
              "--accumulate 16 --precision fp16 --algo hier", stack="dle-tf1-bert128-dgx2h-amp",
         src="NVIDIA DeepLearningExamples TensorFlow/LanguageModeling/BERT README@9de48bc9, "
             "multi-node DGX-2H, phase 1: 4 nodes, 64 per GPU x 16 accumulated, 13192 seq/s",
         hw="DGX-2H: 16 V100 32GB on NVSwitch (6 NVLink 2.0 links per GPU), 8 x EDR "
            "100 Gb/s (DGX-2 datasheet); TF 19.08, Horovod + NCCL, LAMB"),
    dict(id="dle-tf-bert512-dgx2h-32n", gen="volta", unit="seq", pub=17059.0,
         args=DGX2H + " --gpus 512 " + BERT + " --seq-len 512 --per-gpu-batch 64 "
              "--accumulate 8 --precision fp16 --algo hier", stack="dle-tf1-bert512-dgx2h-amp",
         src="the same README, multi-node DGX-2H, phase 2: 32 nodes, 8 per GPU x 8 "
             "accumulated, 17059 seq/s",
         hw="as above"),
    dict(id="dle-bert", gen="ampere", unit="seq", pub=49663.0,
         args="--preset dle-bert --gpus 256 --per-gpu-batch 128 --accumulate 4", preset=True,
         stack="dle-pyt-bert512-a100-amp",
         src="NVIDIA DeepLearningExamples PyTorch/LanguageModeling/BERT README, 'Pre-training "
             "NVIDIA DGX A100 (8x A100 80GB) Multi-node Scaling', 32 nodes, phase 2",
         hw="the preset: 32 DGX A100 80GB, NVSwitch, 8 x HDR 200 Gb/s"),
    dict(id="dle-tf-bert128-dgxa100-16n", gen="ampere", unit="seq", pub=41144.0,
         args=DGXA100_40 + " --gpus 128 " + BERT + " --seq-len 128 --per-gpu-batch 512 "
              "--accumulate 8 --precision fp16 --algo hier", stack="dle-tf1-bert128-a100-40-amp",
         src="NVIDIA DeepLearningExamples TensorFlow/LanguageModeling/BERT README@9de48bc9, "
             "multi-node DGX A100 40GB, phase 1: 16 nodes, 64 per GPU x 8, 41144 seq/s",
         hw="DGX A100 40GB: NVSwitch, 8 x HDR 200 Gb/s (DGX A100 datasheet); TF 20.06, "
            "Horovod + NCCL, LAMB"),
    dict(id="dle-tf-bert512-dgxa100-16n", gen="ampere", unit="seq", pub=8723.1,
         args=DGXA100_40 + " --gpus 128 " + BERT + " --seq-len 512 --per-gpu-batch 512 "
              "--accumulate 32 --precision fp16 --algo hier", stack="dle-tf1-bert512-a100-40-amp",
         src="the same README, phase 2: 16 nodes, 16 per GPU x 32, 8723.1 seq/s",
         hw="as above"),
    dict(id="mpt125m-a100-40-128", gen="ampere", unit="tok", pub=123936.0,
         args=MOSAIC_A100_40 + " --gpus 128 --model gpt3-small " + MPT +
              " --per-gpu-batch 26 --shard 3", stack="mpt125m-a100-40-bf16",
         src="mosaicml/llm-foundry scripts/train/benchmarking/README.md@c90b9b31, 'A100 40GB "
             "with 1600 Gbps node-node interconnect (RoCE)': MPT-125M, 128 GPUs, micro-batch "
             "26, FSDP FULL_SHARD, no activation checkpointing, 123936 tokens/s per GPU",
         hw="8 A100 40GB per node (NVSwitch assumed), 1600 Gb/s RoCE per node (8 x 200 Gb/s "
            "assumed)"),
    dict(id="mpt350m-a100-40-16", gen="ampere", unit="tok", pub=55413.0,
         args=MOSAIC_A100_40 + " --gpus 16 --model gpt3-medium " + MPT +
              " --per-gpu-batch 18 --shard 3", stack="mpt350m-a100-40-bf16",
         src="the same table: MPT-350M, 16 GPUs, micro-batch 18, FSDP, 55413 tokens/s per GPU",
         hw="as above"),
    dict(id="mpt1b-a100-40-64", gen="ampere", unit="tok", pub=19001.0,
         analytic=True, args=MOSAIC_A100_40 + " --gpus 64 --model gpt3-xl " + MPT +
              " --per-gpu-batch 10 --shard 3", stack="mpt1b-a100-40-bf16",
         src="the same table: MPT-1B, 64 GPUs, micro-batch 10, FSDP, 19001 tokens/s per GPU",
         hw="as above"),
    dict(id="mlperf2-rn50-dgxa100-8n", gen="ampere", unit="img",
         pub=35 * IMAGENET / ((270.100 + 270.123 + 270.317) / 3),
         args="--gpu a100 --gpus 64 --per-gpu-batch 51 " + MLPERF_RN50,
         stack="mlperf2-rn50-dgxa100-1n",
         src="MLPerf Training v2.0 (mlcommons/training_results_v2.0@8437fbb7), NVIDIA "
             "dgxa100_n8_ngc22.04_mxnet ResNet-50 result logs: 8 DGX A100 80GB, global batch "
             "3264, LARS, MXNet 22.04, 35 epochs, scored as MLPerf scores (five runs less the "
             "fastest, 270.071 s, and the slowest, 270.759 s: 270.100, 270.123, 270.317 s)",
         hw="DGX A100 80GB: 8 A100 SXM4 80GB on NVSwitch, 8 x HDR 200 Gb/s (the submission's "
            "system description)"),
    dict(id="mlperf2-rn50-dgxa100-128n", gen="ampere", unit="img",
         pub=(56 + 60 + 60) * IMAGENET / (31.767 + 34.173 + 33.957),
         args="--gpu a100 --gpus 1024 --per-gpu-batch 35 --sharp " + MLPERF_RN50,
         stack="mlperf2-rn50-dgxa100-1n",
         src="the same round, dgxa100_n128: 128 DGX A100 80GB, global batch 35840; five runs "
             "less the fastest (31.758 s) and the slowest (34.236 s), whose epochs differ "
             "(56, 60, 60: 31.767, 34.173, 33.957 s): their images over their time",
         hw="as above; the switches reduce (SHARP: SBATCH_NETWORK=sharp)"),
    dict(id="mlperf2-rn50-dgxa100-527n", gen="ampere", unit="img",
         pub=86 * IMAGENET / ((19.092 + 19.335 + 19.078) / 3), analytic=True,
         args="--gpu a100 --gpus 4216 --per-gpu-batch 16 --sharp " + MLPERF_RN50,
         stack="mlperf2-rn50-dgxa100-1n",
         src="the same round, dgxa100_n527: 527 DGX A100 80GB, global batch 67456, 86 epochs; "
             "five runs less the fastest (19.006 s) and the slowest (19.428 s)",
         hw="as above; the switches reduce (SHARP: SBATCH_NETWORK=sharp); batch norm over "
            "pairs of GPUs (BN_GROUP=2), not modelled"),
    dict(id="mlperf3-rn50-dgxh100-64n", gen="hopper", unit="img",
         pub=50 * IMAGENET / ((29.805 + 29.898 + 31.965) / 3),
         args="--gpu h100 --gpus 512 --per-gpu-batch 40 --sharp " + MLPERF_RN50,
         stack="mlperf3-rn50-dgxh100-1n",
         src="MLPerf Training v3.0, NVIDIA dgxh100_n64 ResNet-50 result log: 64 DGX H100, "
             "local batch 40, LARS, MXNet 23.04, 50 epochs from run_start to run_stop, "
             "evaluation included, scored as MLPerf scores (five runs less the fastest and the "
             "slowest, result_1 aborted: 31.965, 29.898, 29.805 s), as its one-node row is",
         hw="DGX H100: 8 H100 SXM5 on NVSwitch, 8 x NDR 400 Gb/s (the submission's system "
            "description); the switches reduce (SHARP: SBATCH_NETWORK=sharp)"),
    dict(id="mlperf3-rn50-dgxh100-8n", gen="hopper", unit="img",
         pub=35 * IMAGENET / ((159.917 + 159.890 + 159.690) / 3),
         args="--gpu h100 --gpus 64 --per-gpu-batch 50 " + MLPERF_RN50,
         stack="mlperf3-rn50-dgxh100-1n",
         src="MLPerf Training v3.0, NVIDIA dgxh100_n8 ResNet-50 result logs: 8 DGX H100, "
             "global batch 3200, LARS, MXNet 23.04, 35 epochs, scored as its one-node row is "
             "(five runs less the fastest, 159.627 s, and result_2, aborted: 159.917, 159.890, "
             "159.690 s)",
         hw="as the 64-node run (the same system description, 8 nodes)"),
    dict(id="mlperf3-rn50-dgxh100-96n", gen="hopper", unit="img",
         pub=56 * IMAGENET / ((22.212 + 22.162 + 22.100) / 3),
         args="--gpu h100 --gpus 768 --per-gpu-batch 42 --sharp " + MLPERF_RN50,
         stack="mlperf3-rn50-dgxh100-1n",
         src="MLPerf Training v3.0, NVIDIA dgxh100_n96 ResNet-50 result logs: 96 DGX H100, "
             "global batch 32256, LARS, MXNet 23.04, 56 epochs, scored as MLPerf scores (five "
             "runs less the fastest, 22.092 s, and the slowest, 22.255 s: 22.212, 22.162, "
             "22.100 s)",
         hw="as the 64-node run (the same system description, 96 nodes); the switches "
            "reduce (SHARP: SBATCH_NETWORK=sharp)"),
    dict(id="mlperf3-bert-dgxh100-64n", gen="hopper", unit="seq",
         pub=(2800592 + 2801095 + 2975450 + 2800180 + 2800512 + 2799395 + 2974334 + 2801230)
         / (20.094 + 20.200 + 21.471 + 20.144 + 21.465 + 20.126 + 21.410 + 20.211) / 2,
         args="--gpu h100 --gpus 512 " + MLPERF_BERT + " --per-gpu-batch 3",
         stack="mlperf3-bert-dgxh100-1n",
         src="MLPerf Training v3.0, NVIDIA dgxh100_n64 BERT result logs: 64 DGX H100, 3 packed "
             "sequences of 512 tokens a GPU (two samples each: global batch 3072 samples), "
             "LAMB, PyTorch 23.04; train_samples over run_start to run_stop of ten runs less "
             "the fastest (17.738 s) and result_4 (aborted), halved: packed sequences/s, as its "
             "one-node row",
         hw="as the ResNet-50 runs (the same system description, PyTorch); SHARP "
            "(SBATCH_NETWORK=sharp), not modelled: dtsim's ZeRO runs its collectives as rings"),
    dict(id="mlperf3-bert-dgxh100-96n", gen="hopper", unit="seq",
         pub=(3004287 + 2800856 + 2600791 + 3198471 + 3007513 + 2799240 + 2799638 + 3003007)
         / (15.585 + 14.722 + 13.683 + 16.656 + 15.843 + 14.610 + 14.666 + 15.775) / 2,
         args="--gpu h100 --gpus 768 " + MLPERF_BERT + " --per-gpu-batch 3",
         stack="mlperf3-bert-dgxh100-1n",
         src="MLPerf Training v3.0, NVIDIA dgxh100_n96 BERT result logs: 96 DGX H100, 3 packed "
             "sequences a GPU (global batch 4608 samples), as the 64-node run; ten runs less "
             "the fastest (13.654 s) and the slowest (16.694 s)",
         hw="as above; SHARP (SBATCH_NETWORK=sharp), not modelled"),
    dict(id="mpt1b-h100-128", gen="hopper", unit="tok", pub=44123.0,
         analytic=True, args="--gpu h100 --gpus 128 --model gpt3-xl " + MPT + " --per-gpu-batch 12 --shard 2",
         stack="mpt1b-h100-bf16",
         src="mosaicml/llm-foundry benchmarking README@c90b9b31, 'H100 80GB BF16 (Large "
             "Scale, >= 128 GPUs)': MPT-1B, 128 GPUs, micro-batch 12, SHARD_GRAD_OP, 44123 "
             "tokens/s per GPU",
         hw="8 H100 SXM per node on NVSwitch, network not stated: dtsim's H100 node (8 x NDR)"),
    dict(id="mpt3b-h100-256", gen="hopper", unit="tok", pub=22772.0,
         analytic=True, args="--gpu h100 --gpus 256 --model gpt3-2.7b " + MPT + " --per-gpu-batch 8 --shard 2",
         src="the same table: MPT-3B, 256 GPUs, micro-batch 8, SHARD_GRAD_OP, 22772 tokens/s "
             "per GPU",
         hw="as above"),
    dict(id="mpt7b-h100-512", gen="hopper", unit="tok", pub=9670.0,
         analytic=True, args="--gpu h100 --gpus 512 --model gpt3-6.7b " + MPT + " --per-gpu-batch 6 --shard 3",
         stack="mpt7b-h100-bf16",
         src="the same README, 'H100 80GB BF16 (Large Scale, >= 128 GPUs)': MPT-7B, 512 GPUs, "
             "micro-batch 6, FSDP FULL_SHARD, no activation checkpointing, 9670 tokens/s per GPU",
         hw="as above"),
    dict(id="mpt13b-h100-64", gen="hopper", unit="tok", pub=4800.0,
         analytic=True, args="--gpu h100 --gpus 64 --model gpt3-13b " + MPT + " --per-gpu-batch 2 --shard 3",
         stack="mpt13b-h100-bf16",
         src="the same README, 'H100 80GB BF16': MPT-13B, 64 GPUs, micro-batch 2, FSDP "
             "FULL_SHARD, 4800 tokens/s per GPU",
         hw="as above"),
]
FAST = "--iters 1 --warmup 1 --json --quiet"


def run(exe, r, extra, quick):
    args = r["args"].split() + FAST.split() + extra + (["--analytic"] if r.get("analytic")
                                                         and not quick else [])
    if quick:  # the smallest cluster of the same nodes: one or two of them
        args = [a for a in args]
        i = args.index("--gpus") if "--gpus" in args else -1
        gpn = 16 if "DGX" in r["hw"] and "16 V100" in r["hw"] else 4 if r["id"] in (
            "mikami2018", "yamazaki2019", "cho2017") else 8
        small = str(2 * gpn)
        if i >= 0:
            args[i + 1] = small
        else:
            args += ["--gpus", small]
        args += ["--analytic"]
    t = time.time()
    p = subprocess.run([exe] + args, capture_output=True, text=True, timeout=3600)
    if p.returncode:
        raise SystemExit("bench/heldout.py: %s: dtsim %s: exit %d\n%s" % (
            r["id"], " ".join(args), p.returncode, p.stderr))
    j = json.loads(p.stdout)[0]
    j["_wall"] = time.time() - t
    j["_cmd"] = "dtsim " + " ".join(a for a in args if a not in ("--json", "--quiet"))
    return j


def measure(j, unit):
    if unit == "tok":
        return j["tokens_per_s"] / j["gpus"]
    return j["images_per_s"]


# The three ways a run's GPU is calibrated, as sim/dtsim_heldout.h numbers them: 0 the roofline
# alone, 1 the table's default row, 2 a single node of the run's own software and network
# (--gpu-img-s: the measurement a buyer makes on one node before buying)
ROOF, TABLE, STACK = 0, 1, 2


def errors(rows, cal):
    """[(gen, error)] of the runs scored that way, as the table prints them (to 0.1 %)"""
    rnd = lambda e: round(e, 3)
    if cal == TABLE:
        return [(r["gen"], rnd(r["err"])) for r in rows if r["calibrated"]]
    if cal == STACK:
        return [(r["gen"], rnd(r["err_stack"])) for r in rows if "err_stack" in r]
    return [(r["gen"], rnd(r["err_roof"])) for r in rows]


def bands(rows):
    """{(gen, cal): (lo, hi, n, basis)} from the rows' errors scored each way (ROOF, TABLE,
    STACK): the most negative and most positive error, 0 included."""
    out = {}
    gens = sorted({r["gen"] for r in rows})
    for cal in (TABLE, ROOF, STACK):
        pool = errors(rows, cal)
        for g in gens:
            mine = [e for gg, e in pool if gg == g]
            basis = "its generation's"
            if len(mine) < 3:
                mine, basis = [e for _, e in pool], "every generation's"
            out[(g, cal)] = (min(0, min(mine)), max(0, max(mine)), len(mine), basis)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dtsim", default="build/dtsim")
    ap.add_argument("--out", default="bench/HELDOUT.md")
    ap.add_argument("--header", default="sim/dtsim_heldout.h")
    ap.add_argument("--only", nargs="*")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("-j", type=int, default=1)
    a = ap.parse_args()
    runs = [r for r in RUNS if not a.only or r["id"] in a.only]
    jobs = []
    for r in runs:
        jobs.append((r, ["--calib", "table"]))  # held out: the table's row, even for a preset
        jobs.append((r, ["--calib", "none"]))   # the roofline alone
        if r.get("stack"):
            jobs.append((r, ["--calib", r["stack"]]))  # a single node of its own software
        if r.get("preset"):
            jobs.append((r, []))                # the preset's own paper figure: fitted
    t0 = time.time()
    with concurrent.futures.ThreadPoolExecutor(a.j) as ex:
        res = list(ex.map(lambda jb: run(a.dtsim, jb[0], jb[1], a.quick), jobs))
    committed = {}
    if a.quick:  # the committed table's calibration column
        for line in open(a.out):
            c = [x.strip() for x in line.split("|")]
            if len(c) > 10 and c[2] in ("pascal", "volta", "ampere", "hopper"):
                committed[c[1]] = c[6]
    k = 0
    rows = []
    for r in runs:
        held, roof = res[k], res[k + 1]
        k += 2
        stack = None
        if r.get("stack"):
            stack, k = res[k], k + 1
        fit = None
        if r.get("preset"):
            fit, k = res[k], k + 1
        if a.quick:  # the row each run is calibrated from is the committed table's
            calib = held.get("calibration", "")
            want = committed.get(r["id"])
            if want != calib:
                raise SystemExit("FAIL heldout quick: %s: calibration %r, bench/HELDOUT.md has %r"
                                 % (r["id"], calib, want))
            if stack and stack.get("calibration") != "calibrated: " + r["stack"]:
                raise SystemExit("FAIL heldout quick: %s: --calib %s gave %r" % (
                    r["id"], r["stack"], stack.get("calibration")))
            print("ok: %s: %s, as committed (%s)" % (r["id"], calib, held["_cmd"]))
            continue
        row = dict(r, held=measure(held, r["unit"]), roof=measure(roof, r["unit"]),
                   calibration=held["calibration"], calibrated=held["calibration"] !=
                   "uncalibrated (roofline)", cmd=held["_cmd"], wall=held["_wall"])
        row["err"] = row["held"] / r["pub"] - 1
        row["err_roof"] = row["roof"] / r["pub"] - 1
        if stack:
            row["stackv"] = measure(stack, r["unit"])
            row["err_stack"] = row["stackv"] / r["pub"] - 1
        if fit:
            row["fit"] = measure(fit, r["unit"])
            row["err_fit"] = row["fit"] / r["pub"] - 1
        rows.append(row)
    if a.quick:
        print("PASS heldout quick: %d runs" % len(runs))
        return
    write(a, rows, bands(rows), time.time() - t0)


def pct(x):
    return "%+.1f %%" % (100 * x)


UNITS = {"img": "images/s", "seq": "sequences/s", "tok": "tokens/s per GPU"}


def write(a, rows, b, wall):
    cal = [abs(r["err"]) for r in rows if r["calibrated"]]
    allh = [abs(r["err"]) for r in rows]
    roof = [abs(r["err_roof"]) for r in rows]
    L = []
    L.append("# dtsim on held-out runs\n")
    L.append("Written by `bench/heldout.py --dtsim build/dtsim` (%.0f s here); do not edit by "
             "hand. Each run is configured from its publication's hardware description only; "
             "one GPU's speed comes from the calibration table (`dtsim calibrations`: "
             "published single-GPU and single-node measurements), the row dtsim picks by "
             "default, never a figure of the run predicted. Scored up to four ways: **held "
             "out** (that row), **one node of its software** where the run's publication or "
             "its software's own tables give one node's figure for the same network (`--calib "
             "ROW`: what a buyer measures on one node before buying, dtsim's `--gpu-img-s`; "
             "the node is modelled whole, its own collectives included), **roofline** "
             "(`--calib none`: no measurement at all), and for the landmark presets "
             "**fitted** (their own paper's figure, in-sample: bench/PAPERS.md).\n" % wall)
    L.append("## Summary\n")
    L.append("| | runs | median abs. error | largest |")
    L.append("|---|---|---|---|")
    L.append("| held out, calibrated from the table | %d | %.1f %% | %.1f %% |" % (
        len(cal), 100 * statistics.median(cal), 100 * max(cal)))
    L.append("| held out, all (uncalibrated ones on the roofline) | %d | %.1f %% | %.1f %% |" % (
        len(allh), 100 * statistics.median(allh), 100 * max(allh)))
    st = [abs(r["err_stack"]) for r in rows if "err_stack" in r]
    L.append("| held out, calibrated from one node of the run's own software and network | "
             "%d | %.1f %% | %.1f %% |" % (len(st), 100 * statistics.median(st), 100 * max(st)))
    L.append("| roofline alone (`--calib none`) | %d | %.1f %% | %.1f %% |" % (
        len(roof), 100 * statistics.median(roof), 100 * max(roof)))
    fit = [abs(r["err_fit"]) for r in rows if "err_fit" in r]
    L.append("| fitted (the presets' own figures) | %d | %.1f %% | %.1f %% |\n" % (
        len(fit), 100 * statistics.median(fit), 100 * max(fit)))
    L.append("## Runs\n")
    L.append("| run | generation | published | held out | error | calibration | roofline | "
             "error | fitted | error | one node of its software | error |")
    L.append("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        L.append("| %s | %s | %.6g %s | %.6g | %s | %s | %.6g | %s | %s | %s | %s | %s |" % (
            r["id"], r["gen"], r["pub"], UNITS[r["unit"]], r["held"], pct(r["err"]),
            r["calibration"], r["roof"], pct(r["err_roof"]),
            "%.6g" % r["fit"] if "fit" in r else "", pct(r["err_fit"]) if "fit" in r else "",
            "%.6g (%s)" % (r["stackv"], r["stack"]) if "stackv" in r else "",
            pct(r["err_stack"]) if "stackv" in r else ""))
    L.append("\n## The band dtsim prints\n")
    L.append("The band of a run spans the held-out errors of the runs like it, from the most "
             "negative to the most positive (the prediction itself included): its GPU "
             "generation, and how its GPU was calibrated: from the table's default row, from "
             "one node of its own software and network (a run given `--gpu-img-s`, the figure "
             "a buyer measures on one node), or on the roofline alone (every generation's runs "
             "where its own has fewer than three: two errors make no band). An error of +e on "
             "throughput means the real run took (1 + e) times the predicted time, so the "
             "time-to-train printed for a run lies between (1 + low) and (1 + high) times its "
             "prediction. sim/dtsim_heldout.h carries these; tests/sim/heldout_band.py "
             "recomputes them from the table above.\n")
    L.append("| generation | calibrated from the table | runs | from one node of its software "
             "(`--gpu-img-s`) | runs | on the roofline | runs |")
    L.append("|---|---|---|---|---|---|---|")
    for g in sorted({k[0] for k in b}):
        L.append("| %s |" % g + " |".join(" %+.1f %% / %+.1f %% (%s) | %d" % (
            100 * b[(g, c)][0], 100 * b[(g, c)][1], b[(g, c)][3], b[(g, c)][2])
            for c in (TABLE, STACK, ROOF)) + " |")
    L.append("\n## Left out, and why\n")
    L.append("Runs found but not scored, because dtsim does not model what they did: MPT-7B on "
             "128 A100 40GB and MPT-70B on 64 A100 80GB (llm-foundry, the same tables) ran with "
             "activation checkpointing, which dtsim's data-parallel simulation does not run "
             "(its 3D cost model does); the runs that use tensor and pipeline parallelism "
             "(Megatron-LM's table, BLOOM-176B, MT-NLG 530B) are scored by that model in "
             "bench/MEGATRON.md; OPT's and MLPerf's GPT-3 compose FSDP or ZeRO with tensor "
             "parallelism in ways it does not. MLPerf Training v3.0's 8-node DGX H100 BERT run "
             "trained unpadded sequences of their own lengths rather than packed 512-token "
             "ones, which dtsim's fixed sequence length does not describe (its 64- and 96-node "
             "runs and one node packed them: scored). MLPerf Training v2.0's DGX A100 BERT runs: "
             "its one node trained unpadded sequences, so no row matches its packed runs at "
             "128 and 512 nodes.\n")
    L.append("Scored with what dtsim models of them, and what it does not: MLPerf's "
             "ResNet-50 runs of 64 nodes and more reduced their gradients in the switches "
             "(SHARP: SBATCH_NETWORK=sharp in their configurations), modelled (`--sharp`); "
             "its BERT runs did too, which dtsim's ZeRO, whose reduce-scatter and allgather "
             "run as rings between hosts, does not model (they are predicted slow by that). "
             "The 527-node ResNet-50 run normalised its batches over pairs of GPUs "
             "(BN_GROUP=2: a small exchange at every batch-norm layer), which dtsim does not "
             "model (it is predicted fast by that).\n")
    L.append("\n## Where every run came from\n")
    for r in rows:
        L.append("**%s** — %s. Hardware: %s. Command: `%s`.\n" % (r["id"], r["src"], r["hw"],
                                                               r["cmd"]))
    with open(a.out + ".tmp", "w") as f:
        f.write("\n".join(L) + "\n")
    os.replace(a.out + ".tmp", a.out)
    H = ["// dtsim_heldout.h — written by bench/heldout.py from bench/HELDOUT.md's runs; do not "
         "edit by hand.", "// The band of time-to-train: the largest held-out error of the "
         "runs of a GPU generation,", "// calibrated from the table (1), from one node of its own "
         "software (2) or on the roofline alone", "// (0): the most negative and most positive "
         "throughput error (0 included) of the `runs` it rests on", "// (own: its "
         "generation's; else every one's).",
         "#ifndef DT_SIM_DTSIM_HELDOUT_H", "#define DT_SIM_DTSIM_HELDOUT_H", "",
         "static const struct {", "    const char *gen;", "    int calibrated, runs, own;",
         "    double lo, hi;", "} dtsim_heldout[] = {"]
    for (g, c), (lo, hi, n, basis) in sorted(b.items()):
        H.append('    {"%s", %d, %d, %d, %.3f, %.3f},' % (g, c, n, basis == "its generation's",
                                                        lo, hi))
    H += ["};", "", "#endif"]
    with open(a.header + ".tmp", "w") as f:
        f.write("\n".join(H) + "\n")
    os.replace(a.header + ".tmp", a.header)
    print("bench/heldout.py: %s, %s; held out, calibrated: median %.1f %%, largest %.1f %%" % (
        a.out, a.header, 100 * statistics.median(cal), 100 * max(cal)))


if __name__ == "__main__":
    sys.exit(main())
