#!/usr/bin/env python3
"""Writes a copy of a system file whose candidate invariant is a union of boxes that covers
exactly the same set as its single-box candidate (issue 16: checking large union candidates).

    scripts/union-candidate.py N [--shape grid|ragged] [--system FILE] [--model ONNX] [--seed S] > OUT.toml

grid:   the box cut into about N equal tiles (nx * ny, nx ~ ny), neighbours sharing their faces.
ragged: about N boxes of different sizes: rows of random heights, each cut at random places,
        every box widened by a random overlap (clipped to the box), so boxes overlap across
        rows and within a row and their union is still exactly the box.
The set is the candidate's, so the verdict must be the single box's.  Cuts are decimals with 9
digits, so every end is an exact rational and neighbours share their ends exactly.
"""
import argparse, math, os, random, re, sys

p = argparse.ArgumentParser()
p.add_argument("n", type=int)
p.add_argument("--shape", choices=["grid", "ragged"], default="grid")
p.add_argument("--system", default=os.path.join(os.path.dirname(__file__), "../configs/systems/peer-maze-det.toml"))
p.add_argument("--model", default=None, help="controller.model (absolute path recommended)")
p.add_argument("--seed", type=int, default=1)
a = p.parse_args()

text = open(a.system).read()
m = re.search(r'^invariant\s*=\s*"([^"]*)"', text, re.M)
atoms = re.findall(r'([-0-9.]+)\s*<=\s*(\w+)\s*<=\s*([-0-9.]+)', m.group(1))
assert len(atoms) == 2, "expects a 2-D single-box candidate 'a <= x <= b and c <= y <= d'"
(x0, xv, x1), (y0, yv, y1) = [(float(l), v, float(h)) for l, v, h in atoms]
fmt = lambda v: f"{v:.9f}".rstrip("0").rstrip(".")

def cuts(lo, hi, k, rng=None):
    if rng is None:
        inner = [lo + (hi - lo) * i / k for i in range(1, k)]
    else:
        inner = sorted(lo + (hi - lo) * (i + rng.uniform(-0.4, 0.4)) / k for i in range(1, k))
    return [lo] + [float(fmt(c)) for c in inner] + [hi]

boxes = []
if a.shape == "grid":
    nx = max(1, round(math.sqrt(a.n)))
    ny = max(1, math.ceil(a.n / nx))
    xs, ys = cuts(x0, x1, nx), cuts(y0, y1, ny)
    for j in range(ny):
        for i in range(nx):
            boxes.append((xs[i], xs[i + 1], ys[j], ys[j + 1]))
else:
    rng = random.Random(a.seed)
    ny = max(1, round(math.sqrt(a.n)))
    ys = cuts(y0, y1, ny, rng)
    left = a.n
    for j in range(ny):
        k = max(1, round(left / (ny - j)))
        left -= k
        xs = cuts(x0, x1, k, rng)
        ov = (y1 - y0) / ny
        for i in range(k):
            ox = (xs[i + 1] - xs[i]) * rng.uniform(0, 0.5)
            bl = max(x0, float(fmt(xs[i] - ox * rng.random())))
            bh = min(x1, float(fmt(xs[i + 1] + ox * rng.random())))
            cl = max(y0, float(fmt(ys[j] - ov * rng.uniform(0, 0.3))))
            ch = min(y1, float(fmt(ys[j + 1] + ov * rng.uniform(0, 0.3))))
            boxes.append((bl, bh, cl, ch))

inv = " or ".join(f"({fmt(b[0])} <= {xv} <= {fmt(b[1])} and {fmt(b[2])} <= {yv} <= {fmt(b[3])})" for b in boxes)
text = text[: m.start(1)] + inv + text[m.end(1):]
if a.model:
    text = re.sub(r'^model\s*=\s*"[^"]*"', f'model = "{a.model}"', text, flags=re.M)
else:
    # Keep the relative model path working from wherever the output is written.
    base = os.path.dirname(os.path.abspath(a.system))
    text = re.sub(r'^model\s*=\s*"([^"]*)"', lambda mm: f'model = "{os.path.normpath(os.path.join(base, mm.group(1)))}"', text, flags=re.M)
sys.stdout.write(text)
print(f"{len(boxes)} boxes ({a.shape})", file=sys.stderr)
