"""Shared look and a deterministic save for every figure."""

from __future__ import annotations

import io
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import seaborn as sns  # noqa: E402

from rlstudy.core.cli import integer_from  # noqa: E402
from rlstudy.core.atomic_writes import write_artefact
from rlstudy.core.loaders import inputs_read
from rlstudy.core.provenance import provenance  # noqa: E402


def palette(names) -> dict:
    """A colour per name, in order, from the colour-blind palette (a study passes its registry, so a
    new entry gets a colour of its own and the others keep theirs)."""
    names = list(names)
    return dict(zip(names, sns.color_palette("colorblind", len(names))))


DATASET_NAMES = {"ours": "our trajectory", "authors": "the authors' trajectory"}  # for titles


def setup() -> None:
    """The one look of every figure: call it before drawing (tests/unit/test_figure_layout.py checks that
    the figures' axes have it)."""
    sns.set_theme(context="paper", style="whitegrid", font_scale=1.1)


def legend_below(fig: plt.Figure, handles, labels, ncol: int | None = None, **options):
    """The figure's legend under its axes, outside every data area: its top edge on the figure's bottom
    edge, below the x labels once the layout is tight (save() keeps what lies outside with
    bbox_inches="tight"). Call it after fig.tight_layout(). ncol: up to three columns by default."""
    ncol = ncol or max(1, min(len(labels), 3))
    return fig.legend(handles, labels, loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=ncol,
                      fontsize=options.pop("fontsize", "small"), **options)


def legend_under(ax: plt.Axes, handles=None, labels=None, **options):
    """One axes' legend under it, outside its data: its top edge below the axes' tick labels and x label.
    Call it after fig.tight_layout(), for an axes with no other axes below it."""
    fig = ax.figure
    box = ax.get_tightbbox(fig.canvas.get_renderer()).transformed(fig.transFigure.inverted())
    position = ax.get_position()
    if handles is None:
        handles, labels = ax.get_legend_handles_labels()
    return ax.legend(handles, labels, loc="upper center", bbox_to_anchor=(position.x0 + position.width / 2, box.y0),
                     bbox_transform=fig.transFigure, fontsize=options.pop("fontsize", "small"), **options)


def figure_record(**params) -> dict:
    """A figure's provenance: its command line, its parameters, and every file the process has read
    (core.loaders records them as it loads), each with its sha256."""
    return provenance(params, None, inputs_read())


def add_output_options(p) -> None:
    """A figure step's outputs, as save() writes them: --out-prefix, --formats, --dpi."""
    p.add_argument("--out-prefix", required=True, help="written as <prefix>.<format> for each of --formats")
    add_format_options(p)


def add_format_options(p) -> None:
    """--formats and --dpi, from config `figures` (their one home) under --from-config."""
    p.config_option("--formats", "figures.formats", nargs="+", help="the files' formats")
    p.config_option("--dpi", "figures.dpi", type=integer_from(1), help="the raster formats' resolution")


def save(fig: plt.Figure, prefix: str | Path, formats=("png", "pdf"), dpi: int = 150) -> list[Path]:
    """Write prefix.<fmt> for each format, atomically and without timestamps in the files, each with
    its provenance beside it."""
    record = figure_record(formats=list(formats), dpi=dpi)
    written = []
    for fmt in formats:
        buffer = io.BytesIO()
        metadata = {"CreationDate": None} if fmt == "pdf" else {"Software": None} if fmt == "png" else {}
        fig.savefig(buffer, format=fmt, dpi=dpi, bbox_inches="tight", metadata=metadata)
        path = Path(f"{prefix}.{fmt}")
        write_artefact(path, buffer.getvalue(), record)
        written.append(path)
    plt.close(fig)
    return written
