#!/usr/bin/env python3
"""test_dtlab.py — unit tests of notebooks/dtlab.py: argument building, failures that name
what to fix, and every output it reads, each against the program that wrote it (a fresh
small run, not a stored file). Exit 77 (a skip, for CTest) without pandas.

usage: test_dtlab.py [unittest options]     (DTLAB_BUILD: the build directory)
"""
import json
import os
import random
import shutil
import sys
import tempfile
import unittest

try:
    import pandas  # noqa: F401
except ImportError:
    print(f"SKIPPED: notebooks/test_dtlab.py: this Python ({sys.executable}) lacks pandas "
          "(Debian: apt-get install python3-pandas)")
    sys.exit(77)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dtlab  # noqa: E402

RNG = random.Random()


class Flags(unittest.TestCase):
    def test_every_kind_of_value(self):
        n = RNG.randint(2, 4096)
        self.assertEqual(dtlab.flags(dict(gpus=n, no_overlap=True, fp16_grads=False,
                                          fusion="segments:2", sweep_gpus=[8, n], seed=None)),
                         ["--gpus", str(n), "--no-overlap", "--fusion", "segments:2",
                          "--sweep-gpus", f"8,{n}"])

    def test_order_is_kept(self):
        keys = [f"k{i}" for i in range(RNG.randint(2, 9))]
        RNG.shuffle(keys)
        got = dtlab.flags({k: 1 for k in keys})
        self.assertEqual(got[0::2], ["--" + k for k in keys])


class Failures(unittest.TestCase):
    def test_missing_build_names_the_fix(self):
        old = os.environ.get("DTLAB_BUILD")
        os.environ["DTLAB_BUILD"] = tempfile.mkdtemp(prefix="nobuild-")
        try:
            with self.assertRaises(dtlab.DtlabError) as cm:
                dtlab.dtsim(gpus=8)
            self.assertIn("not found", str(cm.exception))
            self.assertIn("DTLAB_BUILD", str(cm.exception))
        finally:
            shutil.rmtree(os.environ["DTLAB_BUILD"])
            if old is None:
                del os.environ["DTLAB_BUILD"]
            else:
                os.environ["DTLAB_BUILD"] = old

    def test_unknown_preset_carries_dtsims_message(self):
        name = f"nosuch{RNG.randint(0, 10**6)}"
        with self.assertRaises(dtlab.DtlabError) as cm:
            dtlab.dtsim(preset=name)
        msg = str(cm.exception)
        self.assertIn("dtsim failed (exit 2)", msg)
        self.assertIn(name, msg)          # dtsim's own message names the bad value
        self.assertIn("goyal2017", msg)   # and the valid ones

    def test_not_a_trace(self):
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
            f.write("{ not json")
        try:
            with self.assertRaises(dtlab.DtlabError) as cm:
                dtlab.trace(f.name)
            self.assertIn(f.name, str(cm.exception))
        finally:
            os.unlink(f.name)


