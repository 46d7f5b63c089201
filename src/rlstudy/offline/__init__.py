"""Offline RL after Fujimoto et al.: a behavioural DQN, its noisy buffer, discrete BCQ and offline DQN."""
