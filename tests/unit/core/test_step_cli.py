"""Steps run by hand (issue 40): a usage line that names the command, help that says where each value
comes from, options taken from the project's config (--from-config), and a provenance command that
pastes into a shell at the project's root and reruns the step."""

import importlib
import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from hostile import cli, one_line_error  # noqa: F401 - cli is a fixture
from rlstudy.core.cli import run
from rlstudy.core.provenance import module_of_file

ROOT = Path(__file__).resolve().parents[3]
CONFIG = str(ROOT / "config.yaml")
SMOKE_SCALE = str(ROOT / "workflow" / "profiles" / "smoke" / "scale.yaml")
STEPS = sorted(f"{p.parent.parent.name}.cli.{p.stem}" for p in (ROOT / "src" / "rlstudy").glob("*/cli/*.py")
               if p.stem not in ("__init__", "args"))
DYNAMICS = json.dumps({"dt": 0.19634954084936207, "reward_of": "current", "sigma": 0.2})


def help_text(capsys, monkeypatch, step: str) -> str:
    """A step's --help, run in this process as `python -m rlstudy.<step> --help` would run it."""
    main = importlib.import_module(f"rlstudy.{step}").main
    monkeypatch.setattr(sys, "argv", [step, "--help"])
    capsys.readouterr()
    with pytest.raises(SystemExit) as stop:
        run(main)
    assert stop.value.code == 0
    return capsys.readouterr().out


@pytest.mark.parametrize("step", STEPS)
def test_help_names_the_command_and_shows_only_real_defaults(capsys, monkeypatch, step):
    text = help_text(capsys, monkeypatch, step)
    assert text.startswith(f"usage: python -m rlstudy.{step} ")
    assert "(default: None)" not in text and "(default: False)" not in text


def test_help_says_which_config_key_each_value_comes_from(capsys, monkeypatch):
    text = " ".join(help_text(capsys, monkeypatch, "agents.cli.train_agent").split())
    for fragment in ("--from-config FILE", "gymnasium environment id; config '<agent>.env'",
                     "config '<agent>.params'", "config '<agent>.evaluation_episodes'",
                     "the master seed; config 'seed'", "results/agents/<agent>/seed<N>"):
        assert fragment in text, fragment
    text = " ".join(help_text(capsys, monkeypatch, "bellman.cli.run_method").split())
    assert "config: the parameters of setting <setting> for <task>" in text
    assert "random numbers are drawn on the CPU either way; config 'device'" in text  # its one default: config.yaml


def test_no_step_repeats_a_config_value_as_its_default(capsys, monkeypatch):
    """The figures' formats and resolution, the convergence bound, the exact solver's tolerance and the
    device have one home, the config: a step takes them from the rule or from --from-config."""
    for step, flag, key in [("bellman.cli.plot_q", "--formats", "figures.formats"),
                            ("bellman.cli.plot_q", "--dpi", "figures.dpi"),
                            ("bellman.cli.plot_q", "--converged-below", "summary.converged_below"),
                            ("agents.cli.plot_basics", "--formats", "figures.formats"),
                            ("agents.cli.plot_basics", "--rollout-steps", "<agent>.rollout_steps"),
                            ("agents.cli.plot_mpo", "--dpi", "figures.dpi"),
                            ("bellman.cli.solve_exact", "--rtol", "exact.rtol"),
                            ("bellman.cli.run_method", "--numerics", "numerics"),
                            ("bellman.cli.budget_finite", "--numerics", "numerics"),
                            ("bellman.cli.budget_finite", "--max-transitions", "budget.max_transitions"),
                            ("bellman.cli.budget_population", "--ur-action", "budget.ur_action"),
                            ("bellman.cli.import_authors_data", "--steps", "trajectories.authors"),
                            ("bellman.cli.train_qstar", "--device", "device"),
                            ("offline.cli.train_behavioural", "--device", "device")]:
        text = " ".join(help_text(capsys, monkeypatch, step).split())
        help_of_flag = text[text.index(f" {flag} ", text.index("options:")):]
        where = help_of_flag.index(f"config '{key}'") + len(f"config '{key}'")
        assert not help_of_flag[where:].startswith(" (default:"), (step, flag)  # argparse appends a default


