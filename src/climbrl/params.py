"""The typed schema of ``params.yaml``: every pipeline stage reads its parameters through here.

The whole file is validated before any work starts; a bad value stops the run with a
:class:`ParamsError` naming the key (``train.ppo.lr: must be positive, got -1``).

Studies: the top level is the main study (Big 2's); ``studies:`` holds further studies beside it,
each a mapping of the same sections (``studies.doudizhu.game: doudizhu`` ...), run by the same
stages (``python -m pipeline train ppo --study doudizhu``). A study's sections are its own: a
section it leaves out takes the defaults of its game, not the main study's values, except
``tracking``, which it inherits with the study's name appended to the experiment and the
registered model. A study is named in a *params spec*, ``params.yaml#doudizhu`` (:func:`load_params`),
the one string that the pipeline passes from stage to stage (and to Dask workers).
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from climbrl.config import ALGOS, CURRICULA, GAME_SETUP, ConfigError, TrainConfig, train_config
from climbrl.games.registry import DEFAULT_PRESETS, game_presets, num_players
from climbrl.yamlfile import YamlError, load_yaml

SECTIONS = ("game", "rules", "seeds", "train", "evaluate", "baselines", "simulate", "tournament", "tune", "report",
            "tracking", "ablation", "behaviour", "studies", "deep", "auction")
STUDY_SECTIONS = tuple(k for k in SECTIONS if k not in ("ablation", "studies", "simulate"))
"""The sections a study beside the main one may hold (the ablations and the engine's random-play
statistics belong to the main study)."""


class ParamsError(ValueError):
    """A bad ``params.yaml``; the message names the key."""


def _int(section: dict, key: str, where: str, low: int = 0) -> int:
    v = section.get(key)
    if isinstance(v, bool) or not isinstance(v, int) or v < low:
        raise ParamsError(f"{where}.{key}: must be an integer >= {low}, got {v!r}")
    return v


def _str(section: dict, key: str, where: str) -> str:
    v = section.get(key)
    if not isinstance(v, str) or not v:
        raise ParamsError(f"{where}.{key}: must be a non-empty string, got {v!r}")
    return v


@dataclass(frozen=True)
class SeedsParams:
    """The versioned deal sets: ``deals`` evaluation deals from ``seed`` (the reported test
    numbers) and ``validation_deals`` from ``validation_seed`` (the deals that choose the best
    learner); the two sets are checked to be disjoint when written. Each purpose draws its own
    deals from a seed (:data:`climbrl.agents.runner.PURPOSES`), so the two seeds, or a deep
    evaluation's, may even be equal: no seed of another purpose gives these deals."""

    deals: int
    seed: int
    validation_deals: int = 250
    validation_seed: int = 20261


@dataclass(frozen=True)
class DeepParams:
    """The practice guide's deep evaluation of the study's best learner (chosen on the validation
    deals): ``repeats`` duels of ``deals`` fresh deals each (deal seeds ``seed .. seed + repeats -
    1``, never the versioned deal sets' seeds) against each of ``opponents``."""

    repeats: int
    deals: int
    opponents: tuple[str, ...]
    seed: int = 1
    workers: int = 2


@dataclass(frozen=True)
class AuctionParams:
    """The whole game's evaluation of a study under rules with an auction (issue 26; the
    ``auction`` stage, :func:`pipeline.stages.auction`): every learner with its learned bid model,
    the best one (chosen on the validation deals) also bidding by the heuristic's rule, and the
    heuristic itself, each against two copies of every one of ``opponents`` (rule bidders) on
    ``decks`` fresh decks (purpose ``deep`` from ``seed``), every deck from every seat."""

    decks: int
    seed: int
    opponents: tuple[str, ...]
    workers: int = 2


@dataclass(frozen=True)
class EvaluateParams:
    games: int
    opponents: tuple[str, ...]
    workers: int
    repeats: int = 1
    """Deep evaluation when > 1: each match again on this many fresh deal sets (mean and sd)."""


