"""d3rlpy's DiscreteBCQ update rate on a buffer written by offline_rl_speed.py (run in d3rlpy's own venv).

    python d3rlpy_bcq_speed.py BUFFER.npz BATCH_SIZE UPDATES

Same setting as rlstudy's BCQ: 256-256 MLPs without a shared encoder, Adam lr 3e-4, threshold 0.3,
logit penalty 1e-2, one CPU thread. Prints one JSON line: sample-and-update and fit() rates.
"""

import json
import sys
import time

import d3rlpy
import numpy as np
import torch


def main() -> None:
    path, batch_size, updates = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    torch.set_num_threads(1)
    data = np.load(path)
    dataset = d3rlpy.dataset.MDPDataset(
        data["observations"].astype(np.float32), data["actions"], data["rewards"], data["terminals"],
        timeouts=data["timeouts"], action_space=d3rlpy.constants.ActionSpace.DISCRETE)

    def create():
        config = d3rlpy.algos.DiscreteBCQConfig(
            batch_size=batch_size, learning_rate=3e-4, action_flexibility=0.3, beta=1e-2, share_encoder=False,
            encoder_factory=d3rlpy.models.VectorEncoderFactory(hidden_units=[256, 256]))
        algo = config.create(device="cpu:0")
        algo.build_with_dataset(dataset)
        return algo

    algo = create()
    algo.update(dataset.sample_transition_batch(batch_size))
    start = time.perf_counter()
    for _ in range(updates):
        algo.update(dataset.sample_transition_batch(batch_size))
    update_rate = updates / (time.perf_counter() - start)

    algo = create()
    start = time.perf_counter()
    algo.fit(dataset, n_steps=updates, n_steps_per_epoch=updates, show_progress=False, save_interval=10 ** 9,
             logger_adapter=d3rlpy.logging.NoopAdapterFactory())
    fit_rate = updates / (time.perf_counter() - start)
    print(json.dumps({"d3rlpy": d3rlpy.__version__, "update_per_s": update_rate, "fit_per_s": fit_rate}))


if __name__ == "__main__":
    main()
