"""The agents' steps: train, plot and summarise (python -m rlstudy.agents.cli.<step>)."""
