"""Errors are exceptions: InputError with the CLI's message (exit code 2), never a panic."""

import pytest

import trestle
from conftest import cli


def cli_error(*args):
    out = cli(*args)
    assert out.returncode == 2, out
    return out.stderr.strip().removeprefix("error: ")


def test_missing_file_has_the_cli_message(root, monkeypatch):
    monkeypatch.chdir(root)
    with pytest.raises(trestle.InputError) as e:
        trestle.load("examples/no-such.toml")
    assert str(e.value) == cli_error("info", "examples/no-such.toml")


def test_bad_override_has_the_cli_message(root, monkeypatch):
    monkeypatch.chdir(root)
    with pytest.raises(trestle.InputError) as e:
        trestle.load("examples/maze-det.toml", set={"init": "x <= "})
    assert str(e.value) == cli_error("info", "examples/maze-det.toml", "--set", "init=x <= ")


def test_unknown_property_has_the_cli_message(root, monkeypatch):
    monkeypatch.chdir(root)
    system = trestle.load("configs/systems/pi-tuned.toml")
    with pytest.raises(trestle.InputError) as e:
        system.ltl(property="nope")
    assert str(e.value) == cli_error("ltl", "configs/systems/pi-tuned.toml", "--property", "nope")


def test_bad_formula_and_options():
    system = trestle.System.from_toml(TINY)
    with pytest.raises(trestle.InputError, match="formula"):
        system.ltl("G (x <=")
    with pytest.raises(trestle.InputError, match="method='magic': expected one of bridge, monolithic, milp"):
        system.check(method="magic")
    with pytest.raises(trestle.InputError, match="timeout must be a non-negative number of seconds"):
        system.synth(timeout=-1)
    with pytest.raises(trestle.InputError, match="threads must be at least 1"):
        system.verify(threads=0)
    with pytest.raises(trestle.InputError, match="give a formula or property=NAME"):
        system.ctl()
    with pytest.raises(trestle.InputError, match="unknown state variable 'z'"):
        system.simulate(start={"z": 1})
    with pytest.raises(TypeError):
        system.check(no_such_flag=True)
    with pytest.raises(trestle.InputError, match="no property 'nope'"):
        system.verify(property="nope")


def test_errors_are_one_family():
    assert issubclass(trestle.InputError, trestle.Error)
    assert issubclass(trestle.InternalError, trestle.Error)
    assert not issubclass(trestle.InputError, trestle.InternalError)


def test_from_toml_finds_models_relative_to_base_dir(root):
    text = (root / "examples/maze-det.toml").read_text()
    system = trestle.System.from_toml(text, base_dir=root / "examples")
    assert system.check().verdict == "safe"
    with pytest.raises(trestle.InputError, match="maze-2x8.nnet"):
        trestle.System.from_toml(text, base_dir=root)


TINY = """
[system]
name = "tiny"
[state]
x = { type = "real" }
[controller]
network = "id"
inputs = ["x"]
actions = ["u"]
[networks.id]
layers = [{ weights = [[0.5]], bias = [0.0], activation = "relu" }]
[step]
x = "u"
[init]
x = [0, 1]
[[property]]
name = "small"
invariant = "x <= 1"
"""
