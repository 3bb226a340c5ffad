#!/usr/bin/python3
"""gpt_bpe.py DTRAIN DTTOK WORKDIR [transformers] — dtrain's gpt models on byte-level BPE
(nn/bpe*.c, real/dtrain_text.c), checked from outside:

  - `dtrain --vocab V --data text:C` (the tokenizer learned in memory) and `dttok prepare` +
    `dtrain --data tokens:DIR` (shards written once) train on the same tokens: the same loss
    at every step, bit for bit, and the same validation loss;
  - an independent float64 GPT-2 in numpy (tests/mpi/hf_layout.py) reading --save-hf's
    directory, on the validation split encoded by an independent encoder in Python reading
    its merges.txt (tests/ref/bpe_gpt2.py: GPT-2's encoder.py loop), gives dtrain's validation
    loss (1e-5), and dtrain's bits per byte are that loss over the split's bytes;
  - `--generate` from --save-weights (the tokenizer in its metadata) and from the directory
    (merges.txt) give the same tokens; the prompt is the Python encoding of its text and the
    printed text is the prompt plus the tokens' bytes;
  - refusals (exit 2 and the message): --vocab with --tokenizer, a vocabulary the corpus cannot
    fill, a missing shard, a shard of a larger vocabulary, --vocab on an image model.
With `transformers` (run by the Python that has it): GPT2TokenizerFast.from_pretrained(DIR)
encodes the validation text as dtrain does, and GPT2LMHeadModel.from_pretrained(DIR) gives
dtrain's validation loss on those tokens. Fresh seed each run (DT_TEST_SEED replays).
Prints "PASS gpt_bpe"; "SKIPPED" without the regex module.
"""
import json
import math
import os
import shutil
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "ref"))
try:
    import regex  # noqa: F401  (bpe_gpt2 needs it)
except ImportError:
    print("SKIPPED gpt_bpe: needs the Python regex module (apt-get install python3-regex)")
    sys.exit(0)
import bpe_gpt2  # noqa: E402
import hf_layout  # noqa: E402

T = 32


def run(cmd, want_rc=0):
    return hf_layout.run([str(c) for c in cmd], want_rc)


def last_json(r):
    return json.loads(r.stdout.decode().strip().splitlines()[-1])


def refused(cmd, pattern, what):
    r = run(cmd, 2)
    err = r.stderr.decode(errors="replace")
    if pattern not in err:
        sys.exit("FAIL: %s: exit 2 but not '%s' in: %s" % (what, pattern, err))
    print("ok refused, %s: %s" % (what, err.strip()[:200]))


