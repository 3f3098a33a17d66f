"""Typed, validated training configuration (the ``train`` section of ``params.yaml``).

Every field is checked before any work starts; a bad value raises :class:`ConfigError` naming
the field. Defaults are the study's setup (100 epochs x 200 self-play games, evaluation every
5 epochs with 400 games against three copies of each of random, greedy and heuristic) and each
learner's usual hyperparameters; :func:`train_config` fills the learner-specific and
game-specific defaults (:data:`GAME_DEFAULTS`: each game's own baselines and rule agents).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any

from climbrl.games.registry import DEFAULT_PRESETS, game_presets, num_players

ALGOS = ("ppo", "mcq", "sarsa", "qlearning", "dqn", "dmc")
CURRICULA = ("self_play", "checkpoint_self_play", "fixed_opponents", "opponent_pool")
SYNC_UNITS = ("updates", "decisions")
DEVICES = ("cpu", "cuda", "auto")
OPTIMIZERS = ("adam", "rmsprop")
PRECISIONS = ("fp32", "bf16-actors", "bf16")
POOL_WEIGHTINGS = ("uniform", "pfsp")
OBJECTIVES = ("score", "win")
"""``precision`` settings: see :attr:`TrainConfig.precision` and :mod:`climbrl.learn.precision`."""


class ConfigError(ValueError):
    """A bad configuration value; the message names the field."""


@dataclass(frozen=True)
class TrainConfig:
    algo: str = "ppo"
    """Learner: ppo, mcq, sarsa, qlearning, dqn or dmc (DouZero's Deep Monte-Carlo)."""
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
    optimizer: str = "adam"
    """The network's optimizer: ``adam`` (Adam, torch's defaults) or ``rmsprop`` (DouZero's:
    RMSprop with alpha 0.99, eps 1e-5, no momentum)."""
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
    init_policy: str = ""
    """A policy file (``policy.pt``, say of ``climbrl imitate``) whose network weights start the
    run instead of the seeded initialization ("" : none). Its network must be the one this config
    builds (encoder, widths, heads, role networks); a resumed run takes its checkpoint's weights."""
    teacher: str = ""
    """An agent spec (say ``heuristic``) that plays a share of the value learner's own
    non-exploring decisions ("" : none). Its moves are recorded and learned from like the
    learner's, so the Monte-Carlo target is the return of the mixed policy: with a share of 1 a
    value learner learns Q of the teacher, whose greedy policy is one step of policy improvement
    over it, and as the share falls the run becomes plain self-play from there."""
    teacher_share: float = 0.0
    """The share of those decisions the teacher plays at the start (0 .. 1)."""
    teacher_decay_steps: int = 0
    """The share falls linearly to 0 over this many learner decisions (0: it stays constant)."""
    replay_capacity: int = 100_000
    batch_size: int = 256
    updates_per_epoch: int = 50
    updates_per_decision: float = 0.0
    """> 0: each epoch makes round(this x its learner decisions) updates instead of
    ``updates_per_epoch`` (the practice guide's 4.2 loop: 1.0, one update per environment step)."""
    replay_recent: float = 1.0
    """Sample uniformly among the newest this fraction of the buffer (1.0: all of it; the guide's
    5.5 recency-weighted sampling). Uniform replay only."""
    replay_drop_every: int = 0
    """> 0: each time the learner's decisions cross a multiple of this, drop the oldest
    ``replay_drop_fraction`` of the buffer (the guide's 5.5; 0: never)."""
    replay_drop_fraction: float = 0.3
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
    pool_weighting: str = "uniform"
    """``opponent_pool``: how opponents are drawn. ``uniform``: per game and seat, every snapshot and
    rule agent alike (the practice guide's pool). ``pfsp``: prioritised fictitious self-play
    (AlphaStar's): one opponent per game takes every seat but the learner's, drawn with weight
    ``(1 - p)^pfsp_power``, ``p`` the learner's recent win rate against it
    (:class:`climbrl.learn.curriculum.WinRates`), so the opponents that still beat it come most."""
    pfsp_power: float = 2.0
    """``pool_weighting: pfsp``: the exponent of ``1 - p`` (0: uniform over opponents, per game)."""
    # rewards
    reward_objective: str = "score"
    """What the learner's terminal reward is: ``score`` (the rules' return, or the card score) or
    ``win`` (its sign: +1 for a win, -1 for a loss, as DouZero's WP model; the terms of
    ``reward_*`` still apply on top). Every learner is judged on win rates."""
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
    actor_cluster: str = ""
    """With actors: a Dask scheduler's address (``tls://HOST:PORT``; its TLS files in
    ``CLIMBRL_DASK_TLS``, :mod:`climbrl.cluster`) whose workers play the ``actors`` slices instead
    of local processes (:mod:`climbrl.learn.dask_actors`): the same slices, the same numbers; a
    worker lost in the middle of a slice has it played again on another."""
    device: str = "cpu"
    """Where the learner's updates and its policy's forward passes run: ``cpu``, ``cuda`` (an
    error without a CUDA GPU) or ``auto`` (cuda when one is available, else cpu). Checkpoints
    are always written with CPU tensors."""
    precision: str = "fp32"
    """The arithmetic of the self-play forward passes and the updates (:mod:`climbrl.learn.precision`):
    ``fp32`` (every committed number rests on it); ``bf16-actors``: the behaviour policy scores its
    moves with a bfloat16 copy of the weights (in the actors and in the training process), the
    updates stay fp32; ``bf16``: that, and the updates under bfloat16 autocast, with fp32 master
    weights and an fp32 optimizer. Other arithmetic, other numbers: reproducible for a fixed
    setting, and a resumed run must keep its own."""
    # Dou Dizhu only (games with roles and team play; another game refuses them when set)
    role_networks: bool = False
    """One network per role (Dou Dizhu: landlord, peasant_down, peasant_up, and one for the
    auction's decisions) instead of one network that reads the role from the state vector."""
    reward_cards_left: float = 0.0
    """Terminal term: minus this x own cards left at the end / 20 (0: off)."""
    reward_bombs_kept: float = 0.0
    """Potential-based shaping on the bombs and rocket the seat keeps whole (0: off): minus
    this at the decision that breaks one (splits it into other plays or a four with two), and
    the potential left taken back at the end, so that the shaped return is the game's return
    minus this x the bombs dealt: it speeds learning and moves no optimal policy (Ng et al.,
    1999). Until issue 26 it paid this per bomb kept, win or lose, at the end: not
    potential-based, it paid for sitting on bombs."""
    reward_guide: bool = False
    """The practice guide's reward as written (its section 2.4, :class:`climbrl.encoders.doudizhu.DdzEncoder`):
    0.1 x the score at the end, plus its per-decision terms by role (taking the lead, losing it), scaled
    so that a decision's term is at most 1/20 of the smallest terminal reward. Not with
    ``reward_shaping`` or ``card_score_reward``."""
    reward_pass_penalty: float = 0.0
    """Subtracted at a decision where the seat passed although it could beat the table (the
    guide's 5.1 uses 0.1; 0: off)."""
    reward_partner_win: bool = True
    """A peasant shares its side's win (the rules' team reward); false: a peasant whose partner
    went out gets no terminal reward (the one that went out and the losers keep theirs)."""
    # Dou Dizhu learner additions (defaults: off, the behaviour from before they existed)
    encoder: str = ""
    """The learner's encoder ("" is the game's own; Dou Dizhu also ``doudizhu+handsplit``, its move
    vectors plus hand-split features, :mod:`climbrl.encoders.doudizhu_handsplit`)."""
    layers: int = 2
    """Hidden layers of the action-in network (:class:`climbrl.learn.network.ActionInNet`): the first
    over state and move, then ``layers - 1`` of ``hidden x hidden``; 2 is the study's network (2 to
    :data:`MAX_LAYERS`). The value head has the same depth."""
    residual: bool = False
    """Every layer after the first adds its input to its output (a residual MLP): deeper networks
    at the cost of shallow ones train more easily (issue 46)."""
    lstm: int = 0
    """The size of an LSTM over the encoder's history sequence (DouZero's: 128, with
    ``encoder=doudizhu+history``, whose last 15 plays it reads in 5 steps); 0: none, the MLP reads
    every state column as it is. Only with an encoder that has a sequence."""
    bidding: str = "policy"
    """Who makes the auction decisions of the learner's seats (rules with an auction only):
    ``policy`` (the play network), ``rule`` (the heuristic's hand-strength bid) or ``learned``
    (a separate bid network, :mod:`climbrl.learn.bidding`)."""
    bid_epsilon: float = 0.1
    """``bidding=learned``: the bid network's exploration while training (epsilon-greedy)."""
    bid_lr: float = 1e-3
    """``bidding=learned``: the bid network's learning rate (its own Adam optimizer)."""
    # issue 46's signals from the hidden cards, in training only (defaults: off)
    aux_hidden_coef: float = 0.0
    """The weight of an auxiliary loss: a head on the state's first layer predicts the other
    seats' hands at each decision (binary cross-entropy, DouZero+'s opponent modelling). The
    policy never reads them; the head only shapes the features it shares with the scorer. 0: no
    head (0 to 100; ppo, mcq, sarsa and dmc, with an encoder that has hidden targets)."""
    oracle_critic: bool = False
    """PPO's value head reads the other seats' hands beside the state (PerfectDou's
    perfect-training-imperfect-execution): a better baseline for the advantages, while the policy
    that plays still sees only its own observation."""

    def __post_init__(self) -> None:
        if self.game in DEFAULT_PRESETS and self.rules == "":
            object.__setattr__(self, "rules", DEFAULT_PRESETS[self.game])
        _validate(self)

    @property
    def hidden_signals(self) -> bool:
        """Whether training reads the hidden cards (``aux_hidden_coef`` or ``oracle_critic``), so
        that the self-play rollouts must carry each decision's hidden targets."""
        return bool(self.aux_hidden_coef or self.oracle_critic)

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


_DEFAULTS = {f.name: f.default for f in dataclasses.fields(TrainConfig) if f.default is not dataclasses.MISSING}

ALGO_DEFAULTS: dict[str, dict[str, Any]] = {
    "ppo": {},
    "mcq": {"lr": 1e-4, "update_epochs": 1},
    "sarsa": {"lr": 1e-4},
    "qlearning": {"lr": 1e-4, "target_sync": 1000, "target_sync_unit": "decisions"},
    "dqn": {"lr": 1e-4, "double": True, "dueling": True, "prioritized": True, "target_sync": 1000,
            "target_sync_unit": "decisions"},
    # DouZero's (Zha et al., 2021): the undiscounted return, epsilon 0.01, RMSprop at 1e-4, gradients
    # clipped at norm 40
    "dmc": {"lr": 1e-4, "gamma": 1.0, "epsilon": 0.01, "optimizer": "rmsprop", "max_grad_norm": 40.0},
}

ALGO_GAME_DEFAULTS: dict[tuple[str, str], dict[str, Any]] = {
    ("dmc", "doudizhu"): {"role_networks": True},  # DouZero: one network per position
}
"""Defaults of one learner in one game (after :data:`GAME_DEFAULTS` and :data:`ALGO_DEFAULTS`)."""


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
    "doudizhu": GameSetup("Dou Dizhu", ("random", "greedy", "heuristic"),
                          ("random", "greedy", "heuristic", "aggressive", "conservative"), "heuristic"),
}