@dataclass(frozen=True)
class TuneParams:
    algo: str
    trials: int
    epochs: int
    games_per_epoch: int
    eval_every: int
    eval_games: int
    seed: int
    storage: str
    study: str
    pruner: str
    opponent: str = "heuristic"
    """The objective's opponent (a copy in every other seat); default: the game's
    :attr:`~climbrl.config.GameSetup.tune_opponent` (Big 2 heuristic, Dou Dizhu greedy)."""


@dataclass(frozen=True)
class TrackingParams:
    tracking_uri: str
    experiment: str
    register_model: str


@dataclass(frozen=True)
class AblationParams:
    """The study's two ablations of PPO (``dvc repro ablations/dvc.yaml``): each value x each seed."""

    seeds: int
    epochs: int
    games_per_epoch: int
    eval_every: int
    eval_games: int
    workers: int
    entropy: tuple[float, ...]
    curriculum: tuple[str, ...]


@dataclass(frozen=True)
class BehaviourParams:
    """The interpretability window: recorded evaluation games of every learner, its kept
    snapshots and the reference rule agents (each game's own window, :mod:`climbrl.evaluate.windows`;
    see :func:`pipeline.stages.behaviour`).
    Defaults: the game's baselines, 100 deals x every seat."""

    games: int
    opponents: tuple[str, ...]
    reference_agents: tuple[str, ...]
    workers: int


@dataclass(frozen=True)
class Params:
    rules: str
    seeds: SeedsParams
    train: dict[str, TrainConfig]
    evaluate: EvaluateParams
    tune: TuneParams
    tracking: TrackingParams
    ablation: AblationParams
    behaviour: BehaviourParams
    raw: dict[str, Any] = field(repr=False)
    game: str = "big2"
    study: str = ""
    """The study's name under ``studies:`` ("" for the main study at the top level)."""
    studies: tuple[str, ...] = ()
    """The main study's: the names of the studies beside it (its report summarizes them)."""
    deep: DeepParams | None = None
    """The deep evaluation of the best learner (``deep:``; none when the section is absent)."""
    auction: AuctionParams | None = None
    """The whole game's evaluation (``auction:``, rules with an auction only; none when absent)."""

    def learners(self) -> list[str]:
        return list(self.train)


#: The keys each mapping section takes (``train`` holds learners, ``studies`` studies: checked
#: where they are parsed). A key outside its section's list is refused, as ``train``'s unknown
#: fields are: a misspelt ``dealz`` would otherwise leave the default in force without a word.
SECTION_KEYS = {
    "seeds": ("deals", "seed", "validation_deals", "validation_seed"),
    "evaluate": ("games", "opponents", "workers", "repeats"),
    "baselines": ("games", "seed"),
    "simulate": ("games", "seed"),
    "tournament": ("deals", "seed", "workers", "rule_agents", "learners", "snapshots", "resamples"),
    "tune": ("algo", "trials", "epochs", "games_per_epoch", "eval_every", "eval_games", "seed", "storage", "study",
             "pruner", "opponent"),
    "report": ("title",),
    "tracking": ("tracking_uri", "experiment", "register_model"),
    "behaviour": ("games", "opponents", "reference_agents", "workers"),
    "ablation": ("seeds", "epochs", "games_per_epoch", "eval_every", "eval_games", "workers", "entropy", "curriculum"),
    "deep": ("repeats", "deals", "opponents", "seed", "workers"),
    "auction": ("decks", "seed", "opponents", "workers"),
}


def _section(raw: dict, name: str) -> dict:
    v = raw.get(name, {})
    if not isinstance(v, dict):
        raise ParamsError(f"{name}: must be a mapping, got {type(v).__name__}")
    for key in v:
        if key not in SECTION_KEYS.get(name, (key,)):
            raise ParamsError(f"{name}.{key}: unknown key (keys of {name}: {', '.join(SECTION_KEYS[name])})")
    return v


