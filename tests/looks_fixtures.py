"""A small hand-made group-sequential design's claims, lists and seeds, shared by the looks' tests
(tests/unit/claims/test_looks.py, tests/unit/report/test_looks_page.py): a paired claim on list x, a share
claim on list y, both read from one table `t`."""

DEFAULTS = {"min_n": 2, "min_share": 1.0, "level": 0.05, "planning": {}}
LISTS = {"x.seeds": [3, 6], "y.seeds": [2, 4]}
PLAN = {"x.seeds": list(range(100, 106)), "y.seeds": list(range(100, 104))}
CLAIMS = {"defaults": DEFAULTS, "claims": [
    {"id": "a-below-b", "tests": [{"kind": "ranking", "table": "t", "metric": "v", "lower": {"g": "a"},
                                   "higher": {"g": "b"}, "paired": True}]},
    {"id": "c-passes", "tests": [{"kind": "share", "table": "t", "metric": "v", "where": {"g": "c"}, "at_most": 0,
                                  "min_share": 0.5}]}]}
