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
from rlstudy.core.provenance import PROVENANCE_SUFFIX, SHA256_HEX, read_record
from rlstudy.core.regular_files import read_regular, refuse_unless_small_regular, shown
from rlstudy.core.markdown import code, markers, text

FOLDER = "docs/figures"
MAX_WIDTH = 1000  # pixels: readable in a README column, a few hundred kilobytes at most
MAX_FIGURE_BYTES = 32 << 20  # a run's figure is at most a few MB; a bigger file is not one
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


def _check_against_record(source: Path, data: bytes, record: dict) -> None:
    """The figure is the bytes its record names: a redrawn or truncated figure is not its run's."""
    artefact = record.get("artefact")
    recorded = artefact.get("sha256") if isinstance(artefact, dict) else None
    if not isinstance(recorded, str) or not SHA256_HEX.fullmatch(recorded):
        raise InputError(f"{source}{PROVENANCE_SUFFIX} (a headline figure's record): field 'artefact.sha256' is "
                         f"{str(recorded)[:80]!r}, not a sha256; rebuild it with make figures")
    digest = hashlib.sha256(data).hexdigest()
    if digest != recorded:
        raise InputError(f"{source} (a headline figure) changed or truncated since it was written (sha256 "
                         f"{digest[:12]}..., its provenance record says {recorded[:12]}...); rerun its rule")


def drawn_from(record: dict) -> dict[str, dict[str, str]]:
    """The inputs a figure's record names, as {name: {path, sha256}} (the files it was drawn from)."""
    inputs = record.get("inputs") if isinstance(record.get("inputs"), dict) else {}
    return {str(name): {"path": entry["path"], "sha256": entry["sha256"]} for name, entry in sorted(inputs.items())
            if isinstance(entry, dict) and isinstance(entry.get("path"), str) and isinstance(entry.get("sha256"), str)}


def refuse_odd_targets(folder: Path) -> None:
    """Each file the headlines will replace in folder, where one is there, is a regular file (not a FIFO,
    a device or a link): the pages are written all or none, and what a file held is read first."""
    for headline in HEADLINES:
        for name in (headline.file, f"{headline.file}{PROVENANCE_SUFFIX}"):
            path = folder / name
            try:
                info = os.lstat(path)
            except FileNotFoundError:
                continue
            except OSError as err:
                raise InputError(f"cannot read {shown(path)} (a headline figure): {err.strerror or err}") from err
            refuse_unless_small_regular(path, info, MAX_FIGURE_BYTES, "a headline figure")


def inputs_problems(folder: Path, record: dict) -> list[str]:
    """What the headline figures in folder and the manifest `record` disagree on: each figure's source and
    every input its source was drawn from must be the manifest's artefact, byte for byte (sha256)."""
    problems = []
    artefacts = record["artefacts"]
    for headline in HEADLINES:
        mine = read_record(folder / headline.file, "a headline figure") or {}
        source = mine.get("source") if isinstance(mine.get("source"), dict) else {}
        named = {"source": {"path": source.get("path"), "sha256": source.get("sha256")}, **drawn_from(source)}
        for name, entry in named.items():
            listed = artefacts.get(entry["path"]) if isinstance(entry["path"], str) else None
            if listed is None or listed["sha256"] != entry["sha256"]:
                problems.append(f"{headline.file}: its {name} {shown(str(entry['path']))} is not the manifest's")
    return problems


def render_figures(project: Path, folder: Path, commit: str, block: str, any_results: bool) -> dict[Path, bytes]:
    """Every headline's small PNG and its provenance record, by path in `folder`, from the figures of
    `project`: each source must be of the run of the claims (its commit `commit`, paper scale, seed block
    `block`) unless any_results."""
    refuse_odd_targets(folder)
    written: dict[Path, bytes] = {}
    for headline in HEADLINES:
        source = project / headline.source
        if not os.path.lexists(source):
            raise InputError(f"cannot read the headline figure {headline.source}: no such file; run make figures first")
        data = read_regular(source, MAX_FIGURE_BYTES, "a headline figure")
        record = _record_of(source)
        _check_against_record(source, data, record)
        made = {key: record.get(key) for key in ("git_commit", "scale", "seed_block")}
        wanted = {"git_commit": commit, "scale": "paper", "seed_block": block}
        wrong = [f"{key} {made[key]!r} (the claims' run: {wanted[key]!r})" for key in wanted if made[key] != wanted[key]]
        if wrong and not any_results:
            raise InputError(f"{headline.source}: not of the run the pages publish: " + ", ".join(wrong)
                             + "; rebuild it with make figures (or pass --allow-any-results)")
        small = small_png(data, headline.source)
        provenance = {
            "made_by": "make readme (rlstudy.report.headline_figures)",
            "source": {"path": headline.source, "sha256": hashlib.sha256(data).hexdigest(), **made,
                       "inputs": drawn_from(record)},
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
