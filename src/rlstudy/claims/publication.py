"""A protocol's publication: the verdicts a confirmatory run published, as data the next protocol reads.

docs/publications/protocol-<k>.json is written from the published manifest by
`python -m rlstudy.report.cli.write_publication` (never typed): the protocol's number, the commit of the
run whose verdicts it holds, its protocol commit where the manifest names one, and each claim's
verdict. A claim marked `carried: k` in claims.yaml keeps protocol k's verdict: the next protocol does
not test it again (docs/claims.md, 'Carried verdicts'). The file read back is data: a regular file of
bounded size, held to SCHEMA (claim ids of claims.yaml's grammar, verdicts among the three there are);
a violation is one line naming the file and the field.
"""

from __future__ import annotations

from pathlib import Path

from rlstudy.claims.rules import FAILS, HOLDS, INCONCLUSIVE, Carried
from rlstudy.core.config import strict_validator
from rlstudy.core.errors import InputError
from rlstudy.core.regular_files import read_json, shown

FORMAT = 1
# 46 claims make about 2 KB; a file a thousand times that is not a publication of ours.
MAX_PUBLICATION_BYTES = 2 << 20
COMMIT = r"^[0-9a-f]{40}$"
P_VALUE = {"type": "number", "minimum": 0, "maximum": 1}

SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "required": ["format", "protocol", "commit", "protocol_commit", "verdicts", "about"],
    "properties": {
        "format": {"const": FORMAT},
        "about": {"type": "string", "maxLength": 1000},
        "protocol": {"type": "integer", "minimum": 1, "maximum": 1000},
        "commit": {"type": "string", "pattern": COMMIT},
        "protocol_commit": {"anyOf": [{"type": "string", "pattern": COMMIT}, {"type": "null"}]},
        "verdicts": {
            "type": "object", "maxProperties": 10_000, "propertyNames": {"pattern": r"^[a-z0-9-]{1,200}$"},
            "additionalProperties": {
                "type": "object", "additionalProperties": False, "required": ["verdict"],
                "properties": {"verdict": {"enum": [HOLDS, FAILS, INCONCLUSIVE]}, "p": P_VALUE, "reverse_p": P_VALUE}}},
    },
}
_VALIDATOR = strict_validator(SCHEMA)


def publication_problems(record) -> list[str]:
    """Every violation of SCHEMA, one line each naming the field."""
    errors = sorted(_VALIDATOR.iter_errors(record), key=lambda e: [str(p) for p in e.absolute_path])
    return [f"field '{'.'.join(str(p) for p in error.absolute_path) or '(top level)'}': {shown(error.message)[:200]}"
            for error in errors]


def load_publication(path: str | Path) -> dict:
    """The publication at path, checked: one line naming the file and its first bad field otherwise."""
    record = read_json(path, MAX_PUBLICATION_BYTES, "a protocol's publication")
    found = publication_problems(record)
    if found:
        raise InputError(f"{shown(path)}: not a protocol's publication (rlstudy.report.cli.write_publication): "
                         f"{found[0]}")
    return record


def carried_verdicts(claims: list[dict], publication: dict | None, where: str) -> Carried:
    """The verdict each claim marked `carried` keeps from the publication; refused (one line
    naming the claim) where the publication is not the claim's protocol's, lacks the claim, or did not
    decide it."""
    carried = [claim for claim in claims if "carried" in claim]
    if carried and publication is None:
        raise InputError(f"claim {carried[0]['id']!r} is carried from protocol {carried[0]['carried']}, but no "
                         "publication was given (--publication)")
    found = {}
    for claim in carried:
        if claim["carried"] != publication["protocol"]:
            raise InputError(f"claim {claim['id']!r} is carried from protocol {claim['carried']}, but {where} is "
                             f"protocol {publication['protocol']}'s publication")
        published = publication["verdicts"].get(claim["id"])
        if published is None:
            raise InputError(f"claim {claim['id']!r} is carried from protocol {claim['carried']}, but {where} has no "
                             "verdict for it")
        if published["verdict"] not in (HOLDS, FAILS):
            raise InputError(f"claim {claim['id']!r} is carried from protocol {claim['carried']}, but its verdict there "
                             f"is {published['verdict']!r} ({where}): only a claim it decided (holds or fails) is carried")
        found[claim["id"]] = published["verdict"]
    if publication is None:
        return Carried(found)
    return Carried(found, publication["protocol"], publication["commit"])
