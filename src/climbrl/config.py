"""Typed, validated training configuration (the ``train`` section of ``params.yaml``).

Every field is checked before any work starts; a bad value raises :class:`ConfigError` naming
the field. Defaults are the study's setup (100 epochs x 200 self-play games, evaluation every
5 epochs with 400 games against three copies of each of random, greedy and heuristic) and each
learner's usual hyperparameters; :func:`train_config` fills the learner-specific and
game-specific defaults (:data:`GAME_DEFAULTS`: each game's own baselines and rule agents).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from climbrl.games.registry import DEFAULT_PRESETS, game_presets, num_players

ALGOS = ("ppo", "mcq", "sarsa", "qlearning", "dqn")
CURRICULA = ("self_play", "checkpoint_self_play", "fixed_opponents", "opponent_pool")
SYNC_UNITS = ("updates", "decisions")
DEVICES = ("cpu", "cuda", "auto")


class ConfigError(ValueError):
    """A bad configuration value; the message names the field."""


@dataclass(frozen=True)
class TrainConfig:
    algo: str = "ppo"
    """Learner: ppo, mcq, sarsa, qlearning or dqn."""
    game: str = "big2"
    """The game: big2 or doudizhu."""
    rules: str = ""
    """The game's rules preset ("" is the game's default: Big 2 ``paper``, Dou Dizhu ``standard``)."""
    seed: int = 0
    """Seed of every random choice (deals, play, initialization, minibatches)."""
    epochs: int = 100
    games_per_epoch: int = 200
    eval_every: int = 5
    """Evaluate every this many epochs (0: never)."""
    eval_games: int = 400
    """Games per evaluation match (a multiple of the number of players)."""
    eval_opponents: tuple[str, ...] = ("random", "greedy", "heuristic")
    eval_seed: int = 12345
    """Seed of the evaluation deals (fixed across the run, different from training deals)."""
    eval_workers: int = 1
    keep_policy_every: int = 25
    """Keep a copy of the policy every this many epochs in ``snapshots/`` (0: none), so that the
    interpretability window can follow an agent across training."""
    hidden: int = 512
    lr: float = 3e-4
    gamma: float = 0.99
    max_grad_norm: float = 0.5
    minibatch_decisions: int = 1024
    """Decisions per minibatch for the on-policy learners (ppo, mcq, sarsa)."""
    update_epochs: int = 1
    """Passes over each batch (PPO: one optimization epoch per batch by default)."""
    # PPO
    clip: float = 0.2
    vf_coef: float = 0.5
    ent_coef: float = 0.01
    gae_lambda: float = 0.95
    # epsilon-greedy learners
    epsilon: float = 0.1
    """Exploration of mcq, sarsa and qlearning (constant)."""
    epsilon_start: float = 1.0
    epsilon_end: float = 0.05
    epsilon_decay_steps: int = 200_000
    """dqn: epsilon falls linearly from start to end over this many decisions."""
    # replay learners (qlearning, dqn)
    replay_capacity: int = 100_000
    batch_size: int = 256
    updates_per_epoch: int = 50
    target_sync: int = 1000
    """Hard target sync every this many units of ``target_sync_unit`` (when tau is 0)."""
    target_sync_unit: str = "updates"
    """What ``target_sync`` counts: ``updates`` (gradient updates) or ``decisions`` (the learner's
    environment decisions added to replay; see :mod:`climbrl.learn.replay_learner`). The field's
    default is the behaviour from before the switch existed (a checkpoint without the key was
    trained that way); the study's learners set theirs in ``ALGO_DEFAULTS`` and ``params.yaml``."""
    tau: float = 0.0
    """Soft target update rate per gradient update (0: hard syncs)."""
    double: bool = False
    dueling: bool = False
    prioritized: bool = False
    priority_alpha: float = 0.6
    priority_beta: float = 0.4
    # curriculum
    curriculum: str = "self_play"
    snapshot_every: int = 1000
    """Opponent pool / checkpoint self-play: a snapshot of the learner every this many games."""
    pool_size: int = 15
    pool_rule_agents: tuple[str, ...] = ("aggressive", "conservative")
    fixed_opponents: tuple[str, ...] = ("random", "greedy", "heuristic")
    # rewards
    reward_shaping: bool = False
    """Per-trick shaping: +0.05 on taking the lead, -0.02 when a play of ours is beaten."""
    card_score_reward: bool = False
    """Use the card-count score (cards left, winner collects) instead of the preset's reward."""
    # compute
    actors: int = 1
    """Processes that play each epoch's self-play games (:mod:`climbrl.learn.actors`); 1 plays
    them in the training process itself. Every game is seeded as with 1, so the games are the
    same; the float scores of a policy's batched forward pass depend on the batch's size in
    their last bits, so the numbers are reproducible for a fixed count, and agree with other
    counts up to rounding."""
    actor_lag: bool = False
    """With actors: hand epoch e + 1's games to the actors before epoch e's update, so that they
    play while the training process updates, with the policy from before that update (one update
    stale: other numbers than the synchronous default, reproducible for a fixed ``actors``)."""
    device: str = "cpu"
    """Where the learner's updates and its policy's forward passes run: ``cpu``, ``cuda`` (an
    error without a CUDA GPU) or ``auto`` (cuda when one is available, else cpu). Checkpoints
    are always written with CPU tensors."""
    extra: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.game in DEFAULT_PRESETS and self.rules == "":
            object.__setattr__(self, "rules", DEFAULT_PRESETS[self.game])
        _validate(self)

    @property
    def game_name(self) -> str:
        """``game:rules``, the name :func:`climbrl.games.registry.make_game` takes."""
        return f"{self.game}:{self.rules}"

    @property
    def num_players(self) -> int:
        return num_players(self.game)

    def to_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        for k, v in d.items():
            if isinstance(v, tuple):
                d[k] = list(v)
        return d