def test_the_numerics_and_the_budget_options_come_from_the_rule_or_the_config(cli, tmp_path):
    """Left out and without --from-config, --numerics (and the budget's --ur-action, --max-transitions)
    is missing, not the compiled backend by a default of the step's own; --from-config gives the config's."""
    budget = ["--task", "control", "--exact", "e.npy", "--points", "64", "--fit", "{}", "--estimator", "UR",
              "--problem", "{}", "--start", "q.pt", "--out-dir", tmp_path / "out"]
    status, err = cli("bellman.cli.budget_finite", *budget, "--trajectory", "t", "--seed", "0")
    one_line_error(status, err, "--ur-action (config 'budget.ur_action')",
                   "--max-transitions (config 'budget.max_transitions')", "--numerics (config 'numerics')")
    status, err = cli("bellman.cli.budget_population", *budget)
    one_line_error(status, err, "required: --ur-action (config 'budget.ur_action'); give them")
    status, err = cli("bellman.cli.run_method", "--setting", "sgd", "--dataset", "ours", "--task", "control",
                      "--estimator", "DS", "--run-seed", "0", "--trajectory", "t", "--reference", "r", "--exact", "e",
                      "--out-dir", tmp_path, "--optimizer", "sgd", "--seed", "0", "--params", "{}", "--problem", "{}",
                      "--device", "cpu")
    one_line_error(status, err, "required: --numerics (config 'numerics'); give them")
    from rlstudy.bellman.budget import steps as budget_common
    from rlstudy.core.cli import parser

    p = parser("a budget step")
    budget_common.add_residual_options(p)
    p.config_option("--numerics", "numerics")
    args = p.parse_args(["--estimator", "UR", "--problem", "{}", "--start", "q.pt", "--from-config", CONFIG])
    assert (args.ur_action, args.numerics) == ("recorded", "compiled")  # config.yaml's


def test_a_list_option_takes_its_items_from_the_config():
    from rlstudy.core.cli import parser
    from rlstudy.plotting import style

    p = parser("a figure")
    style.add_format_options(p)
    args = p.parse_args(["--from-config", CONFIG])
    assert args.formats == ["png", "pdf"] and args.dpi == 150
    assert p.parse_args(["--from-config", CONFIG, "--formats", "svg"]).formats == ["svg"]


def test_gamma_reaches_the_steps_only_inside_problem():
    """No rule passes a bare --gamma (nor plot_q a bare --dynamics): the discount is config `problem`'s,
    given as --problem, so a step cannot be handed one gamma beside another."""
    rules = "".join(path.read_text() for path in (ROOT / "workflow" / "rules").glob("*.smk"))
    assert '"--gamma"' not in rules and "--gamma " not in rules
    q_figure = rules[rules.index("as q_figure with:"):]
    assert '"--dynamics"' not in q_figure[:q_figure.index("\n\n\n")]
    for step in STEPS:
        source = (ROOT / "src" / "rlstudy" / step.split(".")[0] / "cli" / f"{step.split('.')[-1]}.py").read_text()
        assert '"--gamma"' not in source, step


def test_an_option_comes_whole_from_the_command_line_or_from_the_config(cli, tmp_path, one_thread):
    """At smoke scale (config.yaml, then the smoke profile's scale.yaml over it): a DQN run of seconds,
    with every value but the one given from the merged config."""
    out = tmp_path / "dqn"
    status, err = cli("agents.cli.train_agent", "--agent", "dqn", "--from-config", CONFIG, SMOKE_SCALE,
                      "--run-seed", "0", "--evaluation-episodes", "1", "--out-dir", out)
    assert status == 0, err
    record = json.loads((out / "returns.csv.provenance.json").read_text())
    import yaml

    config, smoke = (yaml.safe_load(Path(path).read_text()) for path in (CONFIG, SMOKE_SCALE))
    assert smoke["dqn"]["params"] and "env" not in smoke["dqn"] and "seed" not in smoke
    assert record["parameters"]["params"] == {**config["dqn"]["params"], **smoke["dqn"]["params"]}
    assert record["parameters"]["env"] == config["dqn"]["env"] and record["seed"] == config["seed"]
    assert record["parameters"]["evaluation_episodes"] == 1  # given: the config's is not used
    # --params given is taken whole: the config does not fill the keys it lacks
    status, err = cli("agents.cli.train_agent", "--agent", "dqn", "--params", '{"total_steps": 500}',
                      "--from-config", CONFIG, "--run-seed", "0", "--out-dir", tmp_path / "partial")
    one_line_error(status, err, "config 'dqn.params'", "missing keys ['batch_size'", "leave --params out")


