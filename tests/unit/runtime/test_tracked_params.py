"""The tracked twin of a derived params function (runtime/tracked_params.py): a function of the wildcards
alone that Snakemake records, holding the job's values and none of its paths, the same at every run."""

from pathlib import Path

from rlstudy.runtime.tracked_params import FileName, Files, deriving, track_derived_params, tracked_twin


def options(wildcards, input, output):
    return ["--lr", 0.15, "--seed", wildcards["seed"], "--model", input.model, "--code", Path(input.code[0]).stem,
            "--runs", *input.runs, "--out", output]


class Rule:
    """What track_derived_params uses of a Snakemake rule: its named params and set_params."""

    def __init__(self, **params):
        self.params = dict(params)

    def set_params(self, **params):
        self.params.update(params)


def test_the_twin_holds_the_values_and_names_the_files_by_their_role():
    twin = tracked_twin(options, deriving(options))
    assert deriving(options) == ["input", "output"] and deriving(twin) == [] and deriving("a value") == []
    values = twin({"seed": "3"})
    assert values[:-1] == ["--lr", 0.15, "--seed", "3", "--model", "<input.model>", "--code", "<input", "--runs",
                      "<input.runs>", "--out"]
    assert repr(values) == repr(twin({"seed": "3"}))  # no address: the same record at every run
    assert "0x" not in repr(values) and repr(values[-1]) == "<output>"
    assert FileName("<input.code>")[0] == "<input.code>[0]" and FileName("<output>").anything == "<output>.anything"
    assert list(FileName("<input.runs>")) == ["<input.runs>"]  # a named list of files


def test_every_derived_params_function_gets_a_twin_and_nothing_else_does():
    rule = Rule(args=options, step=lambda wildcards, input: input.code[0], plain=lambda wildcards: 1, value=[2])
    assert track_derived_params([rule]) == 2
    assert set(rule.params) == {"args", "step", "plain", "value", "args_values", "step_values"}
    assert rule.params["step_values"]({}) == "<input.code>[0]"
    assert track_derived_params([rule]) == 0  # a twin is never twinned, and a rule twinned once keeps its twins