TOURNAMENT_DEALS = 120
"""The tournament's deals by default (``climbrl tournament``, the pipeline's stage): five blocks
of Big 2's 24 seatings (twenty of Dou Dizhu's 6), over 100 clusters for the intervals
(:mod:`climbrl.evaluate.tournament`)."""

GAME_DEFAULTS: dict[str, dict[str, Any]] = {
    "big2": {},
    "doudizhu": {"eval_opponents": GAME_SETUP["doudizhu"].baselines,
                 "fixed_opponents": GAME_SETUP["doudizhu"].baselines,
                 "pool_rule_agents": ("aggressive", "conservative"), "eval_games": 300},
}
"""Per-game training defaults (Big 2's are the fields' own): the game's baselines
(:data:`GAME_SETUP`), the practice guide's opponent pool (snapshots with the aggressive and the
conservative rule agent), and an evaluation size that is a multiple of 3."""


#: Seeds are integers in [0, 2**32): numpy, torch and the seeds derived from them all take them.
SEED_LIMIT = 2**32

MAX_WIDTH = 4096
"""The widest layer a network may have (``hidden``, an action head's ``hidden2``, ``lstm``), in
the train config, ``climbrl imitate`` and a checkpoint's ``net_config`` alike. The study's
networks are 512 wide (DouZero's too, its LSTM 128), so 4096 leaves eight times that for real
experiments, while the largest network it allows stays within a workstation's memory: a
4096-wide layer pair is 16.8 M weights (67 MB), and four role networks with value heads, their
gradients and Adam's two moments about 2.5 GB. Without a bound, ``--hidden 100000`` asked for
tens of gigabytes and the kernel's OOM killer ended it, or someone else's process (issue 51)."""

