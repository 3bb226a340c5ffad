#!/usr/bin/env python3
"""hf_layout.py DTRAIN WORKDIR [transformers] — dtrain's gpt models in Hugging Face's GPT-2
layout (nn/safetensors_hf.c): `--save-hf DIR` and `--weights DIR`.

Without the third argument (numpy only; always runs):
  - dtrain trains gpt2-tiny for one epoch on a random text, --save-weights W and --save-hf D;
  - an independent float64 GPT-2 in numpy reads D/model.safetensors in Conv1D's (in, out)
    layout with D/config.json's sizes and computes the validation loss over dtrain's windows
    (the corpus's last 10 %, non-overlapping windows of T + 1 bytes): it must equal the
    loss dtrain reported for the same weights (1e-5 relative);
  - `--weights D` reads the layout back: 40 greedy tokens from it equal those from W;
  - refusals (exit 2, the message): D/model.safetensors given as a plain file (its transpose,
    naming Conv1D's layout), a config.json whose n_head or activation differs, one missing.
With `transformers` (run by the Python that has it): GPT2LMHeadModel.from_pretrained(D)
gives dtrain's validation loss (1e-5), and a directory it writes with save_pretrained is read
by `dtrain --weights` to the same greedy tokens.
Fresh seed each run (printed; DT_TEST_SEED replays). Prints "PASS hf_layout".
"""
import json
import os
import shutil
import struct
import subprocess
import sys
import time

import numpy as np

T = 32


def read_st(path):
    b = open(path, "rb").read()
    n = struct.unpack("<Q", b[:8])[0]
    h = json.loads(b[8:8 + n])
    d = b[8 + n:]
    return {k: np.frombuffer(d[v["data_offsets"][0]:v["data_offsets"][1]], dtype="<f4")
            .astype(np.float64).reshape(v["shape"]) for k, v in h.items() if k != "__metadata__"}


def layernorm(x, g, b):
    m = x.mean(-1, keepdims=True)
    return (x - m) / np.sqrt(((x - m) ** 2).mean(-1, keepdims=True) + 1e-5) * g + b


