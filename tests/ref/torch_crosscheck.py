#!/usr/bin/env python3
"""torch_crosscheck.py — dtlab's networks against PyTorch itself.

For each model, builds torchvision's network with random weights and random batchnorm running
statistics, writes its state_dict to safetensors (by hand: json + struct, no safetensors
package, so this is also an independent writer), in F32 and in F16 and BF16 copies, plus a
reference file with a random input batch and what PyTorch computes from it, in float64:
  - eval-mode logits (for the F32 weights, and for the F16- and BF16-rounded weights),
  - a training-mode forward (batch statistics), its cross-entropy loss, the gradients of a
    few tensors (first conv weight, a batchnorm gamma, the classifier) and the running
    statistics of the first batchnorm after the step (ResNets only: AlexNet's dropout masks
    cannot match),
and the same computed by PyTorch in float32 ("torch32.*"): how far PyTorch's own fp32 result
is from float64 tells how well conditioned each quantity is (a ResNet-50 training gradient
at random init with small batches loses ~2 digits in fp32, in PyTorch as in dtlab). Before
that, the ResNets' reference is moved off the kinks of relu and max pooling, where a gradient
jumps and fp32 rounding alone could pick the other side (keep_off_kinks).
Then runs the C program tests/ref/crosscheck.c (dt_crosscheck), which loads the weights with
dt_weights_load into dt_model_create's network and compares; its exit status is ours.
Not a unit test of the file format (tests/unit/test_safetensors.c) nor of names alone
(compare_torchvision_names.py).

usage: torch_crosscheck.py CROSSCHECK_PROGRAM WORKDIR [MODEL ...]   (default: resnet18 alexnet)
"""
import json
import os
import struct
import subprocess
import sys
import time

DTYPES = {}  # torch dtype -> safetensors name, filled once torch is imported


def tensor_bytes(t):
    """Little-endian bytes of a contiguous CPU tensor."""
    import torch
    t = t.detach().contiguous().cpu()
    if t.dtype in (torch.float16, torch.bfloat16):
        t = t.view(torch.int16)
    try:
        return t.numpy().tobytes()
    except Exception:  # no numpy: struct, slower
        fmt = {torch.float32: "f", torch.int64: "q", torch.int32: "i", torch.int16: "h"}[t.dtype]
        return struct.pack("<%d%s" % (t.numel(), fmt), *t.flatten().tolist())


def save_safetensors(path, tensors, metadata=None):
    """The safetensors format (huggingface/safetensors docs): le64 header length, JSON header
    padded with spaces to 8 bytes, tensor bytes back to back."""
    header, blobs, off = {}, [], 0
    if metadata:
        header["__metadata__"] = {k: str(v) for k, v in metadata.items()}
    for name, t in tensors.items():
        raw = tensor_bytes(t)
        header[name] = {"dtype": DTYPES[t.dtype], "shape": list(t.shape),
                        "data_offsets": [off, off + len(raw)]}
        blobs.append(raw)
        off += len(raw)
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * ((8 - (8 + len(h)) % 8) % 8)
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for b in blobs:
            f.write(b)
    os.replace(tmp, path)


def first_bn_and_grads(model_name, sd_keys):
    """Names whose gradients are compared: first conv weight, first BN gamma, classifier."""
    if model_name.startswith("resnet"):
        return "bn1", ["conv1.weight", "bn1.weight", "layer1.0.conv1.weight", "fc.weight",
                       "fc.bias"]
    return None, [k for k in sd_keys if k.endswith("weight")][:1]


