"""The published run's headline figures, in the repository: a few figures per study, copied by `make
readme` from the run's figures/ into docs/figures/ as small PNGs, each with a provenance record beside it
(its source, the source's sha256, the run's commit, scale and seed block), and shown in the README's
findings and the study pages between generated markers. They come from the same complete run as the
pages' other generated blocks: a figure made by another commit, scale or seed block is refused, and
tests/unit/report/test_headline_figures.py holds the committed copies to the committed manifest.

A headline is one line of HEADLINES: its name, its source in figures/, the pages that show it (by role:
render_readme names each role's page) and what it shows (the image's alternative text: what is drawn,
never a result).
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

from PIL import Image

from rlstudy.core.errors import InputError
from rlstudy.core.provenance import check_against_record, PROVENANCE_SUFFIX, read_record
from rlstudy.core.markdown import code, markers, text

FOLDER = "docs/figures"
MAX_WIDTH = 1000  # pixels: readable in a README column, a few hundred kilobytes at most
README, BELLMAN, AGENTS, OFFLINE = "readme", "bellman", "agents", "offline"  # the pages' roles
START, END = markers("headline-figures")
_LINK = re.compile(r"[A-Za-z0-9_./+=-]+")


@dataclass(frozen=True)
class Headline:
    name: str  # docs/figures/<name>.png
    source: str  # the run's figure, relative to the project
    pages: tuple[str, ...]  # roles
    shows: str

    @property
    def file(self) -> str:
        return f"{self.name}.png"


HEADLINES = (
    Headline("q_control_sgd", "figures/ours/q_control_sgd.png", (README, BELLMAN),
             "Q-control by SGD with the estimators DS, UR and BFF: error against the learned Q* and against the "
             "exact Q over iterations, over seeds"),
    Headline("reference_error", "figures/ours/reference_error.png", (BELLMAN,),
             "the learned Q* against the exact Q of the circle MDP"),
    Headline("budget_control", "figures/ours/budget_control.png", (BELLMAN,),
             "the error budget of Q-control: what each estimator can reach with the data it has"),
    Headline("cbo_sweep", "figures/ours/cbo_sweep.png", (BELLMAN,),
             "the CBO parameter sweep: the final error of each setting over seeds"),
    Headline("mpo_vs_ddpg", "figures/agents/mpo_vs_ddpg_learning_curve.png", (README, AGENTS),
             "MPO and DDPG on Pendulum: the return over training, seed by seed"),
    Headline("dqn_learning_curve", "figures/agents/dqn_learning_curve.png", (AGENTS,),
             "DQN on CartPole: the return over training, seed by seed"),
    Headline("offline_cartpole", "figures/offline_CartPole-v1.png", (README, OFFLINE),
             "offline RL on CartPole: BCQ and offline DQN against the buffer and the behavioural policy"),
)


def small_png(data: bytes, where: str) -> bytes:
    """The PNG at most MAX_WIDTH wide (Lanczos), written without metadata: the same bytes for the same
    source and Pillow."""
    try:
        image = Image.open(io.BytesIO(data))
        image.load()
    except (OSError, ValueError) as err:
        raise InputError(f"{where}: not a readable PNG ({err})") from err
    if image.width > MAX_WIDTH:
        image = image.resize((MAX_WIDTH, max(1, round(image.height * MAX_WIDTH / image.width))),
                             Image.Resampling.LANCZOS)
    buffer = io.BytesIO()
    image.save(buffer, format="PNG", optimize=True)
    return buffer.getvalue()


def _record_of(source: Path) -> dict:
    record = read_record(source, "a headline figure")
    if not isinstance(record, dict):
        raise InputError(f"{source}: no provenance record beside it ({source}{PROVENANCE_SUFFIX}); rebuild it "
                         "with make figures")
    return record


def render_figures(project: Path, folder: Path, commit: str, block: str, any_results: bool) -> dict[Path, bytes]:
    """Every headline's small PNG and its provenance record, by path in `folder`, from the figures of
    `project`: each source must be of the run of the claims (its commit `commit`, paper scale, seed block
    `block`) unless any_results."""
    written: dict[Path, bytes] = {}
    for headline in HEADLINES:
        source = project / headline.source
        try:
            data = source.read_bytes()
        except OSError as err:
            raise InputError(f"cannot read the headline figure {headline.source}: {err.strerror or err}; "
                             "run make figures first") from err
        record = _record_of(source)
        check_against_record(source, "a headline figure")  # a redrawn or truncated figure is not its run's
        made = {key: record.get(key) for key in ("git_commit", "scale", "seed_block")}
        wanted = {"git_commit": commit, "scale": "paper", "seed_block": block}
        wrong = [f"{key} {made[key]!r} (the claims' run: {wanted[key]!r})" for key in wanted if made[key] != wanted[key]]
        if wrong and not any_results:
            raise InputError(f"{headline.source}: not of the run the pages publish: " + ", ".join(wrong)
                             + "; rebuild it with make figures (or pass --allow-any-results)")
        small = small_png(data, headline.source)
        provenance = {
            "made_by": "make readme (rlstudy.report.headline_figures)",
            "source": {"path": headline.source, "sha256": hashlib.sha256(data).hexdigest(), **made},
            "max_width": MAX_WIDTH,
            "artefact": {"path": headline.file, "sha256": hashlib.sha256(small).hexdigest()},
        }
        written[folder / headline.file] = small
        written[folder / f"{headline.file}{PROVENANCE_SUFFIX}"] = (
            json.dumps(provenance, indent=2, sort_keys=True) + "\n").encode()
    return written


def render_block(role: str, page: Path, folder: Path, commit: str, preview: bool = False) -> str:
    """The generated block of the page of `role` (at `page`) showing its headlines from `folder`; a preview
    (--allow-any-results) says that its figures need not be the published run's."""
    made = ("a preview: figures of any run (--allow-any-results), not to commit" if preview
            else f"the published run's figures (commit {text(commit)}, paper scale)")
    lines = [START, f"Generated by `make readme`: {made}, made smaller; full size in `figures/` after `make figures`."]
    shown = [headline for headline in HEADLINES if role in headline.pages]
    images, captions = [], []
    for headline in shown:
        link = Path(os.path.relpath(folder / headline.file, page.parent)).as_posix()
        if not _LINK.fullmatch(link):  # a link is not escaped: a folder name must not end it or add one
            raise InputError(f"{folder}: the figures' folder must be a plain path ([A-Za-z0-9_./+=-]) to link "
                             f"from {page}")
        images.append(f"![{text(headline.shows)}]({link})")
        captions.append(f"*{text(headline.shows[:1].upper() + headline.shows[1:])}* (from {code(headline.source)})")
    if role == README:  # the front door stays short: the figures side by side, their captions in one line
        lines += ["", " ".join(images), "", "; ".join(captions) + "."]
    else:
        for image, caption in zip(images, captions):
            lines += ["", image, "", caption + "."]
    return "\n".join([*lines, END])


def roles() -> tuple[str, ...]:
    """Every role of page that shows a headline, each once, in HEADLINES' order."""
    return tuple(dict.fromkeys(role for headline in HEADLINES for role in headline.pages))
