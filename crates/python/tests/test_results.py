"""Results from Python: a counterexample replayed exactly with Fractions, certificates written,
re-checked and tampered with, the JSON equal to the CLI's, time limits and Ctrl-C."""

import json
import os
import signal
import threading
import time
from fractions import Fraction as F

import pytest

import trestle
from conftest import cli

# A drifting plant: y grows by 1/20 per step and leaves Safe (y <= 3/10) after a few steps,
# while x follows a small ReLU network and a disturbance w.
DRIFT = """
init = "0 <= x <= 0.1 and 0 <= y <= 0.1"
safe = "-1 <= x <= 1 and 0 <= y <= 0.3"
[system]
name = "drift"
[state]
x = { type = "real" }
y = { type = "real" }
[nondet]
w = { interval = [-0.1, 0.1] }
[networks.policy]
layers = [
  { weights = [[0.7, -0.3], [-0.2, 0.9]], bias = [0.1, -0.05], activation = "relu" },
  { weights = [[0.5, -0.25]], bias = [0.03], activation = "identity" },
]
[controller]
network = "policy"
inputs = ["x", "y"]
actions = ["u"]
[step]
x = "x + 0.1*u + w"
y = "y + 0.05"
"""

# Inline weights are the nearest doubles (Fraction(float) is exact); the step's constants are
# the decimals as written.
W1 = [[F(0.7), F(-0.3)], [F(-0.2), F(0.9)]]
B1 = [F(0.1), F(-0.05)]
W2 = [F(0.5), F(-0.25)]
B2 = F(0.03)


def policy(x, y):
    hidden = [max(F(0), W1[i][0] * x + W1[i][1] * y + B1[i]) for i in range(2)]
    return W2[0] * hidden[0] + W2[1] * hidden[1] + B2


def replay(trace):
    assert trace.variables == ["x", "y"]
    for t in range(len(trace)):
        x, y = trace.states[t]
        u = policy(x, y)
        assert trace.actions[t] == {"u": u}
        w = trace.choices[t]["w"]
        assert F(-1, 10) <= w <= F(1, 10)
        assert trace.states[t + 1] == (x + F(1, 10) * u + w, y + F(1, 20))
    x0, y0 = trace.states[0]
    assert 0 <= x0 <= F(1, 10) and 0 <= y0 <= F(1, 10)
    assert trace.states[-1][1] > F(3, 10)
    # The floats are the nearest doubles of the exact values.
    assert trace.states_float == [tuple(float(v) for v in s) for s in trace.states]


def test_unsafe_run_replays_exactly_from_python():
    system = trestle.System.from_toml(DRIFT)
    result = system.ltl("G (y <= 0.3)", depth=8)
    assert result.status == "refuted", str(result)
    assert result.trace is not None and len(result.trace) >= 5
    replay(result.trace)


def test_json_is_the_clis(tmp_path, root):
    path = tmp_path / "drift.toml"
    path.write_text(DRIFT)
    result = trestle.load(path).ltl("G (y <= 0.3)", depth=8)
    out = cli("ltl", path, "--formula", "G (y <= 0.3)", "--depth", "8", "--json")
    assert out.returncode == 1, out.stderr
    theirs, ours = json.loads(out.stdout), json.loads(result.to_json())
    for doc in (theirs, ours):
        doc["stats"] = {k: v for k, v in doc["stats"].items() if not k.endswith("seconds")}
    assert ours == theirs


def test_text_is_the_clis(tmp_path):
    path = tmp_path / "drift.toml"
    path.write_text(DRIFT)
    out = cli("info", path)
    assert out.returncode == 0, out.stderr
    assert str(trestle.load(path)) == out.stdout
    assert "safe:" in out.stdout


def test_certificate_round_trip(tmp_path, root):
    system = trestle.load(root / "examples/maze-det.toml")
    result = system.check()
    assert result.proven
    path = tmp_path / "proof.json"
    result.certificate.save(path)
    assert json.loads(path.read_text()) == dict(result.certificate)
    by_path = trestle.certify(path, system)
    assert by_path.valid and by_path.kind == "proof" and bool(by_path)
    assert "certificate VALID: the system is safe" in str(by_path)
    # The CLI accepts the file Python wrote.
    assert cli("certify", path, "examples/maze-det.toml").returncode == 0
    # Another system's certificate is not this one's proof: a wider Init leaves the invariant.
    wider = trestle.load(root / "examples/maze-det.toml", set={"init": "0.2 <= x <= 0.4 and 0.6 <= y <= 0.7"})
    assert not trestle.certify(result.certificate, wider).valid
    # A tampered certificate is refused as input or rejected, never accepted.
    tampered = json.loads(json.dumps(result.certificate))
    tampered["system"] = "another"
    with pytest.raises(trestle.InputError):
        trestle.certify(tampered, system)


