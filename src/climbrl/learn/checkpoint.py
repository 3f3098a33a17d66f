"""Checkpoints: written atomically, read with ``torch.load(..., weights_only=True)``.

A checkpoint holds the learner (network, optimizer, counters; Q-learning's and DQN's target
network and replay buffer, see :mod:`climbrl.learn.replay`), the curriculum's snapshots, the
finished epoch, the metric history and the learner's torch random stream, plus the config it
was trained with (``net_config``: the network's shape, with ``roles`` and ``role_columns`` for
one network per role; a record without them is one network), and the game
and encoder (``encoder``: name, version, sizes) its
network reads; a checkpoint without them was written before the second game and is Big 2's (its
only encoder then, :data:`climbrl.encoders.base.LEGACY`). Missing, corrupt or mismatched files raise
:class:`CheckpointError` with the path and the reason. :func:`resume_conflicts` is the one rule
(``climbrl train --resume`` and the ablation runner) for which runs may continue a checkpoint.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path
from typing import Any

import torch

from climbrl.config import TrainConfig
from climbrl.encoders import Encoder, EncoderError, make_encoder
from climbrl.encoders.base import LEGACY, check_fits, describe
from climbrl.learn.network import Net, make_net

FORMAT = "climbrl-checkpoint"
VERSION = 1


class CheckpointError(ValueError):
    """A checkpoint that is missing, unreadable, or does not fit the run."""


RESUMABLE = frozenset({"epochs", "eval_workers", "keep_policy_every", "actor_cluster"})
"""Settings a run may change when it continues a checkpoint; every other one must be equal.

