"""The examples of crates/python/README.md, as written there."""

import fractions
import json

import pytest

import trestle


def test_acceptance_line_prints_both_results_of_frozenlake(root, shared_models, monkeypatch, capsys):
    monkeypatch.chdir(root)
    print(trestle.load("configs/systems/frozenlake.toml").verify())
    out = capsys.readouterr().out
    assert out.startswith("system: frozenlake\n")
    rows = [line.split() for line in out.splitlines()[2:] if line.strip()]
    # The paper's two properties: holes avoided for k = 3 holds, being in the goal at step k does not.
    assert [r[:2] for r in rows[:2]] == [["safe", "true"], ["succ", "false"]], out


def test_maze_example(root):
    system = trestle.load(root / "examples/maze-det.toml")
    assert system.name == "example-maze-det"
    assert [v["name"] for v in system.variables] == ["x", "y"]
    assert system.networks[0]["layers"] == [2, 8, 8, 2]
    result = system.check()
    assert (result.verdict, result.status, result.proven) == ("safe", "proven", True)
    assert result.trace is None
    assert result.certificate["system"] == "example-maze-det" and "invariant" in result.certificate
    assert "SAFE (proven, by bridge)" in str(result)
    assert json.loads(result.to_json())["format"] == "trestle-result/1"


def test_overrides_are_exact_and_refute(root):
    # The candidate invariant is not inductive once the start box is wider than it.
    system = trestle.load(root / "examples/maze-det.toml", set={"invariant": "0.3 <= x <= 0.4 and 0.6 <= y <= 0.7"})
    result = system.check()
    assert result.status == "refuted", str(result)
    witness = result.details["counterexample"]
    state = [fractions.Fraction(x) for x in witness["state_exact"]]
    assert fractions.Fraction(3, 10) <= state[0] <= fractions.Fraction(4, 10)


def test_simulate_arrays(root):
    system = trestle.load(root / "examples/maze-det.toml")
    sim = system.simulate(steps=5, runs=2, seed=7)
    assert len(sim) == 2
    run = sim[0]
    assert len(run.states) == 6 and len(run.states[0]) == 2
    assert len(run.actions) == 5 and len(run.branches) == 5
    # The exact states and the floats agree, and a run starts in Init.
    assert float(run.states_exact[0][0]) == run.states[0][0]
    assert run.start_in_init
    # The same seed, the same runs.
    again = system.simulate(steps=5, runs=2, seed=7)
    assert [r.states_exact for r in again] == [r.states_exact for r in sim]
    fixed = system.simulate(steps=3, start={"x": fractions.Fraction(7, 20), "y": 0.65})
    assert fixed[0].states_exact[0] == [fractions.Fraction(7, 20), fractions.Fraction(13, 20)]


def test_simulate_matches_the_cli(root):
    from conftest import cli

    system = trestle.load(root / "examples/maze-det.toml")
    ours = json.loads(system.simulate(steps=4, runs=2, seed=3).to_json())
    out = cli("simulate", "examples/maze-det.toml", "--steps", "4", "--runs", "2", "--seed", "3", "--json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == ours


def test_numpy_arrays_when_installed(root):
    np = pytest.importorskip("numpy")
    run = trestle.load(root / "examples/maze-det.toml").simulate(steps=2)[0]
    assert isinstance(run.states, np.ndarray) and run.states.shape == (3, 2)
