"""Checks enclosures of random expressions against mpmath at 1300 bits (tests/elementary.rs).

Each line: a Python expression over x and y (mpmath functions, mpf rationals), x and y as exact
rationals, the f64 interval's ends as the hex of their bits, the 256-bit enclosure's ends as exact
rationals. mpmath's value (exact as a binary float, within 2^-1200 of the true value) must lie in
both (within 2^-1200 of a point enclosure, an exact rational value). Exit 0 when every line agrees, 1 otherwise (listing the first disagreements).
"""

import struct
import sys
from fractions import Fraction

import mpmath
from mpmath import mpf, sin, cos, tan, exp, log, sqrt, tanh

mpmath.mp.prec = 1300


def sigmoid(v):
    return 1 / (1 + exp(-v))


def exact(v):
    """The exact rational value of a finite mpf."""
    sign, man, e, _ = v._mpf_
    value = Fraction(int(man)) * (Fraction(2) ** int(e))
    return -value if sign else value


def f64(h):
    return Fraction(struct.unpack(">d", bytes.fromhex(h))[0])


def main(path):
    bad = []
    count = 0
    for line in open(path):
        expr, x, y, ivlo, ivhi, lo, hi = line.rstrip("\n").split("\t")
        fx, fy = Fraction(x), Fraction(y)
        env = {"x": mpf(fx.numerator) / fx.denominator, "y": mpf(fy.numerator) / fy.denominator}
        value = eval(expr, globals(), env)
        if not mpmath.isfinite(value):
            continue
        v = exact(mpf(value))
        count += 1
        if not (f64(ivlo) <= v <= f64(ivhi)):
            bad.append(f"f64 interval misses {mpmath.nstr(value, 30)}: {expr} at x={x}, y={y}")
        lo, hi = Fraction(lo), Fraction(hi)
        # A point is an exact rational value, which mpmath, given x and y rounded to 1300 bits,
        # reproduces only to about 2^-1200.
        slack = abs(lo) * Fraction(1, 2**1200) + Fraction(1, 2**1200) if lo == hi else 0
        if not (lo - slack <= v <= hi + slack):
            bad.append(f"256-bit enclosure misses {mpmath.nstr(value, 30)}: {expr} at x={x}, y={y}")
    print(f"{count} cases, {len(bad)} disagreements")
    for b in bad[:10]:
        print(b)
    sys.exit(1 if bad else 0)


main(sys.argv[1])
