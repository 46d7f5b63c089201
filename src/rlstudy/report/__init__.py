"""The pages the results are published in: the README's verdicts and every study's generated tables (the floor above the studies: it knows them all)."""