def parse_params(raw: dict[str, Any], study: str = "") -> Params:
    """The main study of ``raw`` (a whole params.yaml), or the study ``study`` under its ``studies``."""
    if not isinstance(raw, dict):
        raise ParamsError("params.yaml must be a mapping of sections")
    for key in raw:
        if key not in SECTIONS:
            raise ParamsError(f"{key}: unknown section (sections: {', '.join(SECTIONS)})")
    if study:
        return _parse_study(raw, study)
    main = _parse({k: v for k, v in raw.items() if k != "studies"})
    return dataclasses.replace(main, studies=tuple(study_names(raw)))


def _parse(raw: dict[str, Any], study: str = "") -> Params:
    game = raw.get("game", "big2")
    if not isinstance(game, str) or game not in DEFAULT_PRESETS:
        raise ParamsError(f"game: unknown game {game!r} (games: {', '.join(DEFAULT_PRESETS)})")
    # the registry's own string: a checkpoint pickles the same objects, hence the same bytes, whether
    # params.yaml names the game or leaves it to the default
    game = next(g for g in DEFAULT_PRESETS if g == game)
    presets = game_presets(game)
    rules = raw.get("rules", DEFAULT_PRESETS[game])
    if rules not in presets:
        raise ParamsError(f"rules: unknown {game} rules preset {rules!r} (presets: {', '.join(presets)})")
    n_players = num_players(game)
    for name in ("baselines", "simulate", "report"):  # read by their stages: their keys are checked here
        _section(raw, name)
    s = _section(raw, "seeds")
    s = {"validation_deals": 250, "validation_seed": 20261, **s}
    seeds = SeedsParams(_int(s, "deals", "seeds", 1), _int(s, "seed", "seeds"),
                        _int(s, "validation_deals", "seeds", 1), _int(s, "validation_seed", "seeds"))
    t = _section(raw, "train")
    common = t.get("common", {})
    if not isinstance(common, dict):
        raise ParamsError("train.common: must be a mapping")
    train: dict[str, TrainConfig] = {}
    for name, values in t.items():
        if name == "common":
            continue
        if not isinstance(values, dict):
            raise ParamsError(f"train.{name}: must be a mapping")
        # a learner is named by its algorithm (train.ppo) or, for a variant, by any name with an
        # explicit algo (train.ppo_roles: {algo: ppo, role_networks: true}): its own stage and run
        algo = values.get("algo", name)
        if not isinstance(name, str) or not re.fullmatch(r"[a-z][a-z0-9_]*", name):
            raise ParamsError(f"train.{name}: a learner's name is lower-case letters, digits and _")
        if algo not in ALGOS:
            where = f"train.{name}.algo" if "algo" in values else f"train.{name}"
            raise ParamsError(f"{where}: unknown learner {algo!r} (learners: {', '.join(ALGOS)}; a variant "
                              "names its algorithm with algo:)")
        try:
            train[name] = train_config(algo, game=game, rules=rules,
                                       **{**common, **{k: v for k, v in values.items() if k != "algo"}})
        except ConfigError as e:
            key = str(e).split(":", 1)
            field_name = key[0].removeprefix("train.")
            where = f"train.{name}" if field_name in values else "train.common"
            raise ParamsError(f"{where}.{field_name}:{key[1]}") from None
    e = _section(raw, "evaluate")
    opponents = e.get("opponents", list(GAME_SETUP[game].baselines))
    if not isinstance(opponents, list) or not opponents:
        raise ParamsError("evaluate.opponents: must be a non-empty list of agents")
    _agent_list({"rule_agents": [], **_section(raw, "tournament")}, "rule_agents", "tournament", game)
    evaluate = EvaluateParams(_int(e, "games", "evaluate", 4),
                              _agent_list({"opponents": opponents}, "opponents", "evaluate", game),
                              _int(e, "workers", "evaluate", 1), _int({"repeats": 1, **e}, "repeats", "evaluate", 1))
    from climbrl.evaluate.baselines_report import games_per_deal

    per_deal = games_per_deal(game, rules)
    how = ("every deal played twice: DouZero's duel, the learner as landlord, then as the peasants"
           if per_deal != n_players else "every deal from every seat")
    if evaluate.games % per_deal:
        raise ParamsError(f"evaluate.games: must be a multiple of {per_deal} ({how}), got {evaluate.games}")
    if evaluate.games // per_deal > seeds.deals:
        raise ParamsError(f"evaluate.games: {evaluate.games} games are {evaluate.games // per_deal} deals x "
                          f"{per_deal} ({how}); seeds.deals holds {seeds.deals}")
    b_games = _section(raw, "baselines").get("games")
    if isinstance(b_games, int) and b_games % per_deal:
        raise ParamsError(f"baselines.games: must be a multiple of {per_deal} ({how}), got {b_games}")
    u = _section(raw, "tune")
    tune = TuneParams(
        algo=_str(u, "algo", "tune"), trials=_int(u, "trials", "tune", 1), epochs=_int(u, "epochs", "tune", 1),
        games_per_epoch=_int(u, "games_per_epoch", "tune", 1), eval_every=_int(u, "eval_every", "tune", 1),
        eval_games=_int(u, "eval_games", "tune", 4), seed=_int(u, "seed", "tune"),
        storage=_str(u, "storage", "tune"), study=_str(u, "study", "tune"), pruner=_str(u, "pruner", "tune"),
        opponent=_agent_list({"opponent": [u.get("opponent", GAME_SETUP[game].tune_opponent)]}, "opponent", "tune",
                             game)[0],
    )
    if tune.eval_games % n_players:
        raise ParamsError(f"tune.eval_games: must be a multiple of {n_players}, got {tune.eval_games}")
    if tune.algo not in ALGOS:
        raise ParamsError(f"tune.algo: unknown learner {tune.algo!r}")
    if tune.pruner not in ("median", "none"):
        raise ParamsError(f"tune.pruner: must be 'median' or 'none', got {tune.pruner!r}")
    k = _section(raw, "tracking")
    tracking = TrackingParams(_str(k, "tracking_uri", "tracking"), _str(k, "experiment", "tracking"),
                              _str(k, "register_model", "tracking"))
    deep = None
    if "deep" in raw:
        d = {"seed": 1, "workers": 2, "opponents": None, **_section(raw, "deep")}
        deep = DeepParams(_int(d, "repeats", "deep", 2), _int(d, "deals", "deep", 1),
                          _agent_list(d, "opponents", "deep", game), _int(d, "seed", "deep"),
                          _int(d, "workers", "deep", 1))
    auction = None
    if "auction" in raw:
        from climbrl.config import has_auction

        if not has_auction(game, rules):
            raise ParamsError(f"auction: {game} under rules {rules!r} has no auction (the landlord's seat is fixed); "
                              "the whole game's evaluation needs rules with one (Dou Dizhu standard)")
        a = {"seed": 0, "workers": 2, "opponents": ["heuristic"], **_section(raw, "auction")}
        if a["opponents"] == []:
            raise ParamsError("auction.opponents: must name at least one opponent")
        auction = AuctionParams(_int(a, "decks", "auction", 1), _int(a, "seed", "auction"),
                                _agent_list(a, "opponents", "auction", game), _int(a, "workers", "auction", 1))
    return Params(rules, seeds, train, evaluate, tune, tracking, _ablation(_section(raw, "ablation")),
                  _behaviour(_section(raw, "behaviour"), game), raw, game, study, deep=deep, auction=auction)


