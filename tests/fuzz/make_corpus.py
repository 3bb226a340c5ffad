#!/usr/bin/env python3
"""make_corpus.py BUILD_DIR — writes the seed corpora of tests/fuzz/corpus/<reader>/: small
valid files (made by dtlab's own programs where it writes that format, by hand from the
format's description where it only reads it) and the interesting invalid ones (cut short,
absurd sizes, wrong magic, overlaps). Run once; the files are committed. Inputs that a
campaign finds are added beside them by hand (tests/fuzz/README.md)."""
import gzip, io, json, os, struct, subprocess, sys, tempfile, zlib

build = sys.argv[1] if len(sys.argv) > 1 else "build"
here = os.path.dirname(os.path.abspath(__file__))


def put(reader, name, data):
    d = os.path.join(here, "corpus", reader)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())


# ---- json
for name, text in {
    "object": '{"a": [1, -2.5e-3, "x\\u00e9\\ud83d\\ude00", true, false, null], "b": {}}',
    "nested": "[" * 60 + "]" * 60, "too-deep": "[" * 5000, "string-escapes": '"\\n\\t\\"\\\\\\/"',
    "bad-surrogate": '"\\ud800"', "huge-number": "1e999", "dup-keys": '{"a":1,"a":2}',
    "trailing": "{} x", "empty": "", "unterminated": '{"a": "b', "nul": '{"a":\x00}',
}.items():
    put("json", name, text)


# ---- safetensors (the format by hand: u64 header length, JSON, data)
def st(header, data=b"", crc=True, pad=True):
    if crc:
        header.setdefault("__metadata__", {})["dtlab.data_crc32"] = "%08x" % zlib.crc32(data)
    h = json.dumps(header, separators=(",", ":")).encode()
    if pad:
        h += b" " * ((8 - (8 + len(h)) % 8) % 8)
    return struct.pack("<Q", len(h)) + h + data


f32 = struct.pack("<6f", 1, 2, 3, 4, 5, 6)
put("safetensors", "one-f32", st({"w": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]}}, f32))
put("safetensors", "no-crc", st({"w": {"dtype": "F32", "shape": [6], "data_offsets": [0, 24]}}, f32, crc=False))
put("safetensors", "every-dtype", st({
    "a": {"dtype": "F64", "shape": [1], "data_offsets": [0, 8]},
    "b": {"dtype": "I64", "shape": [], "data_offsets": [8, 16]},
    "c": {"dtype": "F16", "shape": [2], "data_offsets": [16, 20]},
    "d": {"dtype": "BF16", "shape": [2], "data_offsets": [20, 24]},
    "e": {"dtype": "U8", "shape": [0, 3], "data_offsets": [24, 24]}}, bytes(range(24))))
put("safetensors", "overlap", st({"a": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]},
                                  "b": {"dtype": "F32", "shape": [4], "data_offsets": [8, 24]}}, f32))
put("safetensors", "bad-crc", st({"w": {"dtype": "F32", "shape": [6], "data_offsets": [0, 24]},
                                  "__metadata__": {"dtlab.data_crc32": "00000000"}}, f32, crc=False))
put("safetensors", "huge-shape", st({"w": {"dtype": "F32", "shape": [1 << 40, 1 << 40], "data_offsets": [0, 24]}}, f32))
put("safetensors", "absurd-length", struct.pack("<Q", 1 << 62) + b"{}")
put("safetensors", "cut", st({"w": {"dtype": "F32", "shape": [6], "data_offsets": [0, 24]}}, f32)[:40])

# ---- checkpoint: the writer's own (fuzz_checkpoint.c writes its network's checkpoint when
# DT_FUZZ_SEED_OUT is set), and damaged or foreign ones
env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
with tempfile.TemporaryDirectory() as t:
    out = os.path.join(t, "seed.safetensors")
    subprocess.run([os.path.join(build, "tests", "fuzz", "fuzz_replay_checkpoint"), "/dev/null"],
                   check=True, env=dict(env, DT_FUZZ_SEED_OUT=out), stdout=subprocess.DEVNULL)
    data = open(out, "rb").read()
