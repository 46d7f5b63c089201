"""The project's entry to Snakemake: `python -m rlstudy.runtime.launch <snakemake arguments>`.

Snakemake reads the config files (--configfile, a profile's `configfile:` list, the Snakefile's
config.yaml) and the profile files with yte, which runs a file's `?expr` values as Python when the
file sets `__use_yte__: true`, and it does so before the Snakefile's checks run. Snakemake 9 has no
setting that turns this off (snakemake/common/configfile.py and snakemake/profiles.py call
yte.process_yaml whatever the options), so a config or profile file given to plain `snakemake` is
code, like the Snakefile (docs/reliability.md, "Configuration and scales").

This runs Snakemake's own command line in this process with its readers wrapped: every config or
profile file it reads, however it found it (an option, an abbreviation of one, $SNAKEMAKE_PROFILE,
a default profile), is first read with the project's strict loader (core.config: plain data, no
`__use_yte__`, no aliases, no key given twice, nesting bounded), and `--config`'s values are
refused if they hold YAML aliases. A refusal is one line on stderr and exit status 2, before
anything of the file ran. Every Makefile target that runs Snakemake runs it through here.

Where the confirmatory block runs a group-sequential design, the workflow makes one look per run
(core/looks.py): after a run that made a look saying a seed list continues, this starts itself again
(`again`), so that `make figures` runs the design to its end; a run that made no look (no design, a dry
run, a design already finished) ends it.

Run as `python -m`, this process imports the package, and so Snakemake, with the cycle collector off, as
a step does (core/process.py); the Snakefile's onstart turns it on as the jobs start
(runtime/snakemake_collector.py).
"""

from __future__ import annotations

import io
import os
import sys
from pathlib import Path

from rlstudy.core.config import MAX_YAML_BYTES, ConfigError, load_yaml, parse_yaml
from rlstudy.core.looks import continues

PROGRAM = "rlstudy.runtime.launch"


def refuse(message: str):
    """One line and exit status 2, through every `except Exception` of Snakemake's (SystemExit is not one)."""
    print(f"{PROGRAM}: {message}", file=sys.stderr)
    raise SystemExit(2)


def check_text(text, name: str, what: str) -> str:
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError:
            refuse(f"the {what} {name} is not UTF-8 text")
    if len(text) > MAX_YAML_BYTES:
        refuse(f"the {what} {name} is larger than {MAX_YAML_BYTES >> 20} MiB; not a file of ours")
    try:
        parse_yaml(text, name, what)
    except ConfigError as err:
        refuse(str(err))
    return text


def checked_process_yaml(original):
    """yte.process_yaml as profiles and YAML config files are read (require_use_yte: a file that is a
    template only if it says so), reading only what the strict loader accepts. A rule's own template
    (`template_engine: "yte"`, none in this project) is code, as the Snakefile is, and passes."""
    def process_yaml(file_or_str, *args, **kwargs):
        if not kwargs.get("require_use_yte", False):
            return original(file_or_str, *args, **kwargs)
        if hasattr(file_or_str, "read"):
            name = getattr(file_or_str, "name", "(a stream)")
            text = check_text(file_or_str.read(), str(name), "Snakemake profile or config file")
            file_or_str = io.StringIO(text)
        else:
            check_text(file_or_str, "(a YAML text)", "Snakemake profile or config file")
        return original(file_or_str, *args, **kwargs)
    return process_yaml


def checked_load_configfile(original):
    """snakemake.common.configfile._load_configfile: JSON config files too (json.load recurses)."""
    def load(configpath_or_obj, filetype="Config"):
        if filetype == "Config" and isinstance(configpath_or_obj, (str, Path)):
            try:
                load_yaml(configpath_or_obj, "config file")
            except ConfigError as err:
                refuse(str(err))
        return original(configpath_or_obj, filetype)
    return load


def checked_parse_config(original):
    """snakemake.cli.parse_config: a `--config` value with YAML aliases is refused before it is read
    (Snakemake's merge copies a mapping alias at every use: a few lines, millions of values)."""
    def parse(entries):
        for entry in entries or ():
            key, _, value = entry.partition("=")
            try:
                parse_yaml(value, f"--config {key}", "--config value")
            except ConfigError as err:
                refuse(str(err))
            except Exception:  # not YAML: Snakemake keeps it a string
                pass
        return original(entries)
    return parse


def install_checks() -> None:
    import snakemake.cli
    import snakemake.common.configfile
    import yte

    yte.process_yaml = checked_process_yaml(yte.process_yaml)
    snakemake.common.configfile._load_configfile = checked_load_configfile(snakemake.common.configfile._load_configfile)
    snakemake.cli.parse_config = checked_parse_config(snakemake.cli.parse_config)


def again(made: int) -> bool:
    """Whether a run that found `made` looks made a new one that says a seed list continues (core/looks.py)."""
    try:
        now, more = continues()
    except ConfigError as err:
        refuse(str(err))
    if now > made and more:
        print(f"{PROGRAM}: look {now} made and a seed list continues: running look {now + 1}", file=sys.stderr)
    return now > made and more


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else list(argv)
    install_checks()
    from snakemake.cli import main as snakemake_main

    try:
        made, _ = continues()
    except ConfigError as err:
        refuse(str(err))
    # As the `snakemake` command beside this interpreter: Snakemake records its command line.
    sys.argv = [str(Path(sys.executable).with_name("snakemake")), *argv]
    try:
        snakemake_main(argv)
    except SystemExit as finished:
        if finished.code not in (0, None) or not again(made):
            raise
    else:
        if not again(made):
            return
    # The next look in a fresh process: Snakemake reads the looks made when it parses the Snakefile.
    os.execv(sys.executable, [sys.executable, "-m", PROGRAM, *argv])


if __name__ == "__main__":
    main()
