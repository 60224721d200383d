"""Results as Python objects over the ``trestle-result/1`` JSON the driver writes.

Every value is there twice: as the nearest float, for reading and plotting, and exactly, as a
``fractions.Fraction`` (what the counterexample was replayed with).
"""

import copy
import json

from . import _native
from ._values import fraction


class Certificate(dict):
    """A certificate file's JSON (a proof, or the record of a refutation), as a dict."""

    def save(self, path):
        """Writes it as ``--certificate PATH`` would (atomically); re-check it with
        ``trestle.certify`` or ``trestle certify PATH SYSTEM``."""
        _native.write_json(path, json.dumps(self))


class Trace:
    """A counterexample run, replayed exactly: states ``s_0 .. s_n`` and the ``n`` steps between
    them (actions, the environment's choices, branches); a lasso repeats from ``loop_back``."""

    def __init__(self, doc):
        self._doc = doc
        self.variables = list(doc["states"][0].keys()) if doc["states"] else []
        self.states = [tuple(fraction(x) for x in s) for s in doc["states_exact"]]
        self.states_float = [tuple(float(v) for v in s.values()) for s in doc["states"]]
        self.actions = [dict(zip(st["actions"].keys(), map(fraction, st["actions_exact"]))) for st in doc["steps"]]
        self.choices = [
            dict(zip(st.get("nondet", {}).keys(), map(fraction, st.get("nondet_exact", [])))) for st in doc["steps"]
        ]
        self.labels = [dict(st.get("labels", {})) for st in doc["steps"]]
        self.branches = [st["branch"] for st in doc["steps"]]
        self.loop_back = doc.get("loop_back")
        hidden = doc.get("hidden_exact")
        self.hidden = None if hidden is None else _fractions(hidden)
        self.replayed = doc["replayed"]

    def __len__(self):
        """The number of steps."""
        return len(self.branches)

    def __repr__(self):
        kind = "lasso" if self.loop_back is not None else "run"
        return f"<trestle.Trace: a {kind} of {len(self)} step(s) over {', '.join(self.variables)}>"


def _fractions(nested):
    if isinstance(nested, list):
        return [_fractions(x) for x in nested]
    return fraction(nested)


class Result:
    """One run's answer: ``verdict`` (the engine's word), ``status`` (``proven``, ``evidence``,
    ``refuted`` or ``unknown``), ``margin`` (of floating-point evidence), ``reason`` (why
    unknown), ``evidence``, ``trace``, ``certificate``, ``stats``, ``artifacts`` (files written:
    ``plot``); ``str()`` is the CLI's text and
    ``to_json()`` its ``--json`` object."""

    def __init__(self, doc, text, certificate=None):
        self._doc = doc
        self._text = text
        self.verdict = doc["verdict"]
        self.status = doc["status"]
        self.command = doc["command"]
        self.system = doc["system"]
        self.property = doc.get("property")
        self.method = doc["method"]
        self.margin = doc.get("margin")
        self.reason = doc.get("reason")
        self.reason_kind = doc.get("reason_kind")
        self.evidence = doc.get("evidence")
        self.stats = doc.get("stats", {})
        self.config = doc.get("config", {})
        self.details = doc.get("details", {})
        self.artifacts = doc.get("artifacts", {})
        self.trace = Trace(doc["trace"]) if doc.get("trace") else None
        self.certificate = Certificate(certificate) if certificate is not None else None

    @property
    def proven(self):
        """Whether the status is ``proven`` (an exact proof; evidence is not)."""
        return self.status == "proven"

    @property
    def refuted(self):
        """Whether the status is ``refuted`` (``trace`` holds the replayed counterexample)."""
        return self.status == "refuted"

    def as_dict(self):
        """The ``trestle-result/1`` object (a copy)."""
        return copy.deepcopy(self._doc)

    def to_json(self, indent=2):
        """The ``trestle-result/1`` object as JSON text, as the CLI's ``--json`` prints it."""
        return json.dumps(self._doc, indent=indent)

    def __str__(self):
        return self._text

    def __repr__(self):
        what = f" {self.property}" if self.property else ""
        return f"<trestle.Result {self.system}{what}: {self.verdict} ({self.status}, by {self.method})>"


class Verification(list):
    """The results of ``verify``, one per property; ``str()`` is the CLI's table."""

    def __init__(self, system, results, table):
        super().__init__(results)
        self.system = system
        self._table = table

    def __getitem__(self, key):
        if isinstance(key, str):
            for r in self:
                if r.property == key:
                    return r
            raise KeyError(key)
        return super().__getitem__(key)

    def as_dict(self):
        return {"system": self.system, "results": [r.as_dict() for r in self]}

    def to_json(self, indent=2):
        """The CLI's ``verify --json`` object as JSON text."""
        return json.dumps(self.as_dict(), indent=indent)

    def __str__(self):
        return self._table.rstrip("\n")

    def __repr__(self):
        return f"<trestle.Verification {self.system}: {', '.join(f'{r.property} {r.verdict}' for r in self)}>"


class Certification:
    """A certificate's re-check: ``valid`` (a proof proves, a refutation replays), ``kind``
    (``proof`` or ``refutation``), ``ltl`` (the formula a proof proves, if not the system's Safe)
    and ``checks`` (name, passed, detail)."""

    def __init__(self, doc):
        self._doc = doc
        self.valid = doc["valid"]
        self.kind = doc["kind"]
        self.ltl = doc.get("ltl")
        self.checks = [(c["check"], c["ok"], c["detail"]) for c in doc["checks"]]

    def __bool__(self):
        return self.valid

    def as_dict(self):
        return copy.deepcopy(self._doc)

    def __str__(self):
        lines = [f"{'ok  ' if ok else 'FAIL'} {name}: {detail}" for name, ok, detail in self.checks]
        if self.valid and self.kind == "proof":
            lines.append(
                f"certificate VALID: '{self.ltl}' holds on every run"
                if self.ltl
                else "certificate VALID: the system is safe"
            )
        elif self.valid:
            lines.append("refutation VALID: the counterexample replays exactly")
        else:
            lines.append("certificate REJECTED: it proves nothing (the system itself may be safe or not)")
        return "\n".join(lines)

    def __repr__(self):
        return f"<trestle.Certification {self.kind}: {'valid' if self.valid else 'rejected'}>"