MAX_LAYERS = 16
"""The deepest network (``layers``): DouZero's has 6 layers, residual MLPs for card games 10 or so
(DouRN); 16 layers of :data:`MAX_WIDTH` stay within the memory bound above."""


def _fail(name: str, msg: str) -> None:
    raise ConfigError(f"train.{name}: {msg}")


def _check_width(c: TrainConfig, name: str) -> None:
    """A network width (an integer already checked): at most :data:`MAX_WIDTH`."""
    if getattr(c, name) > MAX_WIDTH:
        _fail(name, f"a network width is at most {MAX_WIDTH} (MAX_WIDTH), got {getattr(c, name)!r}")


BIDDING = ("policy", "rule", "learned")


def _validate_ddz_additions(c: TrainConfig) -> None:
    """The encoder and bidding switches (:data:`BIDDING`)."""
    from climbrl.encoders.registry import encoder_names

    if c.encoder and c.encoder not in encoder_names(c.game):
        _fail("encoder", f"unknown {c.game} encoder {c.encoder!r} (encoders: {', '.join(encoder_names(c.game))})")
    if isinstance(c.lstm, bool) or not isinstance(c.lstm, int) or c.lstm < 0:
        _fail("lstm", f"must be an integer >= 0, got {c.lstm!r}")
    _check_width(c, "lstm")
    if isinstance(c.layers, bool) or not isinstance(c.layers, int) or not 2 <= c.layers <= MAX_LAYERS:
        _fail("layers", f"must be an integer from 2 to {MAX_LAYERS} (MAX_LAYERS), got {c.layers!r}")
    if not isinstance(c.residual, bool):
        _fail("residual", f"must be true or false, got {c.residual!r}")
    if c.lstm:
        from climbrl.encoders import make_encoder

        if not make_encoder(c.game, c.encoder).sequence:
            _fail("lstm", f"the encoder {c.encoder or c.game.partition(':')[0]!r} has no history sequence for an LSTM "
                          f"to read (Dou Dizhu: encoder=doudizhu+history)")
    if c.bidding not in BIDDING:
        _fail("bidding", f"must be one of {', '.join(BIDDING)}, got {c.bidding!r}")
    if c.bidding != "policy" and not has_auction(c.game, c.rules):
        _fail("bidding", f"{c.bidding!r} needs rules with an auction; {c.game}:{c.rules} has none (only 'policy')")
    for name, low in (("bid_epsilon", 0.0), ("bid_lr", 0.0)):
        v = getattr(c, name)
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not low <= v <= 1 or (name == "bid_lr" and v == 0):
            _fail(name, f"must be a number in {'(0, 1]' if name == 'bid_lr' else '[0, 1]'}, got {v!r}")


