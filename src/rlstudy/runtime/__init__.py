"""How the project's commands start and talk to Snakemake: launch (the entry `make` uses: config files
read as data), scale (a checkout keeps its scale), console (the job info a person reads), targets
(a misspelt target or an unlisted seed refused before planning)."""
