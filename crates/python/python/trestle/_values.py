"""Python values as the exact text Trestle reads.

Numbers a user writes are exact: an int is itself, a Fraction is p/q, a Decimal its digits, and a
float is read from its shortest repr (``0.1`` is 1/10, as ``--set x=0.1`` on the command line);
give a Fraction for any other value.
"""

import decimal
import fractions
import math
import os


def exact_text(value, what):
    """A number as a decimal or ``p/q`` text."""
    if isinstance(value, bool):
        raise TypeError(f"{what}: {value!r} is not a number")
    if isinstance(value, int):
        return str(value)
    if isinstance(value, fractions.Fraction):
        return f"{value.numerator}/{value.denominator}"
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"{what}: {value!r} is not a finite number")
        return repr(value)
    if isinstance(value, decimal.Decimal):
        if not value.is_finite():
            raise ValueError(f"{what}: {value!r} is not a finite number")
        return str(value)
    if isinstance(value, str):
        return value
    raise TypeError(f"{what}: {value!r} is not a number")


def toml_text(value, what):
    """A value of an override as TOML text (``set={"init.x": 0.5}`` is ``--set init.x=0.5``)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, fractions.Fraction):
        return f'"{value.numerator}/{value.denominator}"'
    if isinstance(value, (int, float, decimal.Decimal)):
        return exact_text(value, what)
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    if isinstance(value, str):
        return value
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml_item(v, what) for v in value) + "]"
    raise TypeError(f"{what}: {value!r} cannot be written as a TOML value")


def _toml_item(value, what):
    # Inside an array a string must be quoted to stay a string.
    if isinstance(value, (str, os.PathLike)):
        text = os.fspath(value)
        return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return toml_text(value, what)


def overrides(set_):
    """``set={"init.x": 0.5}`` as the CLI's ``KEY=VALUE`` arguments."""
    if set_ is None:
        return []
    if isinstance(set_, dict):
        return [f"{k}={toml_text(v, f'set[{k!r}]')}" for k, v in set_.items()]
    return [str(s) for s in set_]


def fraction(text):
    """An exact value of a result (``"3/10"``, ``"-2"``) as a Fraction."""
    return fractions.Fraction(text)