def keep_off_kinks(model_name, sd, x, classes, factor=10.0, max_passes=10):
    """Moves the training-step reference off the kinks of relu and max pooling, where a
    gradient jumps. A relu input nearer 0 than fp32 rounding reaches, or a max-pool window
    whose two largest values are that close, routes the gradient one way in float64 and may
    route it the other way in any fp32 implementation: one such element (seed 1795332124, a
    layer2.0 relu input of +5.4e-7 that dtlab's fp32 conv, off by 7.7e-7, made -1.0e-7) moved
    resnet18's stem gradients by 2 %, about 1 seed in 8. Rounding is measured per channel as
    max |PyTorch fp32 - float64| ("band" below: `factor` times that), and a check passes when
    no relu input lies within a band of 0 and no max-pool window's two largest (positive)
    values within a band of each other. Until it passes, a float64 forward shifts by 2 bands
    each channel with a relu input within 2 bands of 0 (the margin absorbs fp32's error
    moving as the values move), in the tensor itself, so later layers see it, and in the beta
    of the last batchnorm before the relu (which adds into the relu input: bn, or bn +
    identity); and redraws the input pixel under each near-tie's winner. Changes sd (betas)
    and x in place. Returns (betas shifted, pixels redrawn, passes)."""
    import torch
    import torchvision
    F = torch.nn.functional
    st = {"events": [], "bn": None, "bands": None, "shifted": 0, "redrawn": 0}

    def near_ties(a, band, pool):
        """(b, h, w) of the winners of pool's windows over a (B,C,H,W) whose top two are
        positive and within band (C) of each other."""
        B, C, H, W = a.shape
        k, s, pad = pool.kernel_size, pool.stride, pool.padding
        oh, ow = (H + 2 * pad - k) // s + 1, (W + 2 * pad - k) // s + 1
        p = F.pad(a, (pad,) * 4, value=float("-inf")).reshape(B * C, H + 2 * pad, -1)
        cols = torch.stack([p[:, i:i + s * (oh - 1) + 1:s, j:j + s * (ow - 1) + 1:s]
                            .reshape(B * C, -1) for i in range(k) for j in range(k)], 1)
        top, idx = cols.topk(2, dim=1)  # cols: (B*C, k*k, OH*OW)
        near = (top[:, 0] > 0) & (top[:, 0] - top[:, 1] < band.repeat(B)[:, None])
        return [(bc // C, (cell // ow) * s - pad + int(idx[bc, 0, cell]) // k,
                 (cell % ow) * s - pad + int(idx[bc, 0, cell]) % k)
                for bc, cell in near.nonzero().tolist()]

    def on_relu(mod, i):  # a pre-hook sees the input of an inplace relu
        a, bands = i[0], st["bands"]
        if bands is not None:  # the fixing forward: shift channels within 2 bands of 0
            band = 2 * bands[len(st["events"])]
            for c in (a.abs() < band[None, :, None, None]).any(dim=3).any(dim=2).any(dim=0) \
                    .nonzero().flatten().tolist():
                v, b = a[:, c].flatten(), float(band[c])
                shift = next((sg * j * b / 2 for j in range(1, 10000) for sg in (1, -1)
                              if float((v + sg * j * b / 2).abs().min()) >= b), None)
                if shift is None:
                    raise RuntimeError("no beta shift keeps %s channel %d off relu's kink"
                                       % (st["bn"], c))
                a[:, c] += shift
                sd[st["bn"] + ".bias"][c] += shift
                st["shifted"] += 1
        st["events"].append((st["bn"], a.detach().double().clone()))

    def on_pool(mod, i):
        a, bands = i[0], st["bands"]
        if bands is not None:  # redraw the pixel at the centre of a near-tied winner
            up = x.shape[2] // a.shape[2]  # input pixels per pool-input cell (stem stride)
            for b, h, w in near_ties(a.double(), bands[len(st["events"])], mod):
                x[b, :, h * up, w * up] = torch.randn(x.shape[1])
                st["redrawn"] += 1
        st["events"].append((mod, a.detach().double().clone()))

    models = {}
    for dtype in (torch.float64, torch.float32):
        m = models[dtype] = getattr(torchvision.models, model_name)(
            weights=None, num_classes=classes).to(dtype).train()
        for name, mod in m.named_modules():
            if isinstance(mod, torch.nn.BatchNorm2d):
                mod.register_forward_hook(lambda mod, i, o, n=name: st.__setitem__("bn", n))
            elif isinstance(mod, torch.nn.ReLU):
                mod.register_forward_pre_hook(on_relu)
            elif isinstance(mod, torch.nn.MaxPool2d):
                mod.register_forward_pre_hook(on_pool)

    def forward(dtype, bands=None):
        """One training forward of (sd, x) in dtype; the hooks' (last batchnorm's name or
        the MaxPool2d, relu/pool input in float64) in forward order. With bands: fixes."""
        st["events"], st["bands"] = [], bands
        models[dtype].load_state_dict(sd)
        with torch.no_grad():
            models[dtype](x.to(dtype))
        return st["events"]

    for npass in range(1, max_passes + 1):  # check, then a fixing forward where needed
        bands, found = [], False
        for (tag, a), (_, a32) in zip(forward(torch.float64), forward(torch.float32)):
            band = factor * torch.maximum((a - a32).abs().amax(dim=(0, 2, 3)),
                                          a.abs().amax(dim=(0, 2, 3)) * 2.0 ** -24)
            bands.append(band)
            if isinstance(tag, torch.nn.MaxPool2d):
                found = found or bool(near_ties(a, band, tag))
            else:
                found = found or bool((a.abs() < band[None, :, None, None]).any())
        if not found:
            return st["shifted"], st["redrawn"], npass
        forward(torch.float64, bands)
    raise RuntimeError("%s: relu/max-pool kinks still near after %d passes"
                       % (model_name, max_passes))


