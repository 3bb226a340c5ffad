#!/usr/bin/env python3
"""gpt_sample_ref.py DTRAIN WORKDIR — `dtrain --generate` against a float64 GPT-2 written here
in numpy (independent of dtlab's kernels and of PyTorch).

Random gpt2-tiny weights (2 layers, 64 wide, 4 heads, 256 byte tokens; larger than GPT-2's
initialisation, so that each next-token distribution is peaked) are written as safetensors in
dtrain's names and nn.Linear's (out, in) layout. dtrain samples from them with --seq-len 16,
so that 40 tokens after a 5-byte prompt slide the window past the context. Then, token by
token, on dtrain's own sequence (teacher forcing: its choices are the context of the next),
the reference computes the distribution over the window that dtrain's rule names (the last
16 tokens) and checks:
  - greedy (--temperature 0): every token is the reference's most likely, or within 1e-4
    (relative) of it (float32 against float64 at a near tie);
  - --top-k 3 at temperature 1: every token is among the reference's 3 most likely (same
    tolerance at the third);
  - the same seed gives the same tokens, another seed other tokens; the text output is the
    prompt's bytes and the JSON's tokens.
Each run draws a fresh seed (printed); DT_TEST_SEED replays one. Exit 0 and "PASS sample".
"""
import json
import os
import struct
import subprocess
import sys
import time

import numpy as np

L, C, NH, CTX, V, T = 2, 64, 4, 64, 256, 16


def save(path, tensors):
    header, blobs, off = {"__metadata__": {"format": "pt"}}, [], 0
    for name, a in tensors.items():
        raw = np.ascontiguousarray(a, dtype="<f4").tobytes()
        header[name] = {"dtype": "F32", "shape": list(a.shape), "data_offsets": [off, off + len(raw)]}
        blobs.append(raw)
        off += len(raw)
    h = json.dumps(header).encode()
    h += b" " * ((8 - (8 + len(h)) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))


def weights(rng):
    w = {"transformer.wte.weight": rng.normal(0, 0.3, (V, C)),
         "transformer.wpe.weight": rng.normal(0, 0.3, (CTX, C)),
         "transformer.ln_f.weight": rng.uniform(0.5, 1.5, C),
         "transformer.ln_f.bias": rng.normal(0, 0.1, C)}
    for i in range(L):
        p = "transformer.h.%d." % i
        for ln in ("ln_1", "ln_2"):
            w[p + ln + ".weight"], w[p + ln + ".bias"] = rng.uniform(0.5, 1.5, C), rng.normal(0, 0.1, C)
        for name, o, n in (("attn.c_attn", 3 * C, C), ("attn.c_proj", C, C),
                           ("mlp.c_fc", 4 * C, C), ("mlp.c_proj", C, 4 * C)):
            w[p + name + ".weight"], w[p + name + ".bias"] = rng.normal(0, 0.2, (o, n)), rng.normal(0, 0.1, o)
    return w


def layernorm(x, g, b):
    m = x.mean(-1, keepdims=True)
    v = ((x - m) ** 2).mean(-1, keepdims=True)
    return (x - m) / np.sqrt(v + 1e-5) * g + b


