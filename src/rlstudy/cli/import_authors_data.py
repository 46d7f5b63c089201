"""Bring the original authors' 1e6-step trajectory of a task (and their control Q*) into the
pipeline's formats, from a download, from downloaded originals, or from the NumPy conversion."""

from __future__ import annotations

from pathlib import Path

from .. import authors_data as ad
from ..datasets import save_trajectory
from ..errors import InputError
from ..io import provenance, save_tensors
from ..residuals import TASKS
from .common import parser, run


def originals_folder(source: str, download_dir: Path, names: list[str]) -> Path | None:
    """The folder of original .pt files to read, downloading them first if asked; None when
    the source is the NumPy conversion instead."""
    if source == "download":
        for name in names:
            if not (download_dir / name).is_file():
                ad.download(name, download_dir)
        return download_dir
    folder = Path(source)
    if not folder.is_dir():
        raise InputError(f"config 'authors_data': {folder} is not a folder (give a folder with the authors' "
                         "original .pt files or their NumPy conversion, or 'download')")
    return folder if all((folder / name).is_file() for name in names) else None


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--task", choices=TASKS, required=True)
    p.add_argument("--source", required=True, help="'download', or a folder with the originals or the .npz files")
    p.add_argument("--download-dir", default="data/authors_original")
    p.add_argument("--out-dir", required=True, help="the trajectory folder to write")
    p.add_argument("--reference-out", help="control only: where to write the authors' Q* state dict")
    args = p.parse_args()
    k = ad.SUFFIX_OF_TASK[args.task]
    names = [f"{part}_{k}.pt" for part in ("S", "A_idx", "R")]
    if args.reference_out:
        names.append("Q_ctrl_star.pt")
    folder = originals_folder(args.source, Path(args.download_dir), names)
    if folder is not None:
        traj = ad.trajectory_from_originals(folder, args.task)
        inputs = {name: folder / name for name in names}
    else:
        npz = Path(args.source) / ad.NPZ_OF_TASK[args.task]
        traj = ad.trajectory_from_npz(npz)
        inputs = {npz.name: npz}
    params = {"task": args.task, "source": args.source, "repository": ad.REPOSITORY, "commit": ad.COMMIT}
    save_trajectory(args.out_dir, traj, provenance(params, None, inputs))
    if args.reference_out:
        if folder is not None:
            state = ad.reference_from_pickled_module(folder / "Q_ctrl_star.pt")
            ref_inputs = {"Q_ctrl_star.pt": folder / "Q_ctrl_star.pt"}
        else:
            npz = Path(args.source) / ad.NPZ_REFERENCE
            state = ad.reference_from_npz(npz)
            ref_inputs = {npz.name: npz}
        save_tensors(args.reference_out, state, provenance(params, None, ref_inputs))
    print(f"imported the authors' {args.task} data ({len(traj.states):,} steps) from "
          f"{'the original files' if folder is not None else 'the NumPy conversion'} in {args.source}")


if __name__ == "__main__":
    run(main)
