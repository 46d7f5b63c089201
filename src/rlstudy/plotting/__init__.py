"""What the figures of every study share: the style, and learning curves with their bands."""
