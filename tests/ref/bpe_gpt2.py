#!/usr/bin/python3
"""dtlab's byte-level BPE (nn/bpe*.c, through build/dttok) against an independent one in Python:
GPT-2's pre-tokenizer pattern compiled by the `regex` module as GPT-2's encoder.py compiles it,
a naive trainer (count every pair of every word each round), GPT-2's encoder.py merge loop,
and its bytes_to_unicode alphabet for reading merges.txt and vocab.json.

    bpe_gpt2.py DTTOK CORPUS SCRATCH

Checks, on fresh random text (the seed is printed):
  1. nn/bpe_unicode.c is what tests/ref/bpe_unicode_gen.py writes today;
  2. `dttok pieces` cuts random text of many scripts as regex.findall(GPT-2's pattern) does;
  3. `dttok train` learns the merges the naive trainer learns, on a random slice of CORPUS;
  4. `dttok encode` gives the ids encoder.py's loop gives, and `dttok decode` the text back;
  5. vocab.json numbers every token as merges.txt makes it;
  6. `dttok prepare` writes shards that are the encodings of the two splits.
Prints "PASS bpe_gpt2" or "FAIL ..." and exits 1; "SKIPPED" without the regex module."""
import json
import os
import random
import subprocess
import sys
import time

try:
    import regex
except ImportError:
    print("SKIPPED bpe_gpt2: needs the Python regex module (apt-get install python3-regex)")
    sys.exit(0)