put("checkpoint", "tiny", data)
put("checkpoint", "cut", data[: len(data) // 2])
put("checkpoint", "renamed-tensor", data.replace(b'"fc.bias"', b'"fc.biat"', 1))
put("checkpoint", "plain-weights", st({"w": {"dtype": "F32", "shape": [6], "data_offsets": [0, 24]}}, f32))

# ---- idx (2-byte little-endian images length, images file, labels file)
def idx(magic, dims, payload):
    return struct.pack(">I", magic) + b"".join(struct.pack(">I", d) for d in dims) + payload


imgs = idx(0x803, [2, 4, 4], bytes(range(32)))
labs = idx(0x801, [2], bytes([3, 7]))
for name, (i, l) in {"plain": (imgs, labs), "gzip": (gzip.compress(imgs), gzip.compress(labs)),
                     "count-mismatch": (imgs, idx(0x801, [3], bytes([1, 2, 3]))),
                     "bad-magic": (idx(0x804, [2, 4, 4], bytes(32)), labs),
                     "absurd-dims": (idx(0x803, [60000, 65535, 65535], bytes(32)), labs),
                     "cut": (imgs[:20], labs), "label-range": (imgs, idx(0x801, [2], bytes([3, 200]))),
                     "gzip-garbage": (gzip.compress(imgs)[:30] + b"xxxx", labs)}.items():
    put("idx", name, struct.pack("<H", len(i)) + i + l)

# ---- images: tiny PNGs and JPEGs from Pillow (the reference writer), and damaged ones
from PIL import Image  # python3-pil, a dependency of python3-torchvision

for mode, size in (("RGB", (5, 3)), ("L", (4, 4)), ("RGBA", (3, 2)), ("P", (2, 5))):
    b = io.BytesIO()
    Image.new(mode, size, 1 if mode == "P" else None).save(b, "PNG")
    put("png", "tiny-" + mode, b.getvalue())
    if mode in ("RGB", "L"):
        b = io.BytesIO()
        Image.new(mode, (9, 7)).save(b, "JPEG", quality=50)
        put("jpeg", "tiny-" + mode, b.getvalue())
        b2 = io.BytesIO()
        Image.new(mode, (17, 9)).save(b2, "JPEG", progressive=True)
        put("jpeg", "progressive-" + mode, b2.getvalue())
png = open(os.path.join(here, "corpus", "png", "tiny-RGB"), "rb").read()
put("png", "cut", png[:40])
huge = bytearray(png)  # IHDR claims 1,000,000 x 1,000,000 pixels (CRC left wrong)
huge[16:24] = struct.pack(">II", 1000000, 1000000)
put("png", "huge-ihdr", bytes(huge))
jpg = open(os.path.join(here, "corpus", "jpeg", "tiny-RGB"), "rb").read()
put("jpeg", "cut", jpg[: len(jpg) // 2])

# ---- platform files (SimGrid XML)
put("platform", "hosts", '<?xml version="1.0"?>\n<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">\n'
    '<platform version="4.1"><zone id="z" routing="Full"><host id="a" speed="1Gf" core="4"/>'
    '<host id="b" speed="1Gf"/><link id="l" bandwidth="1GBps" latency="1us"/>'
    '<route src="a" dst="b"><link_ctn id="l"/></route></zone></platform>\n')
put("platform", "cluster", '<platform version="4.1"><cluster id="c" prefix="n" suffix="" '
    'radical="0-3,8" speed="1Gf" core="8" bw="1GBps" lat="1us"/></platform>')
put("platform", "unclosed", '<platform version="4.1"><zone id="z"><host id="a"/></platform>')
put("platform", "no-host", '<platform version="4.1"></platform>')
put("platform", "huge-radical", '<platform><cluster id="c" radical="0-99999999999" core="9999999999"/></platform>')
put("platform", "comment", '<!-- x --><platform><peer id="p"/><![CDATA[ <host> ]]></platform>')

# ---- profiles: dtrain --profile's own output; dtcoll-bench --csv's own table
with tempfile.TemporaryDirectory() as t:
    p = os.path.join(t, "p.json")
    subprocess.run(["mpirun", "-np", "1", os.path.join(build, "dtrain"), "--quiet", "--threads", "1",
                    "--data", "synthetic", "--image-size", "16", "--classes", "4", "--synthetic-examples",
                    "32", "--batch", "8", "--model", "resnet8", "--max-steps", "3", "--eval-every", "0",
                    "--profile", p], check=True, env=env, stdout=subprocess.DEVNULL)
    prof = open(p).read()
    put("profile", "dtrain", prof)
    put("profile", "cut", prof[: len(prof) // 2])
    put("profile", "negative", prof.replace('"step_s": ', '"step_s": -', 1))
    c = os.path.join(t, "b.csv")
    subprocess.run(["mpirun", "-np", "2", "--oversubscribe", os.path.join(build, "dtcoll-bench"),
                    "--algos", "ring", "--min-bytes", "1K", "--max-bytes", "1M", "--factor", "16", "--iters", "3", "--csv", c],
                   check=True, env=env, stdout=subprocess.DEVNULL)
    csv = open(c).read()
    put("bench_csv", "dtcoll-bench", csv)
    put("bench_csv", "one-size", "\n".join(csv.splitlines()[:2]) + "\n")
    put("bench_csv", "header-only", csv.splitlines()[0] + "\n")
    put("bench_csv", "nan", csv.replace(csv.splitlines()[1].split(",")[-1], "nan", 1))
print("corpus written under", os.path.join(here, "corpus"))


# ---- bpe (fuzz_bpe.c: the first byte picks merges.txt 0, vocab.json 1, else a corpus)
def b2u():  # GPT-2's bytes_to_unicode
    bs = list(range(33, 127)) + list(range(161, 173)) + list(range(174, 256))
    cs, n = bs[:], 0
    for b in range(256):
        if b not in bs:
            bs.append(b), cs.append(256 + n)
            n += 1
    return dict(zip(bs, map(chr, cs)))


_u = b2u()
_vocab = {_u[b]: b for b in range(256)}
_vocab.update({"he": 256, "hey": 257, "<|endoftext|>": 258})
for name, data in {
    "merges": b"\x00#version: 0.2\n\xc4\xa0 t\nh e\n\xc4\xa0t he\n",
    "merges-crlf": b"\x00#version: 0.2\r\na b\r\nab c\r\n",
    "merges-unknown": b"\x00a b\nx yz\n", "merges-dup": b"\x00a b\na b\n",
    "merges-foreign": b"\x00a \xce\xa9\n", "merges-empty": b"\x00",
    "vocab": b"\x01" + json.dumps(_vocab).encode(),
    "vocab-swapped": b"\x01" + json.dumps(dict(_vocab, he=257, hey=256)).encode(),
    "vocab-garbage": b"\x01{\"a\": [", "corpus-text": b"x" + b"it's the end of the world as "
    b"we know it, and I feel fine.\n" * 20, "corpus-bytes": b"\x03" + bytes(range(256)) * 2,
    "corpus-utf8": b"\x10" + "naïve café — 日本語 ٣٤ 😀 \u3000 x\n".encode() * 8,
}.items():
    put("bpe", name, data)
