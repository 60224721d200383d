#!/usr/bin/env python3
"""Second, independent evaluation of ONNX controllers for crates/nn/tests/archcomp.rs.

Reads the JSON file given as the only argument: a list of cases, each with a float64 ONNX model
("model"), its input shape ("shape"), inputs ("inputs") and Trestle's f64 outputs on them ("ours").
Runs the `onnx` package's reference evaluator (numpy, float64) on every input and checks that
|ours - theirs| <= 1e-9 * max(1, |theirs|) for every output; prints the worst relative difference
per model. Exit 0: all agree; 1: a disagreement; 77: skipped (no numpy or onnx package).
"""
import json
import sys

TOLERANCE = 1e-9

try:
    import numpy as np
    import onnx
    from onnx.reference import ReferenceEvaluator
except ImportError as e:  # optional dependency: say so, exit "skipped"
    print(f"the onnx reference check needs numpy and onnx (pip install onnx numpy): {e}")
    sys.exit(77)


def main(path):
    with open(path) as f:
        cases = json.load(f)
    worst_all, failures = 0.0, []
    for case in cases:
        model = onnx.load(case["model"])
        session = ReferenceEvaluator(model)
        name = model.graph.input[0].name
        initializers = {t.name for t in model.graph.initializer}
        name = next(i.name for i in model.graph.input if i.name not in initializers)
        worst = 0.0
        for x, ours in zip(case["inputs"], case["ours"]):
            feed = np.array(x, dtype=np.float64).reshape(case["shape"])
            theirs = np.asarray(session.run(None, {name: feed})[0], dtype=np.float64).reshape(-1)
            ours = np.asarray(ours, dtype=np.float64)
            if theirs.shape != ours.shape:
                failures.append(f"{case['name']}: {theirs.size} outputs, Trestle {ours.size}")
                break
            rel = np.max(np.abs(ours - theirs) / np.maximum(1.0, np.abs(theirs)))
            worst = max(worst, float(rel))
        print(f"{case['name']:62} onnx reference (float64) worst relative difference {worst:.2e}")
        if worst > TOLERANCE:
            failures.append(f"{case['name']}: {worst:.3e} > {TOLERANCE}")
        worst_all = max(worst_all, worst)
    print(f"worst relative difference against the onnx reference evaluator: {worst_all:.3e}")
    if failures:
        print("\n".join(failures))
        sys.exit(1)


if __name__ == "__main__":
    main(sys.argv[1])