def make_reference(model_name, workdir, batch, size, classes, seed):
    import torch
    import torchvision
    torch.manual_seed(seed)
    model = getattr(torchvision.models, model_name)(weights=None, num_classes=classes)
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, torch.nn.BatchNorm2d):
                m.weight.uniform_(0.5, 1.5)
                m.bias.normal_(0.0, 0.1)
                m.running_mean.normal_(0.0, 0.1)
                m.running_var.uniform_(0.5, 2.0)
                m.num_batches_tracked.fill_(int(torch.randint(1, 10000, ())))
    sd = model.state_dict()
    x = torch.randn(batch, 3, size, size)
    labels = torch.randint(0, classes, (batch,), dtype=torch.int32)
    bn, grads = first_bn_and_grads(model_name, list(sd.keys()))
    if bn:  # the training step's gradients: keep relu and max-pool kinks out of fp32's reach
        moved = keep_off_kinks(model_name, sd, x, classes)
        print("# %s: off kinks: %d batchnorm betas shifted, %d pixels redrawn, %d passes"
              % ((model_name,) + moved))
    base = os.path.join(workdir, model_name)
    save_safetensors(base + ".f32.safetensors", sd, {"format": "pt"})
    for tag, dt in (("f16", torch.float16), ("bf16", torch.bfloat16)):
        save_safetensors(base + ".%s.safetensors" % tag,
                         {k: (v.to(dt) if v.is_floating_point() else v) for k, v in sd.items()},
                         {"format": "pt"})

    def run(dtype):
        """Everything PyTorch computes from (weights, x), in `dtype` arithmetic."""
        out = {}

        def fresh(state):
            m = getattr(torchvision.models, model_name)(weights=None, num_classes=classes)
            m.load_state_dict(state)
            return m.to(dtype)

        with torch.no_grad():
            out["logits_eval"] = fresh(sd).eval()(x.to(dtype))
            for tag, dt in (("f16", torch.float16), ("bf16", torch.bfloat16)):
                rounded = {k: (v.to(dt).to(torch.float32) if v.is_floating_point() else v)
                           for k, v in sd.items()}
                out["logits_eval_" + tag] = fresh(rounded).eval()(x.to(dtype))
        if bn:  # one training step: batch statistics, loss, gradients, running statistics
            m = fresh(sd).train()
            logits = m(x.to(dtype))
            loss = torch.nn.functional.cross_entropy(logits, labels.long())
            loss.backward()
            params, buffers = dict(m.named_parameters()), dict(m.named_buffers())
            out["logits_train"] = logits.detach()
            out["loss_train"] = loss.detach().reshape(())
            for g in grads:
                out["grad." + g] = params[g].grad
            for s in ("running_mean", "running_var"):
                out["after.%s.%s" % (bn, s)] = buffers["%s.%s" % (bn, s)]
            out["after.num_batches_tracked"] = buffers[bn + ".num_batches_tracked"]
        return out

    # the reference in float64; PyTorch's own float32 results beside it ("torch32.*"), so
    # that the C side can put its error next to the error of PyTorch's own fp32 arithmetic
    ref = {"x": x, "labels": labels}
    ref.update(run(torch.float64))
    ref.update({"torch32." + k: v for k, v in run(torch.float32).items()
                if v.is_floating_point()})
    meta = {"model": model_name, "batch": batch, "size": size, "classes": classes,
            "grads": ",".join(grads) if bn else "", "bn": bn or ""}
    ref = {k: (v.float() if v.is_floating_point() else v) for k, v in ref.items()}
    save_safetensors(base + ".ref.safetensors", ref, meta)
    return base


def main():
    if len(sys.argv) < 3 or sys.argv[1] in ("-h", "--help"):
        print(__doc__)
        return 0 if len(sys.argv) > 1 else 2
    prog, workdir = sys.argv[1], sys.argv[2]
    models = sys.argv[3:] or ["resnet18", "alexnet"]
    try:
        import torch
        import torchvision  # noqa: F401
    except ImportError as e:
        print("SKIPPED: needs PyTorch and torchvision (%s)" % e)
        return 0
    DTYPES.update({torch.float32: "F32", torch.float16: "F16", torch.bfloat16: "BF16",
                   torch.int64: "I64", torch.int32: "I32"})
    torch.set_num_threads(2)
    os.makedirs(workdir, exist_ok=True)
    seed = int(os.environ.get("DT_TEST_SEED", int(time.time())))
    print("# seed %d (replay with DT_TEST_SEED=%d); torch %s, torchvision %s"
          % (seed, seed, torch.__version__, torchvision.__version__))
    failed = 0
    for name in models:
        # AlexNet's features need at least 63x63 pixels; its pools reach 1x1 at 64. ResNet-50's
        # layer4 batchnorms at batch 2 x 64x64 normalise over 8 values per channel, which makes
        # its gradients ill-conditioned (fp32 loses up to ~2 digits, in PyTorch as in dtlab):
        # batch 4 x 96x96 (36 values) keeps the check tight and stable.
        batch, size = (4, 96) if name == "resnet50" else (2, 64)
        t0 = time.time()
        base = make_reference(name, workdir, batch=batch, size=size, classes=10, seed=seed)
        print("# %s: reference written in %.1f s" % (name, time.time() - t0))
        sys.stdout.flush()
        rc = subprocess.call([prog, name, base + ".ref.safetensors", base + ".f32.safetensors",
                              base + ".f16.safetensors", base + ".bf16.safetensors"])
        failed += rc != 0
        for tag in ("f32", "f16", "bf16", "ref"):
            os.remove(base + ".%s.safetensors" % tag)
    print("crosscheck: %d of %d models failed" % (failed, len(models)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