def logits_hf(w, cfg, ids):
    """float64 GPT-2 forward in Hugging Face's layout (Conv1D: x @ W + b)."""
    n, C, NH = len(ids), cfg["n_embd"], cfg["n_head"]
    x = w["transformer.wte.weight"][ids] + w["transformer.wpe.weight"][:n]
    mask = np.tril(np.ones((n, n), bool))
    for i in range(cfg["n_layer"]):
        p = "transformer.h.%d." % i
        h = layernorm(x, w[p + "ln_1.weight"], w[p + "ln_1.bias"])
        qkv = h @ w[p + "attn.c_attn.weight"] + w[p + "attn.c_attn.bias"]
        q, k, v = (qkv[:, j * C:(j + 1) * C].reshape(n, NH, C // NH).transpose(1, 0, 2) for j in range(3))
        a = np.where(mask, q @ k.transpose(0, 2, 1) / np.sqrt(C // NH), -np.inf)
        a = np.exp(a - a.max(-1, keepdims=True))
        a /= a.sum(-1, keepdims=True)
        x = x + (a @ v).transpose(1, 0, 2).reshape(n, C) @ w[p + "attn.c_proj.weight"] + w[p + "attn.c_proj.bias"]
        h = layernorm(x, w[p + "ln_2.weight"], w[p + "ln_2.bias"]) @ w[p + "mlp.c_fc.weight"] + w[p + "mlp.c_fc.bias"]
        h = 0.5 * h * (1 + np.tanh(np.sqrt(2 / np.pi) * (h + 0.044715 * h ** 3)))
        x = x + h @ w[p + "mlp.c_proj.weight"] + w[p + "mlp.c_proj.bias"]
    return layernorm(x, w["transformer.ln_f.weight"], w["transformer.ln_f.bias"]) @ w["transformer.wte.weight"].T


def windows(corpus):
    """dtrain's validation windows (nn/data_text.c): the last 10 %, T + 1 bytes at i * T."""
    b = open(corpus, "rb").read()
    val = b[len(b) - int(len(b) * 0.1):]
    return [list(val[i * T:i * T + T + 1]) for i in range((len(val) - 1) // T)]


def run(cmd, want_rc=0):
    r = subprocess.run(cmd, capture_output=True)
    if r.returncode != want_rc:
        sys.exit("FAIL: %s exited %d (expected %d): %s%s" % (" ".join(cmd), r.returncode, want_rc,
                 r.stdout.decode(errors="replace")[-2000:], r.stderr.decode(errors="replace")[-2000:]))
    return r


def greedy(dtrain, weights):
    r = run([dtrain, "--model", "gpt2-tiny", "--weights", weights, "--generate", "40", "--temperature", "0",
             "--prompt", "the ", "--json", "--threads", "1"])
    return json.loads(r.stdout)["tokens"]


def refused(dtrain, weights, pattern, what):
    r = run([dtrain, "--model", "gpt2-tiny", "--weights", weights, "--generate", "5", "--threads", "1"], 2)
    err = r.stderr.decode(errors="replace")
    if pattern not in err:
        sys.exit("FAIL: %s: exit 2 but not '%s' in: %s" % (what, pattern, err))
    print("ok refused, %s: %s" % (what, err.strip()[:220]))


def main():
    dtrain, work = sys.argv[1], sys.argv[2]
    hf = len(sys.argv) > 3 and sys.argv[3] == "transformers"
    seed = int(os.environ.get("DT_TEST_SEED", "0")) or int(time.time() * 1000) % (1 << 31)
    print("# seed %d (replay with DT_TEST_SEED=%d)" % (seed, seed))
    rng = np.random.default_rng(seed)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    corpus, W, D = (os.path.join(work, x) for x in ("text", "w.safetensors", "hf"))
    words = ["".join(rng.choice(list("etaoinshr"), rng.integers(1, 8))) for _ in range(40)]
    open(corpus, "w").write(" ".join(rng.choice(words) for _ in range(3000)))
    r = run([dtrain, "--model", "gpt2-tiny", "--data", "text:" + corpus, "--seq-len", str(T), "--epochs", "1",
             "--json", "--quiet", "--threads", "1", "--seed", str(seed), "--save-weights", W, "--save-hf", D])
    loss = json.loads(r.stdout.decode().strip().splitlines()[-1])["test_loss"]
    cfg = json.load(open(os.path.join(D, "config.json")))
    win = windows(corpus)
    if hf:
        import torch
        import transformers
        m = transformers.GPT2LMHeadModel.from_pretrained(D).eval()
        ids = torch.tensor(win)
        with torch.no_grad():  # the logits, not labels=: HF's loss drops the last position
            lg = m(ids[:, :T].contiguous()).logits.double()
        ref = torch.nn.functional.cross_entropy(lg.reshape(-1, lg.shape[-1]), ids[:, 1:].reshape(-1)).item()
        who = "transformers %s GPT2LMHeadModel.from_pretrained" % transformers.__version__
    else:
        w = read_st(os.path.join(D, "model.safetensors"))
        tot = 0.0
        for x in win:
            z = logits_hf(w, cfg, x[:T])
            z = z - z.max(-1, keepdims=True)
            lp = z - np.log(np.exp(z).sum(-1, keepdims=True))
            tot += -lp[np.arange(T), x[1:]].sum()
        ref = tot / (len(win) * T)
        who = "a float64 GPT-2 in numpy reading Conv1D's layout"
    if not abs(ref - loss) <= 1e-5 * abs(loss):
        sys.exit("FAIL: validation loss %.7f from %s, dtrain %.7f" % (ref, who, loss))
    print("ok: %s gives dtrain's validation loss: %.6f against %.6f (%d windows of %d)" % (who, ref, loss, len(win), T))
    base = greedy(dtrain, W)
    if hf:
        D2 = os.path.join(work, "hf2")
        m.save_pretrained(D2)
        if greedy(dtrain, D2) != base:
            sys.exit("FAIL: dtrain --weights on save_pretrained's directory gives other greedy tokens")
        print("ok: dtrain --weights reads save_pretrained's directory (%s): the same 40 greedy tokens" % sorted(os.listdir(D2)))
        print("PASS hf_layout")
        return
    if greedy(dtrain, D) != base:
        sys.exit("FAIL: --weights DIR gives other greedy tokens than the file it was saved beside")
    print("ok: --weights DIR reads the layout back: the same 40 greedy tokens")
    refused(dtrain, os.path.join(D, "model.safetensors"), "Hugging Face's GPT-2 Conv1D layout (in, out)", "the HF file as a plain file")
    for key, val, pat in (("n_head", 8, "n_head is 8, the model has 4"),
                          ("activation_function", "relu", "activation_function relu")):
        bad = os.path.join(work, "bad_" + key)
        shutil.copytree(D, bad)
        c = dict(cfg)
        c[key] = val
        json.dump(c, open(os.path.join(bad, "config.json"), "w"))
        refused(dtrain, bad, pat, "config.json's " + key)
    os.remove(os.path.join(bad, "config.json"))
    refused(dtrain, bad, "config.json: cannot open", "no config.json")
    print("PASS hf_layout")


if __name__ == "__main__":
    main()