HERE = os.path.dirname(os.path.abspath(__file__))
PAT = regex.compile(r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+""")


def fail(msg):
    print("FAIL bpe_gpt2:", msg)
    sys.exit(1)


def bytes_to_unicode():  # GPT-2's encoder.py
    bs = list(range(33, 127)) + list(range(161, 173)) + list(range(174, 256))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, map(chr, cs)))


B2U = bytes_to_unicode()
U2B = {u: b for b, u in B2U.items()}


def run(*args, data=None):
    r = subprocess.run(args, input=data, capture_output=True)
    if r.returncode:
        fail(f"{' '.join(args)}: exit {r.returncode}: {r.stderr.decode(errors='replace')}")
    return r.stdout


def random_text(rng, n):
    pools = ["abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ", "0123456789",
             " " * 8 + "\n\n\t\r\x0b\x0c", "'" * 4 + "sdtmlrev", ".,;:!?-()[]{}\"#$%&*+/<=>@\\^_`|~",
             "éèçñüößÆØÅλπΩжЯדשعربي中文日本語한국어", "٣٤٥①②Ⅻ¼", "\u00a0\u2003\u3000\u2028\x85",
             "—–…’“”«»€£¥©®™", "😀🎉👍🏽"]
    out = []
    while len(out) < n:
        pool = rng.choice(pools)
        out.extend(rng.choice(pool) for _ in range(rng.randint(1, 6)))
    return "".join(out[:n])


def naive_train(text, vocab):
    """Sennrich et al.'s loop over GPT-2's pieces: the most frequent pair, ties to the
    smallest (a, b), joined left to right in every word."""
    counts = {}
    for piece in PAT.findall(text):
        w = tuple(piece.encode("utf-8", "surrogateescape"))
        counts[w] = counts.get(w, 0) + 1
    words = [(list(w), c) for w, c in counts.items()]
    merges = []
    for r in range(vocab - 257):
        pairs = {}
        for w, c in words:
            for p in zip(w, w[1:]):
                pairs[p] = pairs.get(p, 0) + c
        if not pairs:
            break
        best = min(pairs, key=lambda p: (-pairs[p], p))
        merges.append(best)
        new = 256 + r
        for k, (w, c) in enumerate(words):
            o, i = [], 0
            while i < len(w):
                if i + 1 < len(w) and (w[i], w[i + 1]) == best:
                    o.append(new)
                    i += 2
                else:
                    o.append(w[i])
                    i += 1
            words[k] = (o, c)
    return merges


def read_merges(path):
    """merges.txt -> [(a, b)] in ids (bytes 0..255, merge r = 256 + r), and id -> bytes."""
    tok = {bytes([b]): b for b in range(256)}
    merges = []
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    assert lines[0].startswith("#version"), lines[0]
    for line in lines[1:]:
        if not line:
            continue
        a, b = line.split(" ")
        ba, bb = bytes(U2B[c] for c in a), bytes(U2B[c] for c in b)
        merges.append((tok[ba], tok[bb]))
        tok[ba + bb] = 256 + len(merges) - 1
    return merges, {i: t for t, i in tok.items()}


def encode(text, merges):
    """GPT-2's encoder.py bpe(): in each piece, join the lowest-ranked pair everywhere."""
    rank = {p: r for r, p in enumerate(merges)}
    ids = []
    for piece in PAT.findall(text):
        w = list(piece.encode("utf-8", "surrogateescape"))
        while len(w) > 1:
            best = min(zip(w, w[1:]), key=lambda p: rank.get(p, 1 << 60))
            if best not in rank:
                break
            o, i = [], 0
            while i < len(w):
                if i + 1 < len(w) and (w[i], w[i + 1]) == best:
                    o.append(256 + rank[best])
                    i += 2
                else:
                    o.append(w[i])
                    i += 1
            w = o
        ids.extend(w)
    return ids


def main():
    dttok, corpus, scratch = sys.argv[1:4]
    os.makedirs(scratch, exist_ok=True)
    seed = int(os.environ.get("DT_TEST_SEED", time.time_ns() % (1 << 31)))
    print("seed", seed)
    rng = random.Random(seed)

    # 1. the generated table
    gen = subprocess.run([sys.executable, os.path.join(HERE, "bpe_unicode_gen.py")],
                         capture_output=True, text=True, check=True).stdout
    with open(os.path.join(HERE, "..", "..", "nn", "bpe_unicode.c"), encoding="utf-8") as f:
        if f.read() != gen:
            fail("nn/bpe_unicode.c differs from what tests/ref/bpe_unicode_gen.py writes with "
                 "this regex module (regenerate it)")

    # 2. the pieces
    for trial in range(300):
        s = random_text(rng, rng.randint(1, 80))
        want = [len(p.encode()) for p in PAT.findall(s)]
        got = [int(x) for x in run(dttok, "pieces", data=s.encode()).split()]
        if got != want:
            fail(f"pieces of {s!r}: dttok {got}, regex {want}")

    # 3. training on a random slice of the corpus with random text mixed in
    with open(corpus, "rb") as f:
        data = f.read()
    at = rng.randrange(0, max(1, len(data) - 40000))
    text = data[at:at + 40000].decode("utf-8", errors="ignore") + random_text(rng, 3000)
    text += data[:20000].decode("ascii", errors="ignore")  # the split falls in here: ASCII
    vocab = rng.randint(300, 700)
    src = os.path.join(scratch, "train.txt")
    with open(src, "wb") as f:
        f.write(text.encode())
    tokdir = os.path.join(scratch, "tok")
    run(dttok, "train", "--vocab", str(vocab), "--out", tokdir, src)
    merges, id_bytes = read_merges(os.path.join(tokdir, "merges.txt"))
    want = naive_train(text, vocab)
    if merges != want:
        k = next((i for i, (a, b) in enumerate(zip(merges, want)) if a != b), len(want))
        fail(f"merges differ from the naive trainer's at {k} of {len(want)}: "
             f"{merges[k:k + 1]} against {want[k:k + 1]}")

    # 4. encoding and decoding held-out text
    for trial in range(20):
        s = (random_text(rng, rng.randint(1, 300)) if trial % 2 else
             data[rng.randrange(len(data) - 2000):][:rng.randint(1, 2000)].decode(
                 "utf-8", errors="ignore"))
        got = [int(x) for x in run(dttok, "encode", tokdir, data=s.encode()).split()]
        if got != encode(s, merges):
            fail(f"encoding {s[:60]!r}...: dttok {got[:20]}..., encoder.py {encode(s, merges)[:20]}...")
        back = run(dttok, "decode", tokdir, data=" ".join(map(str, got)).encode())
        if back != s.encode() or b"".join(id_bytes[i] for i in got) != s.encode():
            fail(f"decoding {s[:60]!r} gave {back[:60]!r}")

    # 5. vocab.json
    with open(os.path.join(tokdir, "vocab.json"), encoding="utf-8") as f:
        vocab_json = json.load(f)
    if len(vocab_json) != vocab or vocab_json.pop("<|endoftext|>") != vocab - 1:
        fail(f"vocab.json: {len(vocab_json)} tokens, <|endoftext|> not {vocab - 1}")
    for t, i in vocab_json.items():
        if bytes(U2B[c] for c in t) != id_bytes[i]:
            fail(f"vocab.json: {t!r} is id {i}, whose bytes are {id_bytes[i]!r}")

    # 6. prepared shards
    prep = os.path.join(scratch, "prep")
    run(dttok, "prepare", "--vocab", str(vocab), "--out", prep, src)
    raw = text.encode()
    n_val = int(len(raw) * 0.1)
    prep_merges, prep_bytes = read_merges(os.path.join(prep, "merges.txt"))
    if prep_merges != naive_train(raw[:len(raw) - n_val].decode("utf-8"), vocab):
        fail("dttok prepare did not learn the training split's merges")
    for name, part in (("train.bin", raw[:len(raw) - n_val]), ("val.bin", raw[len(raw) - n_val:])):
        with open(os.path.join(prep, name), "rb") as f:
            b = f.read()
        ids = [b[i] | b[i + 1] << 8 for i in range(0, len(b), 2)]
        if ids != encode(part.decode("utf-8"), prep_merges):
            fail(f"{name} does not decode to its split's bytes")
    print(f"bpe_gpt2: 300 random texts cut as regex cuts them; {vocab - 257} merges as the naive "
          f"trainer's; 20 encodings as encoder.py's; vocab.json and the shards agree")
    print("PASS bpe_gpt2")


if __name__ == "__main__":
    main()