def has_auction(game: str, rules: str) -> bool:
    """Whether ``game`` under the preset ``rules`` picks its landlord by an auction."""
    if game != "doudizhu":
        return False
    from climbrl.games.doudizhu.rules import get_rules

    return get_rules(rules).landlord is None


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
    if c.precision not in PRECISIONS:
        _fail("precision", f"must be one of {', '.join(PRECISIONS)}, got {c.precision!r}")
    if c.optimizer not in OPTIMIZERS:
        _fail("optimizer", f"must be one of {', '.join(OPTIMIZERS)}, got {c.optimizer!r}")
    if c.algo == "dmc" and c.gamma != 1:
        _fail("gamma", f"dmc learns the episode's undiscounted return: gamma must be 1, got {c.gamma!r}")
    for name in ("updates_per_decision", "replay_recent", "replay_drop_fraction"):
        v = getattr(c, name)
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            _fail(name, f"must be a finite number, got {v!r}")
    if c.updates_per_decision < 0:
        _fail("updates_per_decision", f"must be >= 0, got {c.updates_per_decision!r}")
    if not 0 < c.replay_recent <= 1:
        _fail("replay_recent", f"must be in (0, 1], got {c.replay_recent!r}")
    if c.replay_recent < 1 and c.prioritized:
        _fail("replay_recent", "recency sampling is for uniform replay: prioritized replay samples by priority")
    if isinstance(c.replay_drop_every, bool) or not isinstance(c.replay_drop_every, int) or c.replay_drop_every < 0:
        _fail("replay_drop_every", f"must be an integer >= 0, got {c.replay_drop_every!r}")
    if not 0 < c.replay_drop_fraction < 1:
        _fail("replay_drop_fraction", f"must be in (0, 1), got {c.replay_drop_fraction!r}")
    if isinstance(c.teacher_share, bool) or not isinstance(c.teacher_share, (int, float)) \
            or not 0 <= c.teacher_share <= 1:
        _fail("teacher_share", f"must be a number in [0, 1], got {c.teacher_share!r}")
    if (c.teacher_share > 0) != bool(c.teacher):
        _fail("teacher", "a teacher needs teacher_share > 0 and teacher_share > 0 needs a teacher "
                         f"(teacher {c.teacher!r}, teacher_share {c.teacher_share!r})")
    if c.teacher and c.algo == "ppo":
        _fail("teacher", "a teacher's moves are off-policy for PPO's ratio: use a value learner "
                         "(mcq, sarsa, qlearning, dqn, dmc)")
    if c.target_sync_unit not in SYNC_UNITS:
        _fail("target_sync_unit", f"must be one of {', '.join(SYNC_UNITS)}, got {c.target_sync_unit!r}")
    ints = {"seed": 0, "eval_seed": 0, "epochs": 1, "games_per_epoch": 1, "eval_every": 0, "keep_policy_every": 0,
            "eval_games": 4,
            "eval_workers": 1, "hidden": 1, "minibatch_decisions": 1, "update_epochs": 1,
            "epsilon_decay_steps": 1, "replay_capacity": 1, "batch_size": 1, "updates_per_epoch": 0,
            "target_sync": 1, "snapshot_every": 1, "pool_size": 1, "actors": 1, "teacher_decay_steps": 0}
    for name, low in ints.items():
        v = getattr(c, name)
        if isinstance(v, bool) or not isinstance(v, int) or v < low:
            _fail(name, f"must be an integer >= {low}, got {v!r}")
    _check_width(c, "hidden")
    for name in ("seed", "eval_seed"):
        if getattr(c, name) >= SEED_LIMIT:
            _fail(name, f"a seed is an integer from 0 to {SEED_LIMIT - 1}, got {getattr(c, name)!r}")
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
    for name in ("double", "dueling", "prioritized", "reward_shaping", "card_score_reward", "role_networks",
                 "reward_partner_win", "reward_guide"):
        if not isinstance(getattr(c, name), bool):
            _fail(name, f"must be true or false, got {getattr(c, name)!r}")
    for name in ("reward_cards_left", "reward_bombs_kept", "reward_pass_penalty"):
        v = getattr(c, name)
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            _fail(name, f"must be a finite number, got {v!r}")
    if not 0 <= c.reward_pass_penalty <= 1:
        _fail("reward_pass_penalty", f"must be in [0, 1] (the guide's 0.1), got {c.reward_pass_penalty!r}")
    if c.pool_weighting not in POOL_WEIGHTINGS:
        _fail("pool_weighting", f"must be one of {', '.join(POOL_WEIGHTINGS)}, got {c.pool_weighting!r}")
    if c.pool_weighting != "uniform" and c.curriculum != "opponent_pool":
        _fail("pool_weighting", f"weights the opponent_pool curriculum's draws, not {c.curriculum!r}'s")
    if isinstance(c.pfsp_power, bool) or not isinstance(c.pfsp_power, (int, float)) or not 0 <= c.pfsp_power <= 16:
        _fail("pfsp_power", f"must be a number in [0, 16], got {c.pfsp_power!r}")
    if c.reward_objective not in OBJECTIVES:
        _fail("reward_objective", f"must be one of {', '.join(OBJECTIVES)}, got {c.reward_objective!r}")
    if c.reward_objective == "win" and c.card_score_reward:
        _fail("reward_objective", "win is the sign of the rules' return: leave card_score_reward off")
    if c.reward_guide and (c.reward_shaping or c.card_score_reward):
        _fail("reward_guide", "the guide's reward has its own per-decision and terminal terms: leave reward_shaping "
                              "and card_score_reward off")
    _validate_game_only(c)
    from climbrl.agents.registry import AGENT_NAMES

    for name in ("eval_opponents", "pool_rule_agents", "fixed_opponents"):
        v = getattr(c, name)
        if not isinstance(v, tuple) or not all(isinstance(a, str) for a in v):
            _fail(name, f"must be a list of agent names, got {v!r}")
        for a in v:
            if a.partition(":")[0] not in AGENT_NAMES:
                _fail(name, f"unknown agent {a!r}")
    if c.curriculum == "fixed_opponents" and not c.fixed_opponents:
        _fail("fixed_opponents", "the fixed_opponents curriculum needs at least one opponent")
    if not isinstance(c.teacher, str) or (c.teacher and c.teacher.partition(":")[0] not in AGENT_NAMES):
        _fail("teacher", f"unknown agent {c.teacher!r}")
    _validate_ddz_additions(c)
    _validate_hidden_signals(c)
    if c.actor_cluster and c.actors < 2:
        _fail("actor_cluster", f"needs actors >= 2 (the number of slices the cluster's workers play), "
                               f"got actors={c.actors}")
    if c.actor_lag and c.actors < 2:
        _fail("actor_lag", f"needs actors >= 2 (the games are played in other processes while this one "
                           f"updates), got actors={c.actors}")
    if c.actors > 1 and c.bidding != "policy":
        _fail("actors", f"the actors do not carry a separate bid model (bidding={c.bidding!r}): use actors=1, "
                        "or bidding=policy")


