"""Write the generated part of the HTML report's front page (results/report/front_page.rst, which
workflow/report/workflow.rst includes): the report's scale, the commit of its verdicts, its seeds and
datasets, and every claim of results/claims.csv with its verdict, its decisive test and links to the
figures behind it (rlstudy.report.front_page)."""

from __future__ import annotations

from pathlib import Path

from rlstudy.claims.loading import load_claims
from rlstudy.core.cli import json_arg, parser, run
from rlstudy.core.errors import InputError
from rlstudy.core.atomic_writes import write_artefact
from rlstudy.core.loaders import load_csv
from rlstudy.core.provenance import provenance, read_record
from rlstudy.report import front_page
from rlstudy.report.verdicts import VERDICTS


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--claims", required=True, help="results/claims.csv")
    p.add_argument("--claims-file", required=True, help="claims.yaml: each claim's tests name its figures")
    p.add_argument("--schema", required=True, help="its JSON schema")
    p.add_argument("--figures", nargs="*", default=[], help="the figures the report shows (their paths)")
    p.add_argument("--scale", required=True, help="the scale in words (rlstudy.core.scale)")
    p.add_argument("--seeds", type=json_arg, required=True,
                   help='JSON: {"master": config seed, "block": config seed_block, "settings": {setting: {task: replicate '
                        'seeds}}}')
    p.add_argument("--datasets", nargs="+", required=True, help="the datasets the runs use (ours, authors)")
    p.add_argument("--out", required=True)
    args = p.parse_args()
    claims = load_csv(args.claims, "the claims' verdicts", columns=("id", "statement", "verdict", "evidence"))
    unknown = sorted(set(claims["verdict"]) - set(VERDICTS))
    if unknown:
        raise InputError(f"{args.claims}: verdicts {unknown} are none of {list(VERDICTS)}; rerun rule claims")
    odd = [str(i)[:80] for i in claims["id"] if not front_page.CLAIM_ID.fullmatch(str(i))]
    if odd:
        raise InputError(f"{args.claims}: claim ids {odd[:3]} are not of the ids claims.yaml allows ([a-z0-9-]+)")
    odd = [path[:80] for path in args.figures if not front_page.FIGURE_PATH.fullmatch(path)]
    if odd:
        raise InputError(f"--figures: paths {odd[:3]} hold characters other than letters, digits and _./-")
    declared = load_claims(Path(args.claims_file), Path(args.schema))["claims"]
    try:
        seeds = front_page.seeds_note(args.seeds["master"], args.seeds["settings"], args.seeds.get("block"))
    except (KeyError, TypeError, AttributeError) as err:
        raise InputError(f"--seeds: expected master and settings ({err})") from err
    commit = (read_record(args.claims, "the claims' verdicts") or {}).get("git_commit") or "unknown (no provenance record)"
    text = front_page.render(claims, declared, args.figures, scale=args.scale, commit=str(commit), seeds=seeds,
                             datasets=front_page.datasets_note(args.datasets))
    record = provenance({"scale": args.scale, "seeds": args.seeds, "datasets": args.datasets}, None,
                        {"claims": args.claims, "claims_file": args.claims_file})
    write_artefact(args.out, text.encode(), record)


if __name__ == "__main__":
    run(main)
