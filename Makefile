# Two commands on a fresh machine with Python 3.11: `make figures` and `make test`.
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# More Snakemake options for figures, report and readme, e.g. the published run with the authors' data:
#   make readme SNAKEMAKE_ARGS="--config authors_data=../shared/data/cbo_rl_original"
SNAKEMAKE_ARGS ?=
# The long runs schedule with workflow/profiles/long (a minute's rate-limit timespan: it says why).
LONG_RUN := --profile workflow/profiles/long

.PHONY: figures study smoke report readme test test-fast lint clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	# torch first and pinned: an unpinned resolve would pull a multi-GB CUDA build.
	$(BIN)/pip install --quiet torch==2.13.0
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

figures: $(STAMP)  ## the whole study at the shipped (paper) scale
	$(BIN)/snakemake --cores all $(LONG_RUN) $(SNAKEMAKE_ARGS)

study: $(STAMP)  ## the CBO/BFF study alone at paper scale (snakemake study: no sweep, agents, offline, claims)
	$(BIN)/snakemake --cores all $(LONG_RUN) study $(SNAKEMAKE_ARGS)

smoke: $(STAMP)  ## the same workflow at smoke scale
	$(BIN)/snakemake --cores all --profile workflow/profiles/smoke

report: $(STAMP)  ## one self-contained HTML page (report.html) of every figure and table; opens offline
	$(BIN)/snakemake --cores all $(LONG_RUN) $(SNAKEMAKE_ARGS)
	$(BIN)/snakemake --report report.html $(SNAKEMAKE_ARGS)

# Not a file: the first screen of report.html in headless Chromium (Debian: apt-get install -y chromium).
.PHONY: report-check
report-check:  ## check report.html's first screen names its scale and shows the claims table; report-screen.png
	$(BIN)/python -m rlstudy.report.cli.check_report report.html --screenshot report-screen.png

readme: report  ## the verdicts into README.md and docs/claims.md, the results tables into docs/bellman.md, agents.md, offline.md (no result is typed by hand)
	$(BIN)/python -m rlstudy.report.cli.render_readme

test: $(STAMP)  ## every test: tests/unit and tests/workflow (smoke builds of the workflow); what CI runs (the 25 slowest listed: issue 23's budget)
	$(BIN)/python -m pytest -q --durations=25

test-fast: $(STAMP)  ## the unit tests alone (tests/unit): the loop to run while editing
	$(BIN)/python -m pytest -q tests/unit

lint: $(STAMP)
	$(BIN)/snakemake --lint

clean:  ## delete generated artefacts (not the venv)
	rm -rf data/* results/* figures/* logs .snakemake report.html report-screen.png
	touch data/.gitkeep results/.gitkeep figures/.gitkeep
