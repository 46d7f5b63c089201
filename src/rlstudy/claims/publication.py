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

from rlstudy.claims.verdicts import FAILS, HOLDS, INCONCLUSIVE, Carried
from rlstudy.core.config import strict_validator
from rlstudy.core.errors import InputError
from rlstudy.core.regular_files import read_json, shown

FORMAT = 1
PUBLICATIONS = "docs/publications"  # protocol-<k>.json each, relative to the project
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


def carried_verdicts(claims: list[dict], publications: dict[int, dict], where: dict[int, str]) -> dict[str, Carried]:
    """claim id -> the verdict each claim marked `carried: k` keeps from protocol k's publication
    (`publications`: protocol -> publication, `where`: protocol -> its file); refused (one line naming the
    claim) where that publication was not given, lacks the claim, or did not decide it."""
    found = {}
    for claim in claims:
        if "carried" not in claim:
            continue
        protocol = claim["carried"]
        publication = publications.get(protocol)
        if publication is None:
            raise InputError(f"claim {claim['id']!r} is carried from protocol {protocol}, but protocol {protocol}'s "
                             f"publication was not given (--publication; given: {sorted(publications) or 'none'})")
        published = publication["verdicts"].get(claim["id"])
        if published is None:
            raise InputError(f"claim {claim['id']!r} is carried from protocol {protocol}, but {shown(where[protocol])} "
                             "has no verdict for it")
        if published["verdict"] not in (HOLDS, FAILS):
            raise InputError(f"claim {claim['id']!r} is carried from protocol {protocol}, but its verdict there is "
                             f"{published['verdict']!r} ({shown(where[protocol])}): only a claim it decided (holds or "
                             "fails) is carried")
        found[claim["id"]] = Carried(published["verdict"], protocol, publication["commit"])
    return found


def publications_in(root: Path) -> list[str]:
    """The publications a checkout holds, by path relative to it (protocol-<k>.json under PUBLICATIONS)."""
    return sorted(path.relative_to(root).as_posix() for path in (root / PUBLICATIONS).glob("protocol-*.json"))


def load_publications(paths: list[str]) -> tuple[dict[int, dict], dict[int, str]]:
    """The publications at paths by protocol, and their paths by protocol; two of one protocol are refused."""
    publications, where = {}, {}
    for path in paths:
        publication = load_publication(path)
        protocol = publication["protocol"]
        if protocol in publications:
            raise InputError(f"{shown(path)}: a second publication of protocol {protocol} (the first: "
                             f"{shown(where[protocol])})")
        publications[protocol], where[protocol] = publication, path
    return publications, where