def test_missing_params_keys_say_how_to_fill_them(cli, tmp_path):
    status, err = cli("agents.cli.train_agent", "--agent", "dqn", "--env", "CartPole-v1", "--params",
                      '{"total_steps": 500}', "--evaluation-episodes", "1", "--seed", "1", "--run-seed", "0",
                      "--out-dir", tmp_path / "dqn")
    one_line_error(status, err, "config 'dqn.params'", "missing keys ['batch_size'",
                   "give them in --params, or leave --params out and add --from-config config.yaml")


def test_missing_options_name_their_config_keys(cli, tmp_path):
    status, err = cli("agents.cli.train_agent", "--agent", "dqn", "--run-seed", "0", "--out-dir", tmp_path)
    assert status == 2
    assert ("required: --env (config 'dqn.env'), --params (config 'dqn.params'), --evaluation-episodes "
            "(config 'dqn.evaluation_episodes'), --seed (config 'seed'); give them, or --from-config config.yaml") in err


def test_the_config_files_are_merged_in_order_and_checked_by_the_schema(cli, tmp_path):
    config = tmp_path / "bad.yaml"
    config.write_text("trajectories: {short: 1}\n")  # over config.yaml's, as a profile's scale.yaml
    status, err = cli("bellman.cli.make_trajectory", "--task", "control", "--size", "short",
                      "--from-config", CONFIG, config, "--out-dir", tmp_path / "out")
    assert status == 2
    assert err.splitlines()[-1].endswith("error: --from-config: invalid configuration (1 problem(s)): "
                                         "config key 'trajectories.short': 1 is less than the minimum of 3")
    assert not (tmp_path / "out").exists()


def test_a_config_value_is_checked_as_the_option_checks_it(cli, tmp_path):
    status, err = cli("bellman.cli.run_method", "--setting", "nonesuch", "--dataset", "ours", "--task", "control",
                      "--estimator", "DS", "--run-seed", "0", "--trajectory", "t", "--reference", "r", "--exact", "e",
                      "--out-dir", tmp_path, "--from-config", CONFIG)
    assert status == 2 and "--from-config: no config value for --optimizer" in err and "'nonesuch'" in err


def test_module_of_file():
    assert module_of_file(ROOT / "src/rlstudy/bellman/cli/run_method.py") == "rlstudy.bellman.cli.run_method"
    assert module_of_file(ROOT / "tests/unit/core/test_step_cli.py") is None  # not in a package
    assert module_of_file("python") is None


def test_the_recorded_command_pasted_in_a_shell_reruns_the_step(tmp_path):
    """The step run as the workflow runs it, then its record's command run by a shell at the project's
    root (here a folder with src/): the same bytes, record included."""
    project = tmp_path / "project"
    project.mkdir()
    (project / "src").symlink_to(ROOT / "src")
    python_first = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    python_first.pop("PYTHONPATH", None)
    out = "data/trajectories/ours/control/short"
    first = subprocess.run([sys.executable, "-m", "rlstudy.runtime.warmstart", "rlstudy.bellman.cli.make_trajectory",
                            "--task", "control", "--size", "short", "--steps", "20", "--dynamics", DYNAMICS,
                            "--seed", "7", "--out-dir", out], cwd=project, capture_output=True, text=True,
                           env={**python_first, "PYTHONPATH": str(ROOT / "src"), "RLSTUDY_WARM_START": "0"})
    assert first.returncode == 0, first.stderr
    written = {p.name: p.read_bytes() for p in sorted((project / out).iterdir())}
    record = json.loads(written["states.npy.provenance.json"])
    command = record["command"]
    assert command.startswith("PYTHONPATH=src python -m rlstudy.bellman.cli.make_trajectory ")
    assert shlex.split(command)[-10:] == ["--size", "short", "--steps", "20", "--dynamics", DYNAMICS,
                                          "--seed", "7", "--out-dir", out]
    assert "project's root" in record["command_from"]
    shutil.rmtree(project / "data")
    again = subprocess.run(["bash", "-c", command], cwd=project, capture_output=True, text=True, env=python_first)
    assert again.returncode == 0, again.stderr
    assert {p.name: p.read_bytes() for p in sorted((project / out).iterdir())} == written