def study_names(raw: dict[str, Any]) -> list[str]:
    return list(_section(raw, "studies"))


def _parse_study(raw: dict[str, Any], study: str) -> Params:
    studies = _section(raw, "studies")
    if study not in studies:
        raise ParamsError(f"studies.{study}: no such study (studies: {', '.join(studies) or 'none'})")
    own = studies[study]
    if not isinstance(own, dict):
        raise ParamsError(f"studies.{study}: must be a mapping of sections")
    for key in own:
        if key not in STUDY_SECTIONS:
            raise ParamsError(f"studies.{study}.{key}: unknown section (a study's sections: "
                              f"{', '.join(STUDY_SECTIONS)})")
    tracking = dict(_section(raw, "tracking"))
    for key in ("experiment", "register_model"):
        if isinstance(tracking.get(key), str):
            tracking[key] = f"{tracking[key]}-{study}"
    try:
        return _parse({"tracking": tracking, **own}, study)
    except ParamsError as e:
        raise ParamsError(f"studies.{study}.{e}") from None


def _agent_list(b: dict, key: str, section: str = "behaviour", game: str = "big2") -> tuple[str, ...]:
    """The agents named at ``section.key``, each built once here for ``game``: an unknown name, an
    agent of another game, or the public agent without its weights (outside data), fails when the
    params load, before any training."""
    from climbrl.learn.specs import make_agent

    v = b[key]
    if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
        raise ParamsError(f"{section}.{key}: must be a list of agent names, got {v!r}")
    for spec in v:
        try:
            make_agent(spec, game)
        except ValueError as e:
            raise ParamsError(f"{section}.{key}: {e}") from None
    return tuple(v)