def probs_last(w, ids):
    """float64 softmax of the next token after ids (len <= T), GPT-2's forward."""
    n = len(ids)
    x = w["transformer.wte.weight"][ids] + w["transformer.wpe.weight"][:n]
    mask = np.tril(np.ones((n, n), bool))
    for i in range(L):
        p = "transformer.h.%d." % i
        h = layernorm(x, w[p + "ln_1.weight"], w[p + "ln_1.bias"])
        qkv = h @ w[p + "attn.c_attn.weight"].T + w[p + "attn.c_attn.bias"]
        q, k, v = (qkv[:, j * C:(j + 1) * C].reshape(n, NH, C // NH).transpose(1, 0, 2) for j in range(3))
        a = q @ k.transpose(0, 2, 1) / np.sqrt(C // NH)
        a = np.where(mask, a, -np.inf)
        a = np.exp(a - a.max(-1, keepdims=True))
        a /= a.sum(-1, keepdims=True)
        y = (a @ v).transpose(1, 0, 2).reshape(n, C)
        x = x + y @ w[p + "attn.c_proj.weight"].T + w[p + "attn.c_proj.bias"]
        h = layernorm(x, w[p + "ln_2.weight"], w[p + "ln_2.bias"])
        h = h @ w[p + "mlp.c_fc.weight"].T + w[p + "mlp.c_fc.bias"]
        h = 0.5 * h * (1 + np.tanh(np.sqrt(2 / np.pi) * (h + 0.044715 * h ** 3)))
        x = x + h @ w[p + "mlp.c_proj.weight"].T + w[p + "mlp.c_proj.bias"]
    z = layernorm(x[-1], w["transformer.ln_f.weight"], w["transformer.ln_f.bias"]) @ w["transformer.wte.weight"].T
    e = np.exp(z - z.max())
    return e / e.sum()


def generate(dtrain, wfile, prompt, n, *extra, text=False):
    cmd = [dtrain, "--model", "gpt2-tiny", "--seq-len", str(T), "--weights", wfile, "--threads", "1",
           "--prompt", prompt, "--generate", str(n)] + list(extra) + ([] if text else ["--json"])
    r = subprocess.run(cmd, capture_output=True)
    if r.returncode:
        sys.exit("FAIL: %s exited %d: %s" % (" ".join(cmd), r.returncode, r.stderr.decode(errors="replace")))
    return r.stdout if text else json.loads(r.stdout)


def check(w, prompt, toks, k, what):
    ctx = [b for b in prompt.encode()]
    for j, t in enumerate(toks):
        q = probs_last(w, ctx[-T:])
        kth = np.sort(q)[::-1][k - 1]
        if not q[t] >= kth * (1 - 1e-4):
            sys.exit("FAIL: %s: token %d is %d (p %.6g), the reference's top %d start at %.6g (%s)"
                     % (what, j, t, q[t], k, kth, np.argsort(-q)[:k].tolist()))
        ctx.append(t)


def main():
    dtrain, work = sys.argv[1], sys.argv[2]
    seed = int(os.environ.get("DT_TEST_SEED", "0")) or int(time.time() * 1000) % (1 << 31)
    print("# seed %d (replay with DT_TEST_SEED=%d)" % (seed, seed))
    rng = np.random.default_rng(seed)
    w = weights(rng)
    os.makedirs(work, exist_ok=True)
    wfile = os.path.join(work, "w.safetensors")
    save(wfile, w)
    prompt, n = "".join(chr(rng.integers(97, 123)) for _ in range(5)), 40
    g = generate(dtrain, wfile, prompt, n, "--temperature", "0")
    assert g["prompt"] == list(prompt.encode()) and len(g["tokens"]) == n, g
    check(w, prompt, g["tokens"], 1, "greedy")
    print("ok: greedy, %d tokens past a window of %d, each the float64 reference's most likely" % (n, T))
    s = str(rng.integers(1, 1 << 40))
    a = generate(dtrain, wfile, prompt, n, "--temperature", "1", "--top-k", "3", "--seed", s)
    check(w, prompt, a["tokens"], 3, "top-k 3")
    print("ok: --top-k 3: every token among the reference's 3 most likely")
    b = generate(dtrain, wfile, prompt, n, "--temperature", "1", "--top-k", "3", "--seed", s)
    c = generate(dtrain, wfile, prompt, n, "--temperature", "1", "--top-k", "3", "--seed", str(int(s) + 1))
    if a["tokens"] != b["tokens"]:
        sys.exit("FAIL: the same --seed gave other tokens")
    if a["tokens"] == c["tokens"]:
        sys.exit("FAIL: another --seed gave the same %d tokens" % n)
    out = generate(dtrain, wfile, prompt, n, "--temperature", "1", "--top-k", "3", "--seed", s, text=True)
    if out != prompt.encode() + bytes(a["tokens"]) + b"\n":
        sys.exit("FAIL: the text output is not the prompt and the JSON's tokens: %r" % out)
    print("ok: reproducible by --seed, another seed differs, the text is the prompt and the tokens")
    print("PASS sample")


if __name__ == "__main__":
    main()