def main():
    dtrain, dttok, work = sys.argv[1:4]
    hf = len(sys.argv) > 4 and sys.argv[4] == "transformers"
    seed = int(os.environ.get("DT_TEST_SEED", "0")) or int(time.time() * 1000) % (1 << 31)
    print("# seed %d (replay with DT_TEST_SEED=%d)" % (seed, seed))
    rng = np.random.default_rng(seed)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    corpus, W, D, P = (os.path.join(work, x) for x in ("text", "w.safetensors", "hf", "prep"))
    words = ["".join(rng.choice(list("etaoinshrdlué"), rng.integers(1, 9))) for _ in range(60)]
    words += ["it's", "2026", "—", "\n"]
    with open(corpus, "w", encoding="utf-8") as f:
        f.write(" ".join(rng.choice(words) for _ in range(6000)))
    V = int(rng.integers(300, 420))
    common = ["--model", "gpt2-tiny", "--seq-len", T, "--max-steps", 25, "--json", "--quiet",
              "--threads", 1, "--seed", seed]
    a = last_json(run([dtrain, "--data", "text:" + corpus, "--vocab", V, "--save-weights", W,
                       "--save-hf", D] + common))
    run([dttok, "prepare", "--vocab", V, "--out", P, corpus])
    b = last_json(run([dtrain, "--data", "tokens:" + P] + common))
    if a["train_loss_steps"] != b["train_loss_steps"] or a["test_loss"] != b["test_loss"]:
        sys.exit("FAIL: --vocab in memory and dttok prepare's shards train differently: %s / %s"
                 % (a["train_loss_steps"][:4], b["train_loss_steps"][:4]))
    if a["tokenizer"] != "bpe" or a["vocab"] != V:
        sys.exit("FAIL: --json says tokenizer %s, vocab %s" % (a["tokenizer"], a["vocab"]))
    print("ok: --vocab %d in memory and dttok prepare's shards: the same %d step losses, bit "
          "for bit" % (V, len(a["train_loss_steps"])))

    # the validation loss from outside: Python's encoder, numpy's GPT-2
    merges, id_bytes = bpe_gpt2.read_merges(os.path.join(D, "merges.txt"))
    raw = open(corpus, "rb").read()
    val = raw[len(raw) - int(len(raw) * 0.1):]
    ids = bpe_gpt2.encode(val.decode("utf-8", errors="surrogateescape"), merges)
    if b"".join(id_bytes[i] for i in ids) != val:
        sys.exit("FAIL: the validation split is not UTF-8 whole; the test must cut it elsewhere")
    win = [ids[i * T:i * T + T + 1] for i in range((len(ids) - 1) // T)]
    cfg = json.load(open(os.path.join(D, "config.json")))
    w = hf_layout.read_st(os.path.join(D, "model.safetensors"))
    tot = 0.0
    for x in win:
        z = hf_layout.logits_hf(w, cfg, x[:T])
        z = z - z.max(-1, keepdims=True)
        lp = z - np.log(np.exp(z).sum(-1, keepdims=True))
        tot += -lp[np.arange(T), x[1:]].sum()
    ref = tot / (len(win) * T)
    if not abs(ref - a["test_loss"]) <= 1e-5 * abs(ref):
        sys.exit("FAIL: validation loss %.7f from numpy on Python's encoding, dtrain %.7f"
                 % (ref, a["test_loss"]))
    bpb = ref / math.log(2) * len(ids) / len(val)
    if not abs(bpb - a["test_bits_per_byte"]) <= 1e-5 * bpb:
        sys.exit("FAIL: bits per byte %.6f, expected %.6f (%d tokens over %d bytes)"
                 % (a["test_bits_per_byte"], bpb, len(ids), len(val)))
    print("ok: numpy's GPT-2 on Python's encoding of the validation split: loss %.6f (dtrain "
          "%.6f), %.4f bits per byte (%d tokens, %d bytes)" % (ref, a["test_loss"], bpb,
                                                             len(ids), len(val)))

    # sampling through the tokenizer
    prompt = "it's the "
    gen = ["--model", "gpt2-tiny", "--generate", 30, "--prompt", prompt, "--seed", seed,
           "--threads", 1]
    jw = json.loads(run([dtrain, "--weights", W, "--json"] + gen).stdout)
    jd = json.loads(run([dtrain, "--weights", D, "--json"] + gen).stdout)
    text = run([dtrain, "--weights", W] + gen).stdout
    if jw != jd or jw["tokenizer"] != "bpe":
        sys.exit("FAIL: --generate from the weights file and from the directory differ")
    if jw["prompt"] != bpe_gpt2.encode(prompt, merges):
        sys.exit("FAIL: the prompt's ids %s, Python's encoding %s"
                 % (jw["prompt"], bpe_gpt2.encode(prompt, merges)))
    want = prompt.encode() + b"".join(id_bytes[i] if i < V - 1 else b"<|endoftext|>"
                                      for i in jw["tokens"]) + b"\n"
    if text != want:
        sys.exit("FAIL: the sample's text %r is not its tokens' bytes %r" % (text, want))
    print("ok: --generate carries the tokenizer (file metadata and merges.txt): %r"
          % text.decode(errors="replace")[:60])

    if hf:
        import torch
        import transformers
        tok = transformers.GPT2TokenizerFast.from_pretrained(D)
        # the split may begin inside a character (é, — are 2 and 3 bytes; seed 1294827218):
        # a tokenizer of strings cannot be given those bytes, so from the first whole one,
        # against Python's encoding of the same (checked above against dtrain's, whole)
        cut = 0
        while cut < len(val) and 0x80 <= val[cut] < 0xC0:
            cut += 1
        text = val[cut:].decode("utf-8")  # (it ends where the corpus does: whole)
        want = ids if cut == 0 else bpe_gpt2.encode(text, merges)
        hf_ids = tok(text)["input_ids"]
        if hf_ids != want:
            k = next((i for i, (p, q) in enumerate(zip(hf_ids, want)) if p != q),
                     min(len(hf_ids), len(want)))
            sys.exit("FAIL: GPT2TokenizerFast encodes the validation split otherwise, at token %d"
                     % k)
        m = transformers.GPT2LMHeadModel.from_pretrained(D).eval()
        x = torch.tensor(win)
        with torch.no_grad():
            lg = m(x[:, :T].contiguous()).logits.double()
        hl = torch.nn.functional.cross_entropy(lg.reshape(-1, lg.shape[-1]),
                                               x[:, 1:].reshape(-1)).item()
        if not abs(hl - a["test_loss"]) <= 1e-5 * hl:
            sys.exit("FAIL: from_pretrained's loss %.7f, dtrain %.7f" % (hl, a["test_loss"]))
        print("ok: transformers %s: GPT2TokenizerFast gives the same %d tokens, GPT2LMHeadModel "
              "the loss %.6f (dtrain %.6f)" % (transformers.__version__, len(ids), hl,
                                                a["test_loss"]))
        print("PASS gpt_bpe")
        return

    base = ["--model", "gpt2-tiny", "--max-steps", 1, "--threads", 1]
    refused([dtrain, "--data", "text:" + corpus, "--vocab", V, "--tokenizer", D] + base,
            "give one of them", "--vocab with --tokenizer")
    refused([dtrain, "--data", "text:" + corpus, "--vocab", 900000] + base, "at most",
            "a vocabulary larger than the corpus gives")
    os.rename(os.path.join(P, "val.bin"), os.path.join(P, "v.bin"))
    refused([dtrain, "--data", "tokens:" + P] + base, "val.bin: cannot open", "a missing shard")
    small = os.path.join(work, "small")
    run([dttok, "train", "--vocab", 270, "--out", small, corpus])
    for f in ("merges.txt", "vocab.json"):
        shutil.copy(os.path.join(small, f), os.path.join(P, f))
    os.rename(os.path.join(P, "v.bin"), os.path.join(P, "val.bin"))
    refused([dtrain, "--data", "tokens:" + P] + base, "outside the tokenizer's vocabulary of 270",
            "shards of a larger vocabulary")
    refused([dtrain, "--model", "smallcnn", "--data", "synthetic", "--vocab", 300, "--max-steps", 1],
            "--vocab is for the gpt models", "--vocab on an image model")
    print("PASS gpt_bpe")


if __name__ == "__main__":
    main()