class Outputs(unittest.TestCase):
    def test_dtsim_summary(self):
        gpus = RNG.choice([8, 16, 32])
        per = RNG.choice([8, 16, 32])
        df = dtlab.dtsim(gpus=gpus, per_gpu_batch=per, model="resnet50")
        self.assertEqual(len(df), 1)
        row = df.iloc[0]
        self.assertEqual(row.gpus, gpus)
        self.assertEqual(row.global_batch, gpus * per)
        # images/s is the global batch over the iteration time (rounded to an integer)
        self.assertAlmostEqual(row.images_per_s, gpus * per / row.iter_s, delta=1.0)
        # efficiency is per-GPU throughput against one GPU's
        self.assertAlmostEqual(row.efficiency, row.single_gpu_iter_s / row.iter_s, places=4)

    def test_sweep_has_one_row_per_point(self):
        gpus = sorted(RNG.sample([8, 16, 32, 64], 2))
        df = dtlab.sweep(gpus=gpus, algos=["ring", "hier"], per_gpu_batch=16)
        self.assertEqual(sorted(zip(df.algo, df.gpus)),
                         sorted((a, g) for a in ["ring", "hier"] for g in gpus))
        one = dtlab.dtsim(gpus=gpus[-1], algo="ring", per_gpu_batch=16)
        got = df[(df.algo == "ring") & (df.gpus == gpus[-1])].iloc[0]
        self.assertAlmostEqual(got.iter_s, one.iloc[0].iter_s, places=9)  # the same run

    def test_plan_ranks_and_prices(self):
        price = round(random.uniform(1, 5), 2)
        df = dtlab.plan(price={"v100": price}, gpus=[8, 16, 12], algos=["ring"],
                        per_gpu_batch=[64], epochs=1, confirm=1)
        self.assertEqual(len(df) + len(df.attrs["rejected"]), 3)
        self.assertIn("whole number of nodes", df.attrs["rejected"].reason[0])
        for r in df.itertuples():  # cost: the GPU-hours at the price
            self.assertAlmostEqual(r.cost, r.time_to_train_s / 3600 * r.gpus * price, delta=1e-9 * r.cost)
        self.assertTrue(df.confirmed[0] and not df.confirmed[1])
        self.assertLessEqual(df.cost[0], df.cost[1])

    def test_layouts_rank_by_step_time(self):
        gpus = random.choice([64, 128])
        df = dtlab.layouts(model="gpt3-13b", gpu="a100", gpus=gpus, batch=256)
        self.assertTrue((df.tp * df.pp * df.dp == gpus).all())
        self.assertTrue(df.step_s.is_monotonic_increasing)
        first = df.iloc[0]  # the same run through dtsim itself
        one = dtlab.dtsim(model="gpt3-13b", gpu="a100", gpus=gpus, batch=256, tp=first.tp,
                          pp=first.pp, micro_batch=first.micro_batch, shard=first.shard,
                          pp_schedule=first.pp_schedule if first.pp_chunks == 1
                          else f"interleaved:{first.pp_chunks}", recompute=first.recompute)
        self.assertEqual(one.iloc[0].iter_s, first.step_s)

    def test_trace_spans(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "t.json")
            summary, tr = dtlab.dtsim_trace(path, gpus=16, fusion="segments:2")
            with open(path) as f:
                raw = json.load(f)
        events = raw["traceEvents"] if isinstance(raw, dict) else raw
        self.assertEqual(len(tr), sum(1 for e in events if e.get("ph") == "X"))
        comm = tr[tr.track == "comm"]
        self.assertTrue(comm.name.str.startswith("allreduce bucket").all(), comm.name)
        self.assertEqual(summary.iloc[0].buckets, 2)
        self.assertTrue((tr.end_ms >= tr.start_ms).all())
        self.assertGreater(len(comm), 0)
        self.assertGreater(len(tr[tr.track == "compute"]), 0)

    def test_dtrain_log_and_summary(self):
        epochs = RNG.randint(1, 2)
        summary, log = dtlab.dtrain(np_=1, data="synthetic", synthetic_examples=256,
                                    image_size=8, model="smallcnn", epochs=epochs, batch=64,
                                    eval_every=0, seed=RNG.randint(1, 10**6), timeout=300)
        self.assertEqual(len(log), epochs)
        self.assertIn("epoch", log.columns)
        self.assertEqual(list(log.epoch), list(range(1, epochs + 1)))
        self.assertEqual(len(summary), 1)

    def test_coll_bench(self):
        df = dtlab.coll_bench(np_=2, algos=["ring"], min_bytes="1K", max_bytes="16K",
                              factor=4, iters=3, timeout=120)
        self.assertEqual(list(df.bytes), [1024, 4096, 16384])
        self.assertTrue((df.check == "OK").all())
        self.assertTrue((df.ratio - df.busbw_gbs / df.mpi_busbw_gbs).abs().max() < 1e-3)

    def test_coll_timing_agrees_with_the_model(self):
        if not shutil.which("smpirun"):
            self.skipTest("SimGrid's smpirun is not installed")
        size = RNG.choice([1 << 18, 1 << 20, 1 << 22])
        df = dtlab.coll_timing(16, [size], algos=["ring", "rhd"], group=1)
        self.assertEqual(sorted(df.algo), ["rhd", "ring"])
        self.assertTrue((df.bytes == size).all())
        # the flat platform is the α-β model's: the two agree within 5 % (docs/formulas.md)
        self.assertTrue(((df.simulated_s / df.model_s - 1).abs() < 0.05).all(), df)

    def test_papers(self):
        df = dtlab.papers()
        for p in ["goyal2017", "cho2017", "akiba2017", "jia2018", "mikami2018"]:
            self.assertIn(p, set(df.preset))
        self.assertTrue(((df.efficiency > 0) & (df.efficiency <= 1)).all())


if __name__ == "__main__":
    unittest.main()
