"""The basics notebook's agents: Q-table and linear Q on a discretised MountainCar, DQN, DDPG."""
