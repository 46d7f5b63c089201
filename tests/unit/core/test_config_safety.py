"""Config and profile files are data, not code: Snakemake's loader (yte) runs a file's `?expr` values
as Python when it sets `__use_yte__: true`, before the Snakefile runs; the project's entry points
(make, python -m rlstudy.runtime.launch) refuse such a file first (the Snakefile failing the run, and
the launcher's runs of Snakemake: tests/workflow/test_launcher_workflow.py). Also: a key given twice, a nesting that ends in a RecursionError, `--config` aliases, and
`--config` scalars typed as a config file's (docs/reliability.md, "Configuration and scales")."""

import re
import subprocess
import time
from pathlib import Path

import pytest
import yaml
from snakemake.cli import parse_config
from snakemake.utils import update_config

from rlstudy.core import config as config_module
from rlstudy.core.config import (
    ConfigError,
    check_command_line_size,
    command_line_values,
    load_yaml,
    missing_extras,
    validate_config,
)

from hostile import ROOT, SCHEMA
from launcher import ENV, PYTHON, alias_bomb, launch, one_line_refusal, yte_payload

# ---------------------------------------------------------------- YTE: a config or profile file as code

def test_the_launcher_refuses_a_yte_config_file_before_it_runs(tmp_path):
    marker = tmp_path / "PWN"
    (tmp_path / "more.yaml").write_text(yte_payload(marker))
    result = launch("-n", "--cores", "1", "--configfile", str(tmp_path / "more.yaml"))
    one_line_refusal(result, "more.yaml sets __use_yte__")
    assert not marker.exists()


def test_the_launcher_refuses_a_yte_profile_however_it_is_named(tmp_path):
    """--profile, an abbreviation of it, $SNAKEMAKE_PROFILE: Snakemake's own parsing finds the file."""
    marker = tmp_path / "PWN"
    (tmp_path / "profile").mkdir()
    (tmp_path / "profile" / "config.yaml").write_text(yte_payload(marker, "cores"))
    for args, env in ((["--profile", str(tmp_path / "profile")], ENV), (["--prof", str(tmp_path / "profile")], ENV),
                      ([], {**ENV, "SNAKEMAKE_PROFILE": str(tmp_path / "profile")})):
        one_line_refusal(launch("-n", *args, env=env), "profile", "config.yaml sets __use_yte__")
        assert not marker.exists(), args


def test_a_yte_file_named_in_a_profiles_configfile_list_is_refused(tmp_path):
    marker = tmp_path / "PWN"
    (tmp_path / "profile").mkdir()
    (tmp_path / "evil.json").write_text('{"seed": 7, "a": ' + "[" * 5000 + "]" * 5000 + "}")
    (tmp_path / "evil.yaml").write_text(yte_payload(marker))
    for evil in ("evil.yaml", "evil.json"):
        (tmp_path / "profile" / "config.yaml").write_text(f"configfile:\n  - config.yaml\n  - {tmp_path / evil}\n")
        one_line_refusal(launch("-n", "--cores", "1", "--profile", str(tmp_path / "profile")), evil)
    assert not marker.exists()


def test_every_makefile_target_that_runs_snakemake_runs_the_launcher(tmp_path):
    makefile = (ROOT / "Makefile").read_text()
    assert "SNAKEMAKE := $(BIN)/python -m rlstudy.runtime.launch" in makefile
    recipes = [line for line in makefile.splitlines() if line.startswith("\t")]
    assert not [line for line in recipes if re.search(r"(^|[\s/])snakemake(\s|$)", line)]
    assert sum("$(SNAKEMAKE)" in line for line in recipes) >= 6  # figures study smoke report (2) lint
    # and make itself, as a reviewer runs it: refused, nothing ran
    marker = tmp_path / "PWN"
    (tmp_path / "more.yaml").write_text(yte_payload(marker))
    result = subprocess.run(["make", "-o", ".venv/.installed", f"BIN={Path(PYTHON).parent}", "study",
                             f"SNAKEMAKE_ARGS=-n --configfile {tmp_path / 'more.yaml'}"],
                            cwd=ROOT, env=ENV, capture_output=True, text=True, timeout=120)
    assert result.returncode != 0 and "more.yaml sets __use_yte__" in result.stderr, result.stderr
    assert not marker.exists()


# ---------------------------------------------------------------- hygiene of config files

def test_a_key_given_twice_is_refused_with_both_lines(tmp_path):
    path = tmp_path / "more.yaml"
    path.write_text("seed: 1\ntrajectories:\n  short: 10\n  long: 20\n  short: 30\n")
    with pytest.raises(ConfigError, match=r"more\.yaml, line 5: key 'short' given twice \(first on line 3\); keep one"):
        load_yaml(path, "config file")
    path.write_text("seed: 1\nseed: 2\n")
    with pytest.raises(ConfigError, match=r"line 2: key 'seed' given twice \(first on line 1\)"):
        load_yaml(path, "config file")
    path.write_text("{seed: 1, seed: 2}\n")
    with pytest.raises(ConfigError, match=r"line 1: key 'seed' given twice \(first on line 1\)"):
        load_yaml(path, "config file")


LOADERS = {"libyaml's events": config_module.STRICT_LOADER,
           "PyYAML's Python events": config_module.strict_loader(config_module.PythonEvents)}
