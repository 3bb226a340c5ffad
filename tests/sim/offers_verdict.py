"""offers_verdict.py DTSIM — `dtsim plan --offer`'s answer, recomputed from the bands its JSON
gives (sim/dtsim_offers.c, verdict): priced offers, the cheapest when its cost band lies
below every other's; else, among the offers whose cost bands overlap the cheapest's, the one
whose time band lies below all theirs; unpriced, the fastest when its time band lies below
every other's; none (no "answer" key, no answer line) when the bands do not tell. Three
pairs: the README's two offers, two H100 clusters at one price of which one has twice the
GPUs (as cheap within the bands, twice as fast: the larger is the answer), and the same two
unpriced (the faster)."""
import json
import subprocess
import sys

dtsim = sys.argv[1]


def plan(offers):
    args = [dtsim, "plan", "--json"]
    for name, flags in offers:
        args += ["--offer", "%s=%s" % (name, flags)]
    p = subprocess.run(args, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit("FAIL: %s: exit %d\n%s" % (" ".join(args), p.returncode, p.stderr))
    return json.loads(p.stdout), p.stderr


def overlap(a, b, k):
    return a[k + "_low"] <= b[k + "_high"] and b[k + "_low"] <= a[k + "_high"]


def expected(offers):
    priced = all("cost" in o for o in offers)
    key = "cost" if priced else "train_s"
    best = min(offers, key=lambda o: o[key])
    if not any(overlap(best, o, key) for o in offers if o is not best):
        return best["name"], "cheaper" if priced else "faster"
    if not priced:
        return None, None
    group = [o for o in offers if o is best or overlap(best, o, "cost")]
    fast = min(group, key=lambda o: o["train_s"])
    if any(overlap(fast, o, "train_s") for o in group if o is not fast):
        return None, None
    return fast["name"], "as cheap as the cheapest within the bands"


def check(offers, want=None):
    j, text = plan(offers)
    name, how = expected(j["offers"])
    if j.get("answer") != name:
        sys.exit("FAIL: answer %r, the bands give %r\n%s" % (j.get("answer"), name, text))
    line = [l for l in text.splitlines() if l.startswith("answer: ")]
    if name is None:
        if line:
            sys.exit("FAIL: an answer line where the bands do not tell: %s" % line)
    elif not line or not line[0].startswith("answer: %s, %s" % (name, how)):
        sys.exit("FAIL: the answer line %r, expected 'answer: %s, %s ...'" % (line, name, how))
    if want is not None and name != want:
        sys.exit("FAIL: answer %r, expected %r by construction\n%s" % (name, want, text))
    print("ok: %s: answer %s (%s)" % (" vs ".join(o[0] for o in offers), name, how))
    return text


check([("h100", "--gpu h100 --gpus 1024 --price-gpu-hour 6"),
       ("a100", "--gpu a100-40 --gpus 512 --nics 4 --net-bw 200Gb --price-gpu-hour 3")])
text = check([("big", "--gpu h100 --gpus 1024 --price-gpu-hour 6"),
              ("half", "--gpu h100 --gpus 512 --price-gpu-hour 6")], want="big")
if "tied on cost: big and half: their cost bands overlap; big trains faster" not in text:
    sys.exit("FAIL: the cost tie not said:\n" + text)
check([("big", "--gpu h100 --gpus 1024"), ("half", "--gpu h100 --gpus 512")], want="big")
