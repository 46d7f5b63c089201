"""The CBO/BFF study's steps, one module per workflow rule (python -m rlstudy.bellman.cli.<step>)."""
