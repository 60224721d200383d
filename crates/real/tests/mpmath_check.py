#!/usr/bin/env python3
"""Independent check of trestle-real against Python's mpmath (run by tests/mpmath.rs).

Each input line is: name, the argument's f64 bits (hex), the f64 enclosure's ends' bits (hex),
then the BigInterval's ends as exact binary numbers m*2^e ("m e"). mpmath evaluates the function
at 800 bits; its value, widened by 2^-780 relative for mpmath's own error, is a ball around the
exact value that both enclosures must meet (an enclosure is exact at 1 = exp(0), or 1 = the
256-bit upper end of exp(-1e-242), where the ball reaches past it). An enclosure 2^-52 or 2^-255
wide that misses the value can pass only if it misses by less than 2^-780. Exits 1 (listing the
first failures) when one misses, 2 on a malformed file.
"""
import struct
import sys

import mpmath
from mpmath import mp, mpf

mp.prec = 800


def f64(bits_hex):
    return mpf(struct.unpack("<d", struct.pack("<Q", int(bits_hex, 16)))[0])


def exact(man, exp):
    return mpmath.ldexp(mpf(int(man)), int(exp))


def powi(n):
    return lambda x: x ** n


FUNCTIONS = {
    "exp": mpmath.exp,
    "expm1": mpmath.expm1,
    "log": mpmath.log,
    "log1p": mpmath.log1p,
    "sqrt": mpmath.sqrt,
    "sin": mpmath.sin,
    "cos": mpmath.cos,
    "tan": mpmath.tan,
    "atan": mpmath.atan,
    "tanh": mpmath.tanh,
    "sigmoid": lambda x: 1 / (1 + mpmath.exp(-x)),
    "tanh_derivative": lambda x: 1 / mpmath.cosh(x) ** 2,
    "sigmoid_derivative": lambda x: mpmath.exp(-abs(x)) / (1 + mpmath.exp(-abs(x))) ** 2,
}


def function(name):
    if name.startswith("powi(") and name.endswith(")"):
        return powi(int(name[5:-1]))
    return FUNCTIONS[name]


def main(path):
    failures = []
    checked = 0
    with open(path) as lines:
        for number, line in enumerate(lines, 1):
            fields = line.split()
            if len(fields) != 8:
                print(f"line {number}: expected 8 fields, got {len(fields)}", file=sys.stderr)
                return 2
            name, x_bits, lo_bits, hi_bits, big_lo_m, big_lo_e, big_hi_m, big_hi_e = fields
            x = f64(x_bits)
            value = function(name)(x)
            margin = abs(value) * mpmath.ldexp(1, -780)
            low, high = value - margin, value + margin
            enclosures = {
                "f64": (f64(lo_bits), f64(hi_bits)),
                "big": (exact(big_lo_m, big_lo_e), exact(big_hi_m, big_hi_e)),
            }
            for kind, (lo, hi) in enclosures.items():
                if hi < low or lo > high:
                    failures.append(f"{name}({mpmath.nstr(x, 17)}): {kind} [{mpmath.nstr(lo, 20)}, "
                                    f"{mpmath.nstr(hi, 20)}] misses mpmath's {mpmath.nstr(value, 30)}")
            checked += 1
    for failure in failures[:20]:
        print(failure)
    print(f"mpmath {mpmath.__version__}: {checked} arguments, {len(failures)} enclosure(s) missing the value")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
