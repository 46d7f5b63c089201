"""How the project's commands start: rlstudy.runtime.launch, the entry to Snakemake that `make` uses."""
