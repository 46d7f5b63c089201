"""Offline RL's three stages as three entry points, and its figure and summary (python -m rlstudy.offline.cli.<step>)."""
