"""Infrastructure shared by every study: artefacts, config, random streams, errors, progress, CLIs."""
