#!/usr/bin/env python3
"""gpt_crosscheck.py — dtlab's GPT-2 decoder and AdamW against PyTorch itself.

Builds a PyTorch reference GPT-2 written here in the layout of llm.c's train_gpt2.py
(transformer.wte / wpe / h.N.{ln_1, attn.c_attn, attn.c_proj, ln_2, mlp.c_fc, mlp.c_proj} /
ln_f, torch.nn.Linear weights (out, in), GELU(approximate="tanh"), lm_head tied to wte),
with random weights of the gpt2-tiny shape (2 layers, 64 wide, 4 heads, context 64, 256
tokens), and writes:
  - the weights as safetensors (F32, by hand: json + struct; lm_head.weight left out, as
    safetensors' save_model drops a tied duplicate);
  - a reference file: random tokens and targets (B, T), and in float64 the logits, the mean
    cross-entropy loss and the gradient of EVERY parameter; the same computed by PyTorch in
    float32 ("torch32.*"), which tells how well conditioned each quantity is;
  - five torch.optim.AdamW steps (weight decay on the 2-D tensors only, lr per step from a
    warm-up + cosine schedule, fresh random gradients each step) from the same weights, in
    float64 and float32, with the gradients and learning rates used.
Then runs tests/ref/gpt_crosscheck.c (dt_gpt_crosscheck), which compares; its exit status is
ours. Each run draws a fresh seed (printed); DT_TEST_SEED replays one.

usage: gpt_crosscheck.py CROSSCHECK_PROGRAM WORKDIR
"""
import json
import math
import os
import struct
import subprocess
import sys
import time

L, C, NH, CTX, V = 2, 64, 4, 64, 256  # gpt2-tiny (nn/models_gpt.c)
ADAM_STEPS, ADAM_WD, ADAM_BETAS, ADAM_EPS = 5, 0.1, (0.9, 0.95), 1e-8


