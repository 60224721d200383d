"""Trestle from Python: prove neural-network-controlled systems safe forever, or find real
counterexamples.

    import trestle
    system = trestle.load("configs/systems/frozenlake.toml")
    print(system.verify())

``load`` and ``System.from_toml`` read a system file (``set=`` overrides its values as the CLI's
``--set``); a ``System`` answers ``check``, ``synth``, ``verify``, ``ctl``, ``ltl``, ``cegar`` and
``simulate`` with keyword arguments named as the CLI's flags (``--no-fast-path`` is
``no_fast_path=True``); ``certify`` re-checks a certificate. Runs release the GIL; Ctrl-C and
``timeout=`` stop them cleanly (the result is then ``unknown``, or KeyboardInterrupt is raised).
Errors are ``InputError`` (the CLI's exit code 2, with its message) and ``InternalError`` (exit
code 4, a bug).
"""

import json
import os
import warnings as _warnings
from pathlib import Path

from . import _native
from ._native import Error, InputError, InternalError
from ._results import Certificate, Certification, Result, Trace, Verification
from ._simulation import Run, Simulation
from ._values import exact_text, overrides

__all__ = [
    "Certificate",
    "Certification",
    "Error",
    "InputError",
    "InternalError",
    "Result",
    "Run",
    "Simulation",
    "System",
    "Trace",
    "TrestleWarning",
    "Verification",
    "certify",
    "load",
]

__version__ = json.loads(_native.versions())["version"]


class TrestleWarning(UserWarning):
    """A lint warning of a system (a state variable never updated, an action never read)."""


def load(path, set=None, deny_warnings=False):
    """Reads a system file; ``set={"init.hdot0": -22.5}`` overrides values as ``--set`` does
    (paths in the file are relative to it). Warnings are issued as ``TrestleWarning``, or, with
    ``deny_warnings=True``, refuse the system."""
    native = _native.NativeSystem.load(os.fspath(path), overrides(set))
    return System._wrap(native, os.fspath(path), deny_warnings)


class System:
    """A loaded system: its ``name``, ``variables``, ``networks``, ``properties`` (from
    ``info()``, the CLI's ``info --json``) and the questions it answers."""

    def __init__(self, *args, **kwargs):
        raise TypeError("use trestle.load(path) or trestle.System.from_toml(text)")

    @classmethod
    def _wrap(cls, native, where, deny_warnings):
        self = object.__new__(cls)
        self._native = native
        self._info = json.loads(native.info())
        found = native.warnings
        if deny_warnings and found:
            raise InputError(f"{where} has warnings and --deny-warnings is given: {'; '.join(found)}")
        for w in found:
            _warnings.warn(w, TrestleWarning, stacklevel=3)
        return self

    @classmethod
    def from_toml(cls, text, base_dir=".", set=None, deny_warnings=False):
        """Reads a system from its TOML text; model files are found relative to ``base_dir``."""
        native = _native.NativeSystem.from_toml(text, os.fspath(Path(base_dir).resolve()), overrides(set))
        return cls._wrap(native, "the system", deny_warnings)

    @property
    def name(self):
        return self._native.name

    @property
    def variables(self):
        """The state variables: name, type and domain."""
        return self._info["state"]

    @property
    def networks(self):
        """The networks: name, source, layer sizes, activations."""
        return self._info["networks"]

    @property
    def properties(self):
        """The ``[[property]]`` entries: name, kind (invariant, ctl, ltl) and formula."""
        return self._info["properties"]

    @property
    def warnings(self):
        return list(self._native.warnings)

    def info(self):
        """Everything the file was read as (the CLI's ``info --json``)."""
        return json.loads(json.dumps(self._info))

    def check(self, **options):
        """The candidate invariant (``trestle check``): method, paper, post, linear_bridge,
        no_linear_bridge, split, queue, threads, max_splits, timeout, smt_timeout, min_width,
        no_fast_path, no_search, exact_after, no_exact_leaf, dump_smt, synthesize_on_failure."""
        return _result(self._native.check(**options))

    def synth(self, **options):
        """An invariant by synthesis, or a run leaving Safe (``trestle synth``): resolution,
        max_boxes, min_width, timeout, forward, full, threads, attack_steps, smt_timeout."""
        return _result(self._native.synth(**options))

    def verify(self, property=None, **options):
        """Every property, or those named (a name or a list): ``trestle verify`` with timeout,
        property_timeout, threads. An internal error of a property raises ``InternalError``
        (its ``verification`` attribute holds every result)."""
        names = [] if property is None else [property] if isinstance(property, str) else list(property)
        answers, table, errors = self._native.verify(properties=names, **options)
        v = Verification(self.name, [_result(a) for a in answers], table)
        if errors:
            e = InternalError("; ".join(errors))
            e.verification = v
            raise e
        return v

    def ctl(self, formula=None, **options):
        """A bounded-CTL formula, or ``property=NAME`` (``trestle ctl``): k, method, jobs,
        timeout, pieces."""
        return _result(self._native.ctl(formula, **options))

    def ltl(self, formula=None, **options):
        """An LTL formula, or ``property=NAME`` (``trestle ltl``): k, method, bpt, depth,
        timeout, no_adaptive, tighten."""
        return _result(self._native.ltl(formula, **options))

    def cegar(self, **options):
        """Safety of a discrete policy (``trestle cegar``): method, refine, no_heuristic,
        no_incremental, encoding, depth, timeout."""
        return _result(self._native.cegar(**options))

    def simulate(self, steps=20, runs=1, seed=0, start=None, nondet=None, branch=None, float=False):
        """Concrete runs (``trestle simulate``): ``start={"x": 0.5}`` fixes start values
        (``--from``; the others are drawn from Init), ``nondet={"c": [0.5, 0.7]}`` the inputs per
        step (the last repeats), ``branch`` the branch per step (a name, or a list)."""
        start_items = [(k, exact_text(v, f"start[{k!r}]")) for k, v in (start or {}).items()]
        nondet_items = [
            (k, [exact_text(x, f"nondet[{k!r}]") for x in (v if isinstance(v, (list, tuple)) else [v])])
            for k, v in (nondet or {}).items()
        ]
        branches = None if branch is None else [branch] if isinstance(branch, (str, int)) else list(branch)
        doc = self._native.simulate(
            steps=steps,
            runs=runs,
            seed=seed,
            start=start_items,
            nondet=nondet_items,
            branch=None if branches is None else [str(b) for b in branches],
            float=float,
        )
        return Simulation(json.loads(doc), [v["name"] for v in self.variables])

    def __str__(self):
        """What the file was read as, as text (the CLI's ``info``)."""
        return self._native.info_text()

    def __repr__(self):
        names = ", ".join(v["name"] for v in self.variables)
        return f"<trestle.System {self.name}: state {names}; {len(self.properties)} properties>"


def certify(certificate, system):
    """Re-checks a certificate (a ``Certificate`` or dict, or the path of a certificate file)
    against a ``System``, without trusting the run that wrote it."""
    if isinstance(certificate, dict):
        text, label = json.dumps(certificate), None
    else:
        path = os.fspath(certificate)
        try:
            with open(path, encoding="utf-8") as f:
                text = f.read()
        except OSError as e:
            raise InputError(f"cannot read {path}: {e.strerror}") from None
        label = path
    return Certification(json.loads(system._native.certify(text, label)))


def _result(answer):
    doc, text, certificate = answer
    return Result(json.loads(doc), text, None if certificate is None else json.loads(certificate))
