"""What makes a figure readable in the HTML report and on a page (issue 40): not a strip (width over
height at most MAX_ASPECT, as the report shows a figure at its column's width), and no legend over
any axes' data."""

import struct
from pathlib import Path

MAX_ASPECT = 2.5


def png_size(path: Path) -> tuple[int, int]:
    """(width, height) of a PNG, from its IHDR chunk."""
    with open(path, "rb") as f:
        head = f.read(24)
    assert head[:8] == b"\x89PNG\r\n\x1a\n", f"{path}: not a PNG"
    return struct.unpack(">II", head[16:24])


def legends_over_axes(fig) -> list[str]:
    """'legend over axes title' for each legend (the figure's and each axes') whose box meets a
    visible axes' data area."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    legends = [*fig.legends, *(ax.get_legend() for ax in fig.axes if ax.get_legend())]
    found = []
    for legend in legends:
        box = legend.get_window_extent(renderer)
        for ax in fig.axes:
            if ax.get_visible() and box.overlaps(ax.get_window_extent(renderer)):
                found.append(f"legend over axes {ax.get_title()!r}")
    return found
