"""The data: our trajectories (trajectories.py) and the authors' published files (authors_files.py
reads them, authors_data.py turns them into our formats)."""