def _behaviour(b: dict, game: str = "big2") -> BehaviourParams:
    n = num_players(game)
    baselines = list(GAME_SETUP[game].baselines)
    b = {"games": 100 * n, "opponents": baselines, "reference_agents": baselines, "workers": 2, **b}
    games = _int(b, "games", "behaviour", n)
    if games % n:
        raise ParamsError(f"behaviour.games: must be a multiple of {n}, got {games}")
    opponents = _agent_list(b, "opponents", "behaviour", game)
    if not opponents:
        raise ParamsError("behaviour.opponents: must name at least one opponent")
    return BehaviourParams(games, opponents, _agent_list(b, "reference_agents", "behaviour", game),
                           _int(b, "workers", "behaviour", 1))


def _ablation(a: dict) -> AblationParams:
    defaults = {"seeds": 3, "epochs": 100, "games_per_epoch": 200, "eval_every": 5, "eval_games": 400, "workers": 2,
                "entropy": [0.0, 0.001, 0.01, 0.05, 0.1], "curriculum": list(CURRICULA)}
    a = {**defaults, **a}
    ints = {k: _int(a, k, "ablation", low) for k, low in
            (("seeds", 1), ("epochs", 1), ("games_per_epoch", 1), ("eval_every", 1), ("eval_games", 4), ("workers", 1))}
    ent = a["entropy"]
    if not isinstance(ent, list) or not ent or not all(
            isinstance(v, int | float) and not isinstance(v, bool) and v >= 0 for v in ent):
        raise ParamsError(f"ablation.entropy: must be a non-empty list of coefficients >= 0, got {ent!r}")
    cur = a["curriculum"]
    if not isinstance(cur, list) or not cur or not all(v in CURRICULA for v in cur):
        raise ParamsError(f"ablation.curriculum: must be a non-empty list of curricula ({', '.join(CURRICULA)}), "
                          f"got {cur!r}")
    if ints["eval_games"] % 4:
        raise ParamsError(f"ablation.eval_games: must be a multiple of 4, got {ints['eval_games']}")
    return AblationParams(**ints, entropy=tuple(float(v) for v in ent), curriculum=tuple(cur))


def split_spec(spec: str | Path) -> tuple[Path, str]:
    """``params.yaml#doudizhu`` -> (the file, the study name; "" for the main study)."""
    path, _, study = str(spec).partition("#")
    return Path(path), study


def load_params(path: str | Path = "params.yaml") -> Params:
    """The params of a params spec: a file (its main study) or ``FILE#STUDY``."""
    path, study = split_spec(path)
    if not path.exists():
        raise ParamsError(f"{path}: not found")
    try:
        raw = load_yaml(path.read_text())
    except (YamlError, UnicodeDecodeError) as e:
        raise ParamsError(f"{path}: {e}") from None
    return parse_params(raw or {}, study)