def test_plots_are_drawn_as_the_clis(tmp_path, root):
    system = trestle.load(root / "examples/maze-det.toml")
    proof = system.check(plot=tmp_path / "check.png", plot_size="320x240")
    assert proof.proven
    assert proof.artifacts["plot"] == str(tmp_path / "check.png")
    assert (tmp_path / "check.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    synthesis = system.synth(plot=str(tmp_path / "synth.svg"), plot_vars="y,x")
    assert synthesis.proven
    assert (tmp_path / "synth.svg").read_text().lstrip().startswith("<svg")
    # Bad picture arguments are input errors before any work, as the CLI's flags are.
    with pytest.raises(trestle.InputError, match="nope"):
        system.check(plot=tmp_path / "x.png", plot_vars="x,nope")
    with pytest.raises(trestle.InputError, match="directory"):
        system.check(plot=tmp_path)
    assert not (tmp_path / "x.png").exists()


def test_refutation_certificate_round_trip(root):
    # The start box as the candidate invariant: not inductive, with an exact witness.
    system = trestle.load(root / "examples/maze-det.toml", set={"invariant": "0.3 <= x <= 0.4 and 0.6 <= y <= 0.7"})
    result = system.check()
    assert result.status == "refuted", str(result)
    checked = trestle.certify(result.certificate, system)
    assert checked.valid and checked.kind == "refutation", str(checked)


def test_ltl_proof_certificate(root):
    system = trestle.load(root / "configs/systems/pi-tuned.toml")
    result = system.ltl(property="stays")
    assert result.proven, str(result)
    checked = trestle.certify(result.certificate, system)
    assert checked.valid and checked.ltl == result.certificate["ltl"], str(checked)
    assert result.details["formula"] == "G (x <= 0.5 and x >= -0.5)"


def test_timeout_ends_in_unknown(root):
    # CEGAR on the 8-puzzle takes far longer than the limit.
    system = trestle.load(root / "configs/systems/puzzle8-h64.toml")
    result = system.cegar(timeout=0.5)
    assert (result.status, result.reason_kind) == ("unknown", "time-limit"), str(result)


@pytest.fixture
def ctrl_c():
    """Python's Ctrl-C handler, whatever the process inherited: a shell starts background jobs
    with SIGINT ignored, and Python then installs no handler, so the signal these tests send
    would be dropped and the run would go on to its limit."""
    inherited = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, inherited)


def test_ctrl_c_cancels_a_run(root, ctrl_c):
    # Bound propagation through 3000 steps with CROWN takes minutes; it polls the run's token.
    system = trestle.load(root / "configs/systems/pi-tuned.toml")
    timer = threading.Timer(0.5, lambda: os.kill(os.getpid(), signal.SIGINT))
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            system.ltl("G<=3000 (x <= 0.3 and x >= -0.3)", method="bpt", bpt="crown", timeout=600)
    finally:
        timer.cancel()
    # The interpreter and the package still work after the cancelled run.
    assert system.ltl(property="stays").proven


def test_ctrl_c_cancels_cegar(root, ctrl_c):
    # CEGAR on the 8-puzzle runs far longer than its limit; it used to look at the deadline only,
    # so Ctrl-C waited for the 600 s. The run's token now stops its loops and its Z3 query.
    system = trestle.load(root / "configs/systems/puzzle8-h64.toml")
    timer = threading.Timer(0.5, lambda: os.kill(os.getpid(), signal.SIGINT))
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            system.cegar(timeout=600)
    finally:
        timer.cancel()
    # The package still works after the cancelled run.
    blocks = trestle.load(root / "configs/systems/blocks4-h16.toml")
    assert blocks.cegar(timeout=60).status in ("proven", "refuted")


@pytest.fixture
def stuck(monkeypatch):
    """Every run goes on for 30 s after its answer, deaf to its budget (the package's fault
    injection: a Z3 query that ignores its interrupt does the same, but no real case is stuck
    that cheaply)."""
    monkeypatch.setenv("TRESTLE_TEST_HANG_SECONDS", "30")


def test_a_run_stuck_past_its_limit_answers_unknown_in_time(root, stuck):
    system = trestle.load(root / "configs/systems/blocks4-h16.toml")
    start = time.monotonic()
    result = system.cegar(timeout=0.5)
    # The limit, then 2 s of grace (as the CLI's backstop), not the 30 s of the stuck run.
    assert time.monotonic() - start < 10
    assert (result.status, result.reason_kind) == ("unknown", "time-limit"), str(result)
    assert "left to finish in the background" in result.details["note"], str(result)


def test_a_stuck_verify_keeps_the_rows_decided(root, stuck):
    system = trestle.load(root / "configs/systems/frozenlake.toml")
    start = time.monotonic()
    results = system.verify(timeout=0.5)
    assert time.monotonic() - start < 10
    # The run decided both properties before it got stuck: their rows are kept, not replaced by
    # time-limit unknowns.
    assert [(r.property, r.status) for r in results] == [("safe", "proven"), ("succ", "refuted")], str(results)


def test_ctrl_c_on_a_stuck_run_raises_in_time(root, stuck, ctrl_c):
    system = trestle.load(root / "configs/systems/blocks4-h16.toml")
    timer = threading.Timer(0.5, lambda: os.kill(os.getpid(), signal.SIGINT))
    timer.start()
    start = time.monotonic()
    try:
        with pytest.raises(KeyboardInterrupt):
            system.cegar(timeout=600)
    finally:
        timer.cancel()
    assert time.monotonic() - start < 10
