"""Claims of the source notebooks and of this study, each with a rule computed from the result tables."""
