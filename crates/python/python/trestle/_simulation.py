"""Concrete runs of the closed loop as arrays: numpy arrays when numpy is installed, lists of
lists otherwise. The exact values are kept beside them as Fractions."""

import json

from ._values import fraction

try:
    import numpy as _np
except ImportError:  # numpy is optional
    _np = None


def _array(rows):
    return _np.array(rows, dtype=float) if _np is not None else rows


def _number(v):
    # An argmax action is {"index": i, "label": name}: its value is the index.
    return float(v["index"]) if isinstance(v, dict) else float(v)


class Run:
    """One run: ``states`` (steps + 1 rows, one column per state variable), ``actions`` and
    ``nondet`` (one row per step), ``branches``, ``states_exact`` (Fractions), ``stopped`` (why the
    run ended early, or None) and ``start_in_init``."""

    def __init__(self, doc, variables):
        steps = doc["steps"]
        self.variables = variables
        self.states_exact = [[fraction(x) for x in st["state_exact"]] for st in steps]
        self.states_exact.append([fraction(x) for x in doc["final_exact"]])
        self.states = _array([[float(v) for v in st["state"].values()] for st in steps] + [list(doc["final"].values())])
        self.actions = _array([[_number(v) for v in st["actions"].values()] for st in steps])
        self.action_labels = [{k: v["label"] for k, v in st["actions"].items() if isinstance(v, dict)} for st in steps]
        self.nondet = _array([[float(v) for v in st["nondet"].values()] for st in steps])
        self.branches = [st["branch"] for st in steps]
        self.stopped = doc["stopped"]
        self.start_in_init = doc["start_in_init"]

    def __len__(self):
        return len(self.branches)

    def __repr__(self):
        end = f", stopped: {self.stopped}" if self.stopped else ""
        return f"<trestle.Run of {len(self)} step(s){end}>"


class Simulation(list):
    """The runs of ``System.simulate``; ``to_json()`` is the CLI's ``simulate --json`` object."""

    def __init__(self, doc, variables):
        super().__init__(Run(r, variables) for r in doc["runs"])
        self._doc = doc
        self.arithmetic = doc["arithmetic"]
        self.seed = doc["seed"]

    def to_json(self, indent=2):
        return json.dumps(self._doc, indent=indent)
