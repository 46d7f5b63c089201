"""The targets checked at the Snakefile's end, and the console's shortened job info (issue 40, item 5)."""

import logging

from snakemake_interface_logger_plugins.common import LogEvent

from rlstudy.runtime.console import BriefJobInfo, brief_console, brief_files, brief_reason
from rlstudy.runtime.targets import nearest, requested_targets, target_problems

KNOWN = ["figures/ours/q_control_cbo.png", "figures/ours/q_control_cbo.pdf", "figures/ours/q_control_sgd.png",
         "results/summary.csv", *[f"results/runs/ours/control/sgd/DS/seed{s}/errors.csv" for s in (0, 1)]]


def problems(*targets, produced=lambda path: path.startswith("results/runs/"), exists=lambda path: False):
    return target_problems(targets, KNOWN, ["all", "study"], produced, exists)


def test_a_misspelt_target_gets_the_nearest_known_ones_of_its_kind():
    assert nearest("q_contol_cbo.png", KNOWN) == ["figures/ours/q_control_cbo.png", "figures/ours/q_control_sgd.png"]
    [problem] = problems("figures/ours/q_contol_cbo.png")
    assert problem == ("no rule makes figures/ours/q_contol_cbo.png (a misspelt target?); the nearest known: "
                       "figures/ours/q_control_cbo.png, figures/ours/q_control_sgd.png")
    assert problems("stuyd") == ["no rule makes stuyd (a misspelt target?); the nearest known: study"]


def test_rules_existing_files_and_known_targets_pass():
    assert problems("all", "results/runs/ours/control/sgd/DS/seed1/errors.csv") == []
    assert problems("notes.txt", exists=lambda path: True) == []  # Snakemake has nothing to do for it


def test_a_seed_the_config_does_not_list_is_refused():
    [problem] = problems("results/runs/ours/control/sgd/DS/seed7/errors.csv")
    assert problem == ("results/runs/ours/control/sgd/DS/seed7/errors.csv: seed 7 is not a seed the config lists "
                       "for these runs (0, 1); add it to the config's seeds of these runs to build it (make -s "
                       "first-seed prints the first seed of the run's block)")
    # a file of no known family of runs is Snakemake's to judge
    assert problems("results/runs/ours/control/sgd/UR/seed7/q.pt") == []


def test_the_targets_come_from_snakemakes_command_line_only():
    argv = ["/venv/bin/snakemake", "--cores", "2", "--profile", "workflow/profiles/smoke", "-n", "figures/x.png", "all"]
    assert requested_targets(argv) == ["figures/x.png", "all"]
    assert requested_targets(["/venv/bin/snakemake", "x", "--target-jobs", "run_method:seed=0"]) == []
    assert requested_targets(["pytest", "x"]) == []


def test_the_console_shortens_inputs_and_reasons_and_the_log_file_keeps_them():
    files = [f"data/d{i}.npy" for i in range(5)] + [f"src/rlstudy/m{i}.py" for i in range(60)]
    assert brief_files(files) == "data/d0.npy, data/d1.npy, data/d2.npy and 2 more; 60 source files (src/)"
    assert brief_reason("Missing output files: a, b, c; Code has changed since last execution") == (
        "Missing output files: a, b and 1 more; Code has changed since last execution")

    class Echo(logging.Formatter):
        def format(self, record):
            return f"{record.input} | {record.reason}"

    record = logging.LogRecord("snakemake", logging.INFO, "", 0, "", None, None)
    record.__dict__.update(event=LogEvent.JOB_INFO, input=files, reason="Missing output files: a, b, c")
    console, log_file = logging.Handler(), logging.Handler()
    console.name = "DefaultStreamHandler"
    console.setFormatter(Echo())
    log_file.setFormatter(Echo())
    logger = logging.getLogger("test-brief-console")
    logger.addHandler(console)
    assert not brief_console(logger, verbose=True) and isinstance(console.formatter, Echo)
    assert brief_console(logger, verbose=False) and isinstance(console.formatter, BriefJobInfo)
    logger.removeHandler(console)
    assert console.format(record) == ("['data/d0.npy, data/d1.npy, data/d2.npy and 2 more; 60 source files (src/)'] | "
                                      "Missing output files: a, b and 1 more")
    assert log_file.format(record) == f"{files} | Missing output files: a, b, c"  # the record itself untouched