ALGO_DEFAULTS: dict[str, dict[str, Any]] = {
    "ppo": {},
    "mcq": {"lr": 1e-4, "update_epochs": 1},
    "sarsa": {"lr": 1e-4},
    "qlearning": {"lr": 1e-4, "target_sync": 1000, "target_sync_unit": "decisions"},
    "dqn": {"lr": 1e-4, "double": True, "dueling": True, "prioritized": True, "target_sync": 1000,
            "target_sync_unit": "decisions"},
}


@dataclass(frozen=True)
class GameSetup:
    """What the study and its pipeline use of one game."""

    title: str
    """The game's name in reports (``Big 2``, ``Dou Dizhu``)."""
    baselines: tuple[str, ...]
    """The study's baselines: the evaluation opponents (and the behaviour window's) by default."""
    rule_agents: tuple[str, ...]
    """The built-in rule agents that play the game: the tournament's and the baseline table's
    (the public agent, outside data, is not among them)."""
    tune_opponent: str
    """The opponent of the Optuna objective by default (the strongest rule agent)."""


GAME_SETUP: dict[str, GameSetup] = {
    "big2": GameSetup("Big 2", ("random", "greedy", "heuristic"),
                      ("random", "greedy", "heuristic", "aggressive", "conservative"), "heuristic"),
    "doudizhu": GameSetup("Dou Dizhu", ("random", "greedy"), ("random", "greedy"), "greedy"),
}

GAME_DEFAULTS: dict[str, dict[str, Any]] = {
    "big2": {},
    "doudizhu": {"eval_opponents": GAME_SETUP["doudizhu"].baselines,
                 "fixed_opponents": GAME_SETUP["doudizhu"].baselines,
                 "pool_rule_agents": GAME_SETUP["doudizhu"].rule_agents, "eval_games": 300},
}
"""Per-game training defaults (Big 2's are the fields' own): the game's baselines and rule agents
(:data:`GAME_SETUP`), and an evaluation size that is a multiple of 3."""


def _fail(name: str, msg: str) -> None:
    raise ConfigError(f"train.{name}: {msg}")


