"""The rules stay short: a rule gives what is its own (inputs, outputs, log, resources) and names its
step's options, when they take more than a line, by a function of its study's *_common.smk
(`args=<rule>_options`); the rest comes from its template (workflow/rules/templates.smk) and the helpers
(common.smk: options, files_in). The measure is the lines of a rule's block, header included, blank and
comment-only lines not counted; snakemake-workflows' rna-seq-star-deseq2 averages about 14. With the
options written in the rules the rules averaged 18.1 lines; BOUND keeps what they measure now from
growing back."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
RULE = re.compile(r"^(?:rule \w+|use rule \w+ as \w+ with):")
BOUND = 13.1


def rule_lengths(text: str) -> list[int]:
    """The counted lines of every rule of a rules file: from its header to the end of its indented block."""
    lengths: list[int] = []
    inside = False
    for line in text.splitlines():
        if RULE.match(line):
            lengths.append(1)
            inside = True
        elif inside and line[:1] in (" ", "\t"):
            if not line.lstrip().startswith("#"):
                lengths[-1] += 1
        elif line.strip():
            inside = False
    return lengths


def test_rule_lengths_counts_a_rule_block_and_nothing_around_it():
    text = ("# a comment\nrule a:\n    input:\n        # why\n        'x',\n\n    output:\n        'y',\n"
            "\n\nX = 1\n\n\nuse rule a as b with:\n    log:\n        'l',\n")
    assert rule_lengths(text) == [5, 3]


def test_the_rules_average_at_most_the_bound():
    lengths = [n for path in sorted((ROOT / "workflow" / "rules").glob("*.smk")) for n in rule_lengths(path.read_text())]
    assert len(lengths) >= 40  # every rules file was read
    average = sum(lengths) / len(lengths)
    assert average <= BOUND, f"the rules average {average:.1f} lines, over {BOUND}: name the options by a <rule>_options function and use the templates"
