"""Learners (PPO, MCQ, SARSA, Q-learning, DQN) over one encoding, one network and one runner."""