def save_safetensors(path, tensors):
    """The safetensors format: le64 header length, JSON header padded to 8 bytes, data."""
    import torch
    names = {torch.float32: "F32", torch.int32: "I32"}
    header, blobs, off = {"__metadata__": {"format": "pt"}}, [], 0
    for name, t in tensors.items():
        raw = t.detach().contiguous().cpu().numpy().tobytes()
        header[name] = {"dtype": names[t.dtype], "shape": list(t.shape),
                        "data_offsets": [off, off + len(raw)]}
        blobs.append(raw)
        off += len(raw)
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * ((8 - (8 + len(h)) % 8) % 8)
    with open(path + ".tmp", "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))
    os.replace(path + ".tmp", path)


def make_model():
    import torch
    nn, F = torch.nn, torch.nn.functional

    class Attention(nn.Module):
        def __init__(self):
            super().__init__()
            self.c_attn = nn.Linear(C, 3 * C)
            self.c_proj = nn.Linear(C, C)

        def forward(self, x):
            B, T, _ = x.shape
            q, k, v = self.c_attn(x).split(C, dim=2)
            q, k, v = (a.view(B, T, NH, C // NH).transpose(1, 2) for a in (q, k, v))
            att = (q @ k.transpose(-2, -1)) / math.sqrt(C // NH)
            mask = torch.tril(torch.ones(T, T, dtype=torch.bool))
            att = F.softmax(att.masked_fill(~mask, float("-inf")), dim=-1)
            return self.c_proj((att @ v).transpose(1, 2).contiguous().view(B, T, C))

    class MLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.c_fc = nn.Linear(C, 4 * C)
            self.gelu = nn.GELU(approximate="tanh")
            self.c_proj = nn.Linear(4 * C, C)

        def forward(self, x):
            return self.c_proj(self.gelu(self.c_fc(x)))

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln_1, self.attn = nn.LayerNorm(C), Attention()
            self.ln_2, self.mlp = nn.LayerNorm(C), MLP()

        def forward(self, x):
            x = x + self.attn(self.ln_1(x))
            return x + self.mlp(self.ln_2(x))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.transformer = nn.ModuleDict(dict(
                wte=nn.Embedding(V, C), wpe=nn.Embedding(CTX, C),
                h=nn.ModuleList([Block() for _ in range(L)]), ln_f=nn.LayerNorm(C)))
            self.lm_head = nn.Linear(C, V, bias=False)
            self.lm_head.weight = self.transformer.wte.weight  # tied (GPT-2)

        def forward(self, idx, targets):
            T = idx.shape[1]
            x = self.transformer.wte(idx) + self.transformer.wpe(torch.arange(T))
            for blk in self.transformer.h:
                x = blk(x)
            logits = self.lm_head(self.transformer.ln_f(x))
            return logits, F.cross_entropy(logits.view(-1, V), targets.view(-1))

    return GPT()


def params(model):
    """The trainable tensors by state_dict name, without the tied lm_head."""
    return {k: p for k, p in model.named_parameters() if k != "lm_head.weight"}


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: gpt_crosscheck.py CROSSCHECK_PROGRAM WORKDIR")
    prog, work = sys.argv[1], sys.argv[2]
    try:
        import torch
    except ImportError:
        print("SKIPPED: gpt_crosscheck needs PyTorch (apt-get install python3-torch)")
        sys.exit(77)
    seed = int(os.environ.get("DT_TEST_SEED", "0")) or int(time.time() * 1000) % (1 << 31)
    print("seed %d (replay with DT_TEST_SEED=%d)" % (seed, seed))
    torch.manual_seed(seed)
    os.makedirs(work, exist_ok=True)
    B, T = 2, int(torch.randint(8, CTX + 1, (1,)))
    model = make_model()
    with torch.no_grad():  # weights larger than GPT-2's init, so attention is not uniform
        for k, p in params(model).items():
            if k.endswith("ln_1.weight") or k.endswith("ln_2.weight") or k.endswith("f.weight"):
                p.uniform_(0.5, 1.5)
            else:
                p.normal_(0.0, 0.2 if p.dim() == 2 else 0.1)
    idx = torch.randint(0, V, (B, T))
    tgt = torch.randint(0, V, (B, T))
    ref = {"tokens": idx.to(torch.int32), "targets": tgt.to(torch.int32)}
    for tag, dtype in (("", torch.float64), ("torch32.", torch.float32)):
        m = model.to(dtype)
        m.zero_grad()
        logits, loss = m(idx, tgt)
        loss.backward()
        ref[tag + "logits"] = logits.detach().float()
        ref[tag + "loss"] = loss.detach().float().reshape(1)
        for k, p in params(m).items():
            ref[tag + "grad." + k] = p.grad.detach().float()
    model = model.float()
    w0 = {k: p.detach().clone() for k, p in params(model).items()}
    save_safetensors(os.path.join(work, "weights.safetensors"), w0)

    # AdamW: fresh gradients per step, lr from warm-up (2 steps) + cosine to 10 %
    lrs = [1e-2 * (t + 1) / 2 if t < 2 else
           1e-3 + 0.5 * (1e-2 - 1e-3) * (1 + math.cos(math.pi * (t - 2) / (ADAM_STEPS - 2)))
           for t in range(ADAM_STEPS)]
    grads = [{k: torch.randn_like(p) * 0.01 for k, p in w0.items()} for _ in range(ADAM_STEPS)]
    ref["adam.lr"] = torch.tensor(lrs, dtype=torch.float32)
    for s, g in enumerate(grads):
        for k, t in g.items():
            ref["adam.g%d.%s" % (s, k)] = t
    for tag, dtype in (("", torch.float64), ("torch32.", torch.float32)):
        ps = {k: torch.nn.Parameter(t.to(dtype)) for k, t in w0.items()}
        opt = torch.optim.AdamW(
            [{"params": [p for p in ps.values() if p.dim() >= 2], "weight_decay": ADAM_WD},
             {"params": [p for p in ps.values() if p.dim() < 2], "weight_decay": 0.0}],
            lr=lrs[0], betas=ADAM_BETAS, eps=ADAM_EPS)
        for s in range(ADAM_STEPS):
            for k, p in ps.items():
                p.grad = grads[s][k].to(dtype)
            for group in opt.param_groups:
                group["lr"] = lrs[s]
            opt.step()
        for k, p in ps.items():
            ref[tag + "adam.w." + k] = p.detach().float()
    save_safetensors(os.path.join(work, "reference.safetensors"), ref)
    print("B %d T %d; %d tensors; AdamW %d steps (wd %g, betas %s, eps %g)"
          % (B, T, len(w0), ADAM_STEPS, ADAM_WD, ADAM_BETAS, ADAM_EPS))
    sys.stdout.flush()
    rc = subprocess.call([prog, str(B), str(T), os.path.join(work, "weights.safetensors"),
                          os.path.join(work, "reference.safetensors"), str(ADAM_WD),
                          str(ADAM_BETAS[0]), str(ADAM_BETAS[1]), str(ADAM_EPS)])
    sys.exit(rc)


if __name__ == "__main__":
    main()