HOSTILE_TEXTS = {
    "b: &x [1]\nc: *x\n": r"f\.yaml, line 2: YAML aliases \(\*name\) are not allowed",
    "seed: 1\nseed: 2\n": r"f\.yaml, line 2: key 'seed' given twice \(first on line 1\)",
    "a: " + "[" * 40 + "]" * 40 + "\n": r"f\.yaml, line 1: nested deeper than 32 levels",
    "a: 1\nb: [1, 2\nc: 3\n": r"the config file f\.yaml, line 3: not valid YAML",
    "a: !!python/object/apply:os.system ['true']\n": r"the config file f\.yaml, line 1: not valid YAML",
}


def test_the_strict_loader_reads_its_events_from_libyaml_where_pyyaml_has_it():
    """PyYAML's Python scanner and parser took a fifth of a Snakemake start (config, claims and schemas)."""
    assert yaml.__with_libyaml__, "this venv's PyYAML has no libyaml: the loader falls back to PyYAML's Python"
    assert config_module.LibyamlEvents in config_module.STRICT_LOADER.__mro__


@pytest.mark.parametrize("loader", LOADERS.values(), ids=LOADERS.keys())
def test_both_parsers_give_the_project_files_data_and_the_same_refusals(loader):
    for name in ("config.yaml", "claims.yaml", "workflow/schemas/config.schema.yaml"):
        text = (ROOT / name).read_text()
        assert config_module.parse_yaml(text, name, "file", loader=loader) == yaml.safe_load(text)
    for text, refusal in HOSTILE_TEXTS.items():
        with pytest.raises(ConfigError, match=refusal):
            config_module.parse_yaml(text, "f.yaml", "config file", loader=loader)


def test_a_deeply_nested_file_is_one_line_not_a_recursion_error(tmp_path):
    """25 KB of nested mappings: Snakemake's loader ends in a RecursionError traceback."""
    path = tmp_path / "deep.yaml"
    path.write_text("a: " + "{a: " * 6000 + "1" + "}" * 6000 + "\n")
    start = time.perf_counter()
    with pytest.raises(ConfigError, match=r"deep\.yaml, line 1: nested deeper than 32 levels"):
        load_yaml(path, "config file")
    assert time.perf_counter() - start < 1.0
    one_line_refusal(launch("-n", "--cores", "1", "--configfile", str(path)), "nested deeper than 32 levels")


def test_aliases_in_config_on_the_command_line_are_refused_at_once():
    """204 characters, a million strings: typing and validating them took 82 s (tenfold per level)."""
    bomb = alias_bomb(6)
    assert len(bomb) < 210
    start = time.perf_counter()
    with pytest.raises(ConfigError, match=r"--config xx=\.\.\.: YAML aliases \(\*name\) are not allowed"):
        check_command_line_size(parse_config([bomb]))
    assert time.perf_counter() - start < 0.5
    keys = "0123456789"
    mapping_bomb = "xx={a: &a {" + ",".join(f"{k}: 0" for k in keys) + "}, " + ", ".join(
        f"{n}: &{n} {{" + ",".join(f"{k}: *{p}" for k in keys) + "}" for p, n in zip("abc", "bcd")) + "}"
    with pytest.raises(ConfigError, match="more than 10000 values"):  # Snakemake's merge copied each use
        check_command_line_size(parse_config([mapping_bomb]))
    check_command_line_size(parse_config(["seeds=[0,1]", "sgd={evaluation: {epochs: 3}}"]))


# ---------------------------------------------------------------- --config scalars, optional extras

def config_with(*given):
    config = yaml.safe_load((ROOT / "config.yaml").read_text())
    command_line = parse_config(list(given))  # what `snakemake --config ...` hands the Snakefile
    update_config(config, command_line)
    update_config(config, command_line_values(command_line, config, arguments=given))
    return config


def test_config_scalars_on_the_command_line_are_typed_as_in_a_config_file():
    """`--config tensorboard=true` (README, docs/diagnostics.md) failed: 'true' is not of type 'boolean'."""
    config = config_with("tensorboard=true", "seeds=[0,1]", "summary={converged_below: 5e-1}", "device=cpu",
                         "cbo_sweep={grids: {ess_kick: {kick: [1e-2, 0.1], ess_target: [0.3]}}}")
    assert config["tensorboard"] is True and config["seeds"] == [0, 1] and config["device"] == "cpu"
    assert config["summary"]["converged_below"] == 0.5 and config["cbo_sweep"]["grids"]["ess_kick"]["kick"] == [0.01, 0.1]
    assert config_with("tensorboard=false")["tensorboard"] is False
    assert config_with("tensorboard=yes")["tensorboard"] == "yes"  # YAML 1.2: text, refused by the schema


@pytest.mark.parametrize("path", ["2020", "1e3", "true", "0.5"])
def test_a_path_that_looks_like_a_number_stays_a_path(path):
    """authors_data is a string in the schema: a folder named 2020 is not the number 2020."""
    assert config_with(f"authors_data={path}")["authors_data"] == path


def test_a_true_that_needs_an_optional_extra_is_refused_with_the_install_command(monkeypatch):
    config = config_with("tensorboard=true")
    monkeypatch.setattr(config_module.importlib.util, "find_spec", lambda name: None)
    assert missing_extras(config_with("tensorboard=false")) == []
    with pytest.raises(ConfigError, match=re.escape("config key 'tensorboard': true needs the optional package "
                                                    "'tensorboard'") + ".*" + re.escape("pip install -e '.[tensorboard]'")):
        validate_config(config, SCHEMA, checks=[missing_extras])
    monkeypatch.setattr(config_module.importlib.util, "find_spec", lambda name: object())
    assert missing_extras(config) == []
