"""Every rule's params tracked by Snakemake, so that a changed config value reruns the jobs it reaches.

Snakemake reruns a job whose params changed, but compares only the params that are values or functions
of the wildcards: a params function that takes `input`, `output`, `threads` or `resources` is "derived"
and never compared (snakemake/rules.py, _is_deriving_function). A step's options name its files, so
they are such a function, and a changed learning rate or seed list left the old outputs standing.

`track_derived_params` gives each derived params function of every rule a tracked twin, `<name>_values`:
the same function called with stand-ins for its files, each file named by its role (`<output[0]>`,
`<input.table>`), so that the twin holds what the job computes with (config values, wildcards) and
none of its paths, which Snakemake tracks on its own. The twin is a function of the wildcards alone, so
Snakemake records it and reruns the job when it changes. The Snakefile calls it once every rule is
defined; tests/workflow/test_rerun_on_edit.py checks that a config value reruns its jobs.
"""

from __future__ import annotations

import inspect
from typing import Callable, Iterable

DERIVING = ("input", "output", "threads", "resources")  # the names that make a params function derived
TWIN_SUFFIX = "_values"


class FileName(str):
    """A stand-in file name: a string (a step's options format it, Path() takes it) that an index or a
    name extends (`<input.code>[0]`) and that, iterated, is a list of itself (a named list of files)."""

    def __iter__(self):
        return iter((self,))

    def __getitem__(self, key):
        return FileName(f"{self}[{key}]")

    def __getattr__(self, name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        return FileName(f"{self}.{name}")


class Files:
    """A stand-in for a job's input, output or resources: every item a FileName of its role; iterated, none."""

    def __init__(self, role: str):
        self._role = role

    def __getattr__(self, name: str) -> FileName:
        if name.startswith("__"):
            raise AttributeError(name)
        return FileName(f"<{self._role}.{name}>")

    def __getitem__(self, key) -> FileName:
        return FileName(f"<{self._role}[{key}]>")

    def __iter__(self):
        return iter(())

    def __len__(self) -> int:
        return 0

    def __str__(self) -> str:
        return f"<{self._role}>"

    __repr__ = __str__  # Snakemake records a param by its repr: never an address, which differs per run


STAND_INS = {"input": Files("input"), "output": Files("output"), "threads": FileName("<threads>"),
             "resources": Files("resources")}


def deriving(function) -> list[str]:
    """The names of Snakemake's aux arguments a params function takes (none: Snakemake tracks it)."""
    if not callable(function):
        return []
    return [name for name in inspect.signature(function).parameters if name in DERIVING]


def tracked_twin(function: Callable, names: list[str]) -> Callable:
    """`function` of the wildcards alone, its files' arguments given as stand-ins (the module's docstring)."""

    def values(wildcards):
        return function(wildcards, **{name: STAND_INS[name] for name in names})

    return values


def track_derived_params(rules: Iterable) -> int:
    """Add the tracked twin of every derived params function of these Snakemake rules; how many."""
    added = 0
    for rule in rules:
        params = dict(rule.params.items())
        for name, function in params.items():
            names = deriving(function)
            if names and not name.endswith(TWIN_SUFFIX) and name + TWIN_SUFFIX not in params:
                rule.set_params(**{name + TWIN_SUFFIX: tracked_twin(function, names)})
                added += 1
    return added