def _validate(c: TrainConfig) -> None:
    if c.algo not in ALGOS:
        _fail("algo", f"unknown learner {c.algo!r} (learners: {', '.join(ALGOS)})")
    if c.game not in DEFAULT_PRESETS:
        _fail("game", f"unknown game {c.game!r} (games: {', '.join(DEFAULT_PRESETS)})")
    if c.rules not in game_presets(c.game):
        _fail("rules", f"unknown {c.game} rules preset {c.rules!r} (presets: {', '.join(game_presets(c.game))})")
    if c.curriculum not in CURRICULA:
        _fail("curriculum", f"unknown curriculum {c.curriculum!r} ({', '.join(CURRICULA)})")
    if c.device not in DEVICES:
        _fail("device", f"must be one of {', '.join(DEVICES)}, got {c.device!r}")
    if c.target_sync_unit not in SYNC_UNITS:
        _fail("target_sync_unit", f"must be one of {', '.join(SYNC_UNITS)}, got {c.target_sync_unit!r}")
    ints = {"seed": 0, "epochs": 1, "games_per_epoch": 1, "eval_every": 0, "keep_policy_every": 0, "eval_games": 4,
            "eval_workers": 1, "hidden": 1, "minibatch_decisions": 1, "update_epochs": 1,
            "epsilon_decay_steps": 1, "replay_capacity": 1, "batch_size": 1, "updates_per_epoch": 0,
            "target_sync": 1, "snapshot_every": 1, "pool_size": 1, "actors": 1}
    for name, low in ints.items():
        v = getattr(c, name)
        if isinstance(v, bool) or not isinstance(v, int) or v < low:
            _fail(name, f"must be an integer >= {low}, got {v!r}")
    n = num_players(c.game)
    if c.eval_games % n:
        _fail("eval_games", f"must be a multiple of {n} (every deal from every seat), got {c.eval_games}")
    positive = ("lr", "max_grad_norm", "clip")
    unit = ("gamma", "epsilon", "epsilon_start", "epsilon_end", "gae_lambda", "tau",
            "priority_alpha", "priority_beta")
    for name in positive + unit + ("vf_coef", "ent_coef"):
        v = getattr(c, name)
        if isinstance(v, bool) or not isinstance(v, (int, float)) or v != v:
            _fail(name, f"must be a number, got {v!r}")
    for name in positive:
        if getattr(c, name) <= 0:
            _fail(name, f"must be positive, got {getattr(c, name)!r}")
    for name in unit:
        if not 0 <= getattr(c, name) <= 1:
            _fail(name, f"must be in [0, 1], got {getattr(c, name)!r}")
    for name in ("vf_coef", "ent_coef"):
        if getattr(c, name) < 0:
            _fail(name, f"must be >= 0, got {getattr(c, name)!r}")
    for name in ("double", "dueling", "prioritized", "reward_shaping", "card_score_reward", "actor_lag"):
        if not isinstance(getattr(c, name), bool):
            _fail(name, f"must be true or false, got {getattr(c, name)!r}")
    if c.actor_lag and c.actors < 2:
        _fail("actor_lag", f"needs actors >= 2 (the games are played in other processes while this one "
                           f"updates), got actors={c.actors}")
    from climbrl.agents.registry import AGENT_NAMES

    for name in ("eval_opponents", "pool_rule_agents", "fixed_opponents"):
        for a in getattr(c, name):
            if a.partition(":")[0] not in AGENT_NAMES:
                _fail(name, f"unknown agent {a!r}")
    if c.curriculum == "fixed_opponents" and not c.fixed_opponents:
        _fail("fixed_opponents", "the fixed_opponents curriculum needs at least one opponent")


def resolve_device(name: str) -> Any:
    """The ``torch.device`` of a ``device`` setting (``auto``: cuda when torch sees a GPU, else
    cpu); ``cuda`` without a GPU is a :class:`ConfigError`. Availability is checked here, when a
    training starts, not in the config's validation: a config recorded on a GPU machine must
    still load (and its checkpoints' policies play) on a machine without one."""
    import torch

    if name not in DEVICES:
        _fail("device", f"must be one of {', '.join(DEVICES)}, got {name!r}")
    if name == "auto":
        name = "cuda" if torch.cuda.is_available() else "cpu"
    if name == "cuda" and not torch.cuda.is_available():
        _fail("device", "cuda was asked for, but torch sees no CUDA GPU (torch.cuda.is_available() is "
                        "False): use device=cpu, or auto to take a GPU only where there is one")
    return torch.device(name)


def train_config(algo: str = "ppo", **overrides: Any) -> TrainConfig:
    """The config of ``algo`` with its defaults, then ``overrides`` (unknown keys are errors)."""
    if algo not in ALGOS:
        _fail("algo", f"unknown learner {algo!r} (learners: {', '.join(ALGOS)})")
    known = {f.name for f in dataclasses.fields(TrainConfig)}
    for k in overrides:
        if k not in known:
            _fail(k, "unknown field")
    values = {**GAME_DEFAULTS.get(overrides.get("game", "big2"), {}), **ALGO_DEFAULTS[algo], **overrides}
    for k in ("eval_opponents", "pool_rule_agents", "fixed_opponents"):
        if isinstance(values.get(k), list):
            values[k] = tuple(values[k])
    return TrainConfig(algo=algo, **values)