HIDDEN_SIGNAL_ALGOS = ("ppo", "mcq", "sarsa", "dmc")
"""The learners that learn from each epoch's own decisions, whose rollouts carry hidden targets
(the replay learners' buffers hold none)."""


def _validate_hidden_signals(c: TrainConfig) -> None:
    """``aux_hidden_coef`` and ``oracle_critic``: in range, for a learner and an encoder that have them."""
    v = c.aux_hidden_coef
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or not 0 <= v <= 100:
        _fail("aux_hidden_coef", f"must be a finite number from 0 to 100, got {v!r}")
    if not isinstance(c.oracle_critic, bool):
        _fail("oracle_critic", f"must be true or false, got {c.oracle_critic!r}")
    if c.aux_hidden_coef and c.algo not in HIDDEN_SIGNAL_ALGOS:
        _fail("aux_hidden_coef", f"is for the learners that learn from their own epoch "
                                 f"({', '.join(HIDDEN_SIGNAL_ALGOS)}), not {c.algo}: its replay buffer holds no "
                                 "hidden targets")
    if c.oracle_critic and c.algo != "ppo":
        _fail("oracle_critic", f"is PPO's critic: {c.algo} has no value head to give the hidden cards")
    on = [name for name in ("aux_hidden_coef", "oracle_critic") if getattr(c, name)]
    if on:
        from climbrl.encoders import make_encoder

        if not make_encoder(c.game, c.encoder).hidden_dim:
            _fail(on[0], f"the encoder {c.encoder or c.game!r} has no hidden targets (hidden_dim 0)")


