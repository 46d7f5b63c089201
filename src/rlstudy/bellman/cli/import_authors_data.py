"""Bring the original authors' 1e6-step trajectory of a task (and their control Q*) into the
pipeline's formats, from a download, from downloaded originals, or from the NumPy conversion."""

from __future__ import annotations

import os
from pathlib import Path

from rlstudy.bellman.data import authors_data as ad
from rlstudy.bellman.data import authors_files
from rlstudy.bellman.data.trajectories import FILES, save_trajectory
from rlstudy.bellman.problem.sde import TASKS, Trajectory
from rlstudy.core.cli import integer_from, parser, run
from rlstudy.core.errors import InputError
from rlstudy.core.atomic_writes import save_tensors
from rlstudy.core.provenance import provenance


def originals_folder(source: str, download_dir: Path, names: list[str]) -> Path | None:
    """The folder of original .pt files to read, downloading them first if asked; None when
    the source is the NumPy conversion instead."""
    if source == "download":
        for name in names:
            if not (download_dir / name).is_file():
                ad.download(name, download_dir)
        return download_dir
    folder = Path(source)
    try:
        authors_files.folder_of(folder)
        present = [folder / name for name in names if os.path.lexists(folder / name)]
        for path in present:  # a FIFO or a device named S_1.pt is refused, not passed over for the .npz
            authors_files.checked_path(path)
    except InputError as err:
        raise InputError(f"config 'authors_data': {err}") from err
    return folder if len(present) == len(names) else None


def record(params: dict, inputs: dict[str, Path]) -> dict:
    """provenance(), the inputs' sha256 read as every authors' file is (authors_files), not by a plain open."""
    result = provenance(params, None, {})
    result["inputs"] = {name: {"path": str(path), "sha256": authors_files.sha256(path)}
                        for name, path in sorted(inputs.items())}
    return result


# As config 'trajectories.short': the fewest steps a run can learn from (the schema's minimum).
MIN_STEPS = 3


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--task", choices=TASKS, required=True)
    p.add_argument("--source", required=True, help="'download', or a folder with the originals or the .npz files")
    p.add_argument("--download-dir", default="data/authors_original")
    p.add_argument("--trajectory-out", help="the trajectory folder to write")
    p.config_option("--steps", "trajectories.authors", type=integer_from(0),
                    help="keep the first STEPS steps of the trajectory only (0: all; smoke runs)")
    p.add_argument("--reference-out", help="control only: where to write the authors' Q* state dict")
    args = p.parse_args()
    if not (args.trajectory_out or args.reference_out):
        raise InputError("nothing to do: give --trajectory-out, --reference-out, or both")
    if 0 < args.steps < MIN_STEPS:
        raise InputError(f"--steps {args.steps} (config 'trajectories.authors'): at least {MIN_STEPS} steps "
                         "(a run needs transitions to learn from), or 0 for all")
    if args.reference_out and args.task != "control":
        raise InputError("the authors published a reference Q* for the control task only")
    k = ad.SUFFIX_OF_TASK[args.task]
    names = [f"{part}_{k}.pt" for part in ("S", "A_idx", "R")] if args.trajectory_out else []
    names += ["Q_ctrl_star.pt"] if args.reference_out else []
    folder = originals_folder(args.source, Path(args.download_dir), names)
    params = {"task": args.task, "source": args.source, "steps": args.steps, "repository": ad.REPOSITORY,
              "commit": ad.COMMIT}
    origin = "the original files" if folder is not None else "the NumPy conversion"
    if args.trajectory_out:
        if folder is not None:
            traj = ad.trajectory_from_originals(folder, args.task)
            inputs = {name: folder / name for name in names if name != "Q_ctrl_star.pt"}
        else:
            npz = Path(args.source) / ad.NPZ_OF_TASK[args.task]
            traj = ad.trajectory_from_npz(npz)
            inputs = {npz.name: npz}
        if args.steps > len(traj.states):
            raise InputError(f"--steps {args.steps} (config 'trajectories.authors'): the authors' {args.task} "
                             f"trajectory has {len(traj.states):,} steps; give at most that, or 0 for all")
        if args.steps:
            traj = Trajectory(*(getattr(traj, name)[: args.steps] for name in FILES))
        save_trajectory(args.trajectory_out, traj, record(params, inputs))
        print(f"imported the authors' {args.task} trajectory ({len(traj.states):,} steps) from {origin} "
              f"in {args.source}")
    if args.reference_out:
        if folder is not None:
            state = ad.reference_from_pickled_module(folder / "Q_ctrl_star.pt")
            inputs = {"Q_ctrl_star.pt": folder / "Q_ctrl_star.pt"}
        else:
            npz = Path(args.source) / ad.NPZ_REFERENCE
            state = ad.reference_from_npz(npz)
            inputs = {npz.name: npz}
        save_tensors(args.reference_out, state, record(params, inputs))
        print(f"imported the authors' control Q* from {origin} in {args.source}")


if __name__ == "__main__":
    run(main)
