"""rlstudy: the mathematics and command-line steps of a reproducible RL results pipeline.

One subpackage per study, each with its library, its figures and its steps (`cli/`):

    bellman   the CBO/BFF study: Bellman-residual minimisation on the circle MDP (SGD and CBO
              with DS, UR and BFF), its datasets, Q*, parameter sweep and the authors' data
    agents    the basics notebook's agents (Q-table, linear Q, DQN, DDPG) and MPO
    offline   offline RL: a behavioural DQN, its noisy buffer, discrete BCQ and offline DQN

and the infrastructure they share:

    core      artefacts and provenance (io), config validation, random streams, errors,
              progress bars, what every step's command line shares (cli), a step's sources
    plotting  the figures' style and the learning-curve helpers

and, above the studies, how the workflow starts and runs them:

    runtime   make's entry to Snakemake, the warm-start server (which imports each study's steps and
              runs its warm-up hook, `<study>/warmup.py`, where it has one), Snakemake's exit; it
              imports the studies only that way, found by their files

Core imports no study and nothing of runtime; a study imports nothing of runtime
(tests/unit/test_layers.py).
"""

from pathlib import Path

from rlstudy.core.process import before_imports

before_imports()  # the cycle collector off while `python -m rlstudy...` imports its step (core/process.py)

# The package runs from its checkout (editable install, or src/ on PYTHONPATH): the workflow's config
# schema lies beside src/. The one place in the package that names it (core/config.py's schema_file()
# reads it here, so core holds no path into workflow/).
CONFIG_SCHEMA = Path(__file__).resolve().parents[2] / "workflow" / "schemas" / "config.schema.yaml"