``epochs``: the budget; a run extends (or finishes) the same training. Not when prioritized
replay is on: its beta anneals over the budget (see :mod:`climbrl.learn.replay_learner`), so
the finished epochs followed another schedule. ``eval_workers``: a match's numbers are the same
for any worker count (every game's deal and seat seeds are fixed before the games are split).
``keep_policy_every``: only which policies are also copied to ``snapshots/``; no number moves.
``actor_cluster``: where the actors' slices are played (local processes or a Dask cluster's
workers); the slices and their numbers are the same."""


#: Fields :class:`TrainConfig` had and no longer has, with the value under which a checkpoint that
#: holds one ran as a run does now: ``extra``, a free mapping that nothing read, taken out because
#: ``--set extra=1`` was accepted without a word.
REMOVED_FIELDS: dict[str, Any] = {"extra": {}}


REPLAY_LEARNERS = ("qlearning", "dqn")
"""The learners whose state includes a replay buffer (:class:`climbrl.learn.replay_learner.ReplayLearner`)."""


def lacks_replay(state: dict[str, Any]) -> bool:
    """Whether ``state`` is a Q-learning or DQN checkpoint written before checkpoints held the
    replay buffer: resumed, its run would refill the buffer from the later epochs only and train
    other numbers than the uninterrupted run, so :func:`resume_conflicts` refuses to train more
    epochs from it (a finished run's checkpoint still resumes: it trains nothing)."""
    return state.get("algo") in REPLAY_LEARNERS and "replay" not in state.get("learner", {})


def resume_conflicts(cfg: TrainConfig, state: dict[str, Any]) -> list[str]:
    """Why ``cfg`` cannot continue the checkpoint ``state``: one ``key=old there, new here`` per
    differing setting, plus an epoch count beyond the budget and a replay learner's checkpoint
    without its buffer (:func:`lacks_replay`; empty: it can). A key the
    checkpoint lacks was added to :class:`TrainConfig` after it was written and is taken at the
    field's default, which by convention is the behaviour from before the field existed."""
    saved = {**TrainConfig().to_dict(), "algo": None, **state.get("config", {})}
    for k, default in REMOVED_FIELDS.items():  # a field taken out since: resumable at its old default
        if saved.get(k, default) == default:
            saved.pop(k, None)
    want = cfg.to_dict()
    keys = [k for k in dict.fromkeys([*want, *saved]) if k not in RESUMABLE or (k == "epochs" and cfg.prioritized)]
    out = [f"{k}={saved.get(k)!r} there, {want.get(k)!r} here" for k in keys if saved.get(k) != want.get(k)]
    if int(state.get("epoch", 0)) > cfg.epochs:
        out.append(f"it has {state['epoch']} epochs, this run wants {cfg.epochs}")
    if lacks_replay(state) and int(state.get("epoch", 0)) < cfg.epochs:  # a finished run trains nothing more
        out.append("it holds no replay buffer (written before checkpoints held one), so a resumed run would not "
                   "train the numbers of an uninterrupted one: start it again in another folder")
    return out


def check_resume(cfg: TrainConfig, state: dict[str, Any], path: str | Path) -> None:
    """Raise :class:`CheckpointError` naming every setting in which ``cfg`` differs from ``path``."""
    conflicts = resume_conflicts(cfg, state)
    if conflicts:
        raise CheckpointError(f"{path} cannot be resumed by this run: " + "; ".join(conflicts))


def on_cpu(obj: Any) -> Any:
    """``obj`` with every tensor in it moved to the CPU (dicts, lists and tuples rebuilt, their
    types and a state dict's ``_metadata`` kept), so that a checkpoint written from a GPU
    loads on a machine without one. An object whose tensors are all on the CPU already comes
    back as it is: the CPU path writes the very same bytes as before devices existed."""
    if not _off_cpu(obj):
        return obj
    if isinstance(obj, torch.Tensor):
        return obj.cpu()
    if isinstance(obj, dict):
        out = type(obj)((k, on_cpu(v)) for k, v in obj.items())
        if hasattr(obj, "_metadata"):
            out._metadata = obj._metadata  # type: ignore[attr-defined]
        return out
    return type(obj)(on_cpu(v) for v in obj)


def _off_cpu(obj: Any) -> bool:
    if isinstance(obj, torch.Tensor):
        return obj.device.type != "cpu"
    if isinstance(obj, dict):
        return any(_off_cpu(v) for v in obj.values())
    if isinstance(obj, (list, tuple)):
        return any(_off_cpu(v) for v in obj)
    return False


def save_atomic(obj: dict[str, Any], path: str | Path) -> None:
    """Write ``obj`` to ``path`` atomically, its tensors on the CPU (:func:`on_cpu`)."""
    obj = on_cpu(obj)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = _temp_beside(path)
    try:
        with os.fdopen(fd, "wb") as f:
            torch.save(obj, f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise


def _temp_beside(path: Path) -> tuple[int, str]:
    """A new file beside ``path`` (``NAME.RANDOM.tmp``, open for writing) for an atomic write.

    The modes of a run's files are one policy: every run output (checkpoints, policies,
    ``metrics.csv``, reports) is created as the process creates any file, mode 0666 less the
    umask. A checkpoint holds no secret, and a run folder shared with a group must be readable
    whole; ``tempfile.mkstemp``'s 0600 had made the checkpoints alone private (issue 51). Private
    material (TLS keys, database passwords) sets 0600 itself where it is written
    (``pipeline/dask_tls.py``, ``pipeline/postgres.py``)."""
    while True:
        tmp = path.parent / f"{path.name}.{secrets.token_hex(6)}.tmp"
        try:
            return os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666), str(tmp)
        except FileExistsError:  # another writer's: draw again
            continue


def non_finite(obj: Any, prefix: str = "") -> list[str]:
    """Where ``obj`` (tensors in dicts, lists and tuples) holds a NaN or an infinity: the dotted
    path of every such floating-point tensor (``learner.net.body.0.weight``)."""
    if isinstance(obj, torch.Tensor):
        return [prefix] if obj.is_floating_point() and not bool(torch.isfinite(obj).all()) else []
    if isinstance(obj, dict):
        items: Any = obj.items()
    elif isinstance(obj, (list, tuple)):
        items = enumerate(obj)
    else:
        return []
    return [p for k, v in items for p in non_finite(v, f"{prefix}.{k}" if prefix else str(k))]


def name_some(paths: list[str], n: int = 3) -> str:
    """The first ``n`` of ``paths``, and how many more."""
    more = f" and {len(paths) - n} more" if len(paths) > n else ""
    return ", ".join(paths[:n]) + more


def load(path: str | Path) -> dict[str, Any]:
    """A climbrl checkpoint (full or network-only) as saved. Never runs code from the file
    (``weights_only``); a file that is not a readable climbrl checkpoint of this version, or
    that holds a NaN or an infinity in a tensor (the weights of a diverged training: they would
    play, or train on, without a word), raises :class:`CheckpointError`."""
    path = Path(path)
    if not path.exists():
        raise CheckpointError(f"checkpoint not found: {path}")
    try:
        obj = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as e:  # truncated zip, foreign pickle, ...
        raise CheckpointError(f"corrupt or unreadable checkpoint {path}: {type(e).__name__}: {e}") from None
    if not isinstance(obj, dict) or obj.get("format") != FORMAT:
        raise CheckpointError(f"{path} is not a climbrl checkpoint")
    if obj.get("version") != VERSION:
        raise CheckpointError(f"{path}: checkpoint version {obj.get('version')} (this code reads {VERSION})")
    bad = non_finite(obj)
    if bad:
        raise CheckpointError(f"{path} holds NaN or infinite values (a diverged training?) in {name_some(bad)}")
    return obj


def network_payload(net: Net, algo: str, epoch: int, encoder: Encoder) -> dict[str, Any]:
    return {"format": FORMAT, "version": VERSION, "algo": algo, "epoch": epoch, "encoder": describe(encoder),
            "net_config": net.config(), "net": net.state_dict()}


def recorded_encoder(obj: dict[str, Any]) -> dict[str, Any]:
    """The encoder a checkpoint records (:data:`LEGACY`, Big 2's, when it predates the record)."""
    enc = obj.get("encoder")
    return dict(enc) if isinstance(enc, dict) else dict(LEGACY)


def load_network(path: str | Path, game: str | None = None) -> tuple[Net, dict[str, Any], Encoder]:
    """The policy network stored in a checkpoint (full or network-only), its metadata and its
    encoder. With ``game``, a checkpoint trained for another game is a :class:`CheckpointError`."""
    obj = load(path)
    state = obj.get("net") if "net" in obj else obj.get("learner", {}).get("net")
    cfg = obj.get("net_config")
    if state is None or not isinstance(cfg, dict):
        raise CheckpointError(f"{path}: no network in this checkpoint")
    rec = recorded_encoder(obj)
    if game is not None and rec.get("game") != game.partition(":")[0]:
        raise CheckpointError(f"{path} was trained for {rec.get('game')}, not {game.partition(':')[0]}")
    try:
        encoder = make_encoder(str(rec.get("game")), str(rec.get("name") or ""))
        check_fits(rec, encoder, str(path))
    except EncoderError as e:
        raise CheckpointError(str(e)) from None
    cfg = {"state_dim": encoder.state_dim, "move_dim": encoder.move_dim, **cfg}
    # the sizes the encoder decides must be its own (a tampered net_config could ask for any), and
    # the widths are bounded before anything is built (make_net: learn.network.check_widths)
    mine = {"state_dim": encoder.state_dim, "move_dim": encoder.move_dim, "n_actions": getattr(encoder, "n_actions", 0)}
    wrong = [f"{k} {cfg[k]!r} (the encoder's: {v})" for k, v in mine.items() if k in cfg and cfg[k] != v]
    if wrong:
        raise CheckpointError(f"{path}: its network's sizes are not its {encoder.game} encoder's: {'; '.join(wrong)}")
    if cfg.get("roles") and (tuple(cfg["roles"]), tuple(cfg.get("role_columns", ()))) != (
            tuple(encoder.roles), tuple(encoder.role_columns)):
        mine = f"{list(encoder.roles)}, {list(encoder.role_columns)}"
        raise CheckpointError(f"{path}: its role networks ({cfg['roles']}, state columns {cfg.get('role_columns')}) "
                              f"are not the {encoder.game} encoder's ({mine})")
    try:
        net = make_net(**cfg, generator=torch.Generator())  # placeholder weights, loaded over next
    except (TypeError, ValueError) as e:
        raise CheckpointError(f"{path}: bad network config: {e}") from None
    try:
        net.load_state_dict(state)
    except RuntimeError as e:
        raise CheckpointError(f"{path}: network does not match its config: {e}") from None
    return net, {k: v for k, v in obj.items() if k not in ("net", "learner")}, encoder