ROLE_FIELDS = {"role_networks": "role_networks", "reward_cards_left": "cards_left",
               "reward_bombs_kept": "bombs_kept", "reward_partner_win": "partner_win", "reward_guide": "guide",
               "reward_pass_penalty": "pass_penalty"}
"""The fields that only a game with roles defines, and their encoder terms (the
:class:`~climbrl.encoders.base.RewardTerms` names the game's encoder lists in ``reward_terms``;
``role_networks``: the encoder has two roles or more)."""


def _validate_game_only(c: TrainConfig) -> None:
    """Refuse a switch the game does not define (Big 2: every field of :data:`ROLE_FIELDS`)."""
    set_fields = [k for k in ROLE_FIELDS if getattr(c, k) != _DEFAULTS[k]]
    if not set_fields:
        return
    from climbrl.encoders import make_encoder

    enc = make_encoder(c.game)
    for k in set_fields:
        ok = len(enc.roles) > 1 if k == "role_networks" else ROLE_FIELDS[k] in enc.reward_terms
        if not ok:
            _fail(k, f"{c.game} does not define it (a Dou Dizhu switch: roles and team rewards); leave it at "
                     f"{_DEFAULTS[k]!r}")


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
    game = overrides.get("game", "big2")
    values = {**GAME_DEFAULTS.get(game, {}), **ALGO_DEFAULTS[algo], **ALGO_GAME_DEFAULTS.get((algo, game), {}),
              **overrides}
    for k in ("eval_opponents", "pool_rule_agents", "fixed_opponents"):
        if isinstance(values.get(k), str):  # one name, or names with commas (--set eval_opponents=random,greedy)
            values[k] = [a.strip() for a in values[k].split(",") if a.strip()]
        if isinstance(values.get(k), list):
            values[k] = tuple(values[k])
    return TrainConfig(algo=algo, **values)
