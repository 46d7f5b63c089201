"""How the project's commands start and talk to Snakemake: launch (the entry `make` uses: config files
read as data), scale (a checkout keeps its scale), console (the job info a person reads), targets
(a misspelt target or an unlisted seed refused before planning), warmstart (jobs forked from one
process that imported every study's steps and ran its warm-up hook, `rlstudy/<study>/warmup.py`,
where it has one), snakemake_scheduler (a local run's rounds when its jobs end, and no timer
left at the exit).

Above the studies: it imports core, and a study only through its steps and its warm-up hook, found
by their files; core and the studies import nothing of it (tests/unit/test_layers.py). Keep this
module empty of imports: every job's command (`python -m rlstudy.runtime.warmstart ...`) loads it."""
