"""The results read back: the error curves of the runs (error_curves.py) and the generated blocks of
docs/bellman.md (bellman_page.py)."""
