"""Arguments every stage of the offline chain takes: the run (environment, seeds, parameters) and device."""

from __future__ import annotations

import argparse

import torch

from rlstudy.core.cli import add_device_argument, build, integer_from, json_arg, setup_torch
from rlstudy.offline.double_dqn import LearnerParams
from rlstudy.offline.envs import AtariPreprocessing
from rlstudy.offline.runs import Run


def add_run_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--env", required=True, help="gymnasium id with a discrete action space (Atari: *NoFrameskip-v4)")
    p.add_argument("--run-seed", type=integer_from(0), required=True, help="the run's seed")
    p.add_argument("--seed", type=integer_from(0), required=True, help="the master seed")
    p.add_argument("--params", type=json_arg, required=True, help="JSON of offline.dqn.LearnerParams")
    p.add_argument("--atari", type=json_arg, required=True, help="JSON of offline.envs.AtariPreprocessing")
    p.add_argument("--evaluation-episodes", type=integer_from(1), required=True,
                   help="episodes of a stage's last evaluation (config 'offline.evaluation_episodes')")
    p.add_argument("--curve-episodes", type=integer_from(1), required=True,
                   help="episodes of each evaluation before it (config 'offline.curve_episodes')")
    add_device_argument(p)


def run_of(args: argparse.Namespace) -> tuple[Run, torch.device]:
    device = setup_torch(args.device)
    params = build(LearnerParams, args.params, "config 'offline.atari' or 'offline.regular'")
    atari = build(AtariPreprocessing, args.atari, "config 'offline.atari_preprocessing'")
    return Run(args.env, args.run_seed, args.seed, params, atari, args.evaluation_episodes,
               args.curve_episodes), device
