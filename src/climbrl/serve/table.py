"""One game with a person at it: the agents' turns, the event log, and the person's view.

The person's view is built from the person's observation (:meth:`GameState.observation`, which
holds no other seat's cards) and the public event log only, so a response cannot carry a hidden
card by accident. Two things are shown beyond it, each by the person's choice or once nothing is
hidden any more:

- ``open_hands``: a game created to study the agents shows every hand and each agent's
  reasoning as it plays (the page says so; the person sees what the agents cannot).
- Once the game is over, every hand and every agent's reasoning are shown (and the replay).

Each seat has its own random stream seeded from (deal seed, seat), as a match seeds them
(:func:`climbrl.agents.runner.seat_seed`), so a deal replayed with the same agents and the same
person's moves plays the same. A move arrives with the number of moves the page had seen
(``turn``); any other number is a stale request and changes nothing. Every refused request leaves
the game as it was.
"""

from __future__ import annotations

import functools
import os
import random
import secrets
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from climbrl.agents import Agent, Decision
from climbrl.agents.runner import seat_seed
from climbrl.games.base import GameError
from climbrl.games.registry import DEFAULT_PRESETS, game_presets, make_game
from climbrl.learn.specs import make_agent
from climbrl.serve.presenters import Refused, presenter_for
from climbrl.serve.reasoning import explain
from climbrl.serve.specs import CHECKPOINT, needs_worker, rooted
from climbrl.serve.workers import JobFailed, WorkerError

ADVICE_STREAM = 1
"""The advisor's random streams are seeded apart from the game's (match seed index 1), so asking
for advice never changes how the game goes."""


class TableError(ValueError):
    """A request the game cannot take; ``status``: the HTTP status the server answers with."""

    status = 400

    def __init__(self, message: str, **extra: Any) -> None:
        super().__init__(message)
        self.extra = extra


class StaleRequest(TableError):
    status = 409


class AgentFailed(TableError):
    status = 500


class AgentTooSlow(TableError):
    """A decision that did not come in time (or the server stopping): the game is as it was."""

    status = 503


def _build_agent(spec: str, game: str, root: Path | None = None) -> tuple[Agent, str]:
    """The agent of ``spec`` and the spec as built (checkpoint paths checked under ``root``)."""
    if not isinstance(spec, str) or not spec.strip():
        raise TableError("an agent spec is a non-empty string (e.g. heuristic, checkpoint:runs/ppo/policy.pt)")
    try:
        built = rooted(spec.strip(), root)
        return make_agent(built, game), built
    except (ValueError, ImportError, OSError, RuntimeError) as e:  # CheckpointError, the outside agents', torch's
        raise TableError(f"agent {spec!r}: {e}") from None


@functools.lru_cache(maxsize=8)
def _worker_game(name: str) -> Any:
    return make_game(name)


@functools.lru_cache(maxsize=16)
def _worker_agent(spec: str, game: str, versions: tuple) -> Agent:
    """The agent of ``spec`` in a worker, built once per version of its checkpoint files."""
    return make_agent(spec, game)


def decide_job(spec: str, game: str, record: str, rng_state: tuple) -> tuple[int, dict[str, Any], tuple]:
    """One decision in a worker process (:mod:`climbrl.serve.workers`): the agent of ``spec``
    (its checkpoint paths already checked and absolute) at the game ``record`` (the engine's
    JSON), with the seat's random stream; returns the move's index, the reasoning and the
    stream's new state, so the game plays as it would in the server's own process."""
    versions = tuple(os.stat(m.group(2)).st_mtime_ns for m in CHECKPOINT.finditer(spec))
    agent = _worker_agent(spec, game, versions)
    g = _worker_game(game)
    decision = Decision.from_state(g.from_json(record))
    rng = random.Random()
    rng.setstate(rng_state)
    k = agent.act(decision, rng)
    return k, explain(agent, decision, k, presenter_for(g).label), rng.getstate()


class Table:
    """A game in progress; every public method holds the table's lock."""

    def __init__(self, game: str = "big2", preset: str | None = None, opponents: list[str] | None = None,
                 seat: int = 0, seed: int = 0, open_hands: bool = False, advisor: str | None = None,
                 root: str | Path | None = None, worker: Callable[..., Any] | None = None,
                 step: bool = False) -> None:
        """``root``: the project folder the specs' checkpoints are read from, only under its
        ``runs/`` and ``models/`` (:func:`climbrl.serve.specs.rooted`; ``None``: any path, from the
        working folder). ``worker``: runs a job in a worker process (:meth:`Pool.call
        <climbrl.serve.workers.Pool.call>`) for the searches' and policies' decisions; ``None``:
        every agent decides here. ``step``: the agents move one at a time, each on its own request
        (:meth:`step`; the page shows each play as it comes), not all at once before the person's
        turn."""
        if game not in DEFAULT_PRESETS:
            raise TableError(f"unknown game {game!r} (games: {', '.join(DEFAULT_PRESETS)})")
        preset = preset or DEFAULT_PRESETS[game]
        if preset not in game_presets(game):
            raise TableError(f"unknown {game} preset {preset!r} (presets: {', '.join(game_presets(game))})")
        self.full_name = f"{game}:{preset}"
        self.game = make_game(self.full_name)
        self.game_name, self.preset = game, preset
        n = self.game.num_players
        if isinstance(seat, bool) or not isinstance(seat, int) or not 0 <= seat < n:
            raise TableError(f"seat must be 0..{n - 1}, got {seat!r}")
        if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2 ** 63:
            raise TableError(f"the deal seed must be an integer 0..2^63-1, got {seed!r}")
        opponents = list(opponents or ["heuristic"])
        if len(opponents) == 1:
            opponents = opponents * (n - 1)
        if len(opponents) != n - 1:
            raise TableError(f"{game} has {n} seats: name 1 or {n - 1} opponents, got {len(opponents)}")
        root = Path(root) if root is not None else None
        self.agents: list[Agent | None] = [None] * n
        self.names = ["you"] * n
        self.specs: list[str] = [""] * n  # as built: checkpoint paths checked and absolute
        for j, spec in enumerate(opponents):  # the next seat after the person gets the first, as in a match
            s = (seat + 1 + j) % n
            self.agents[s], self.specs[s] = _build_agent(spec, self.full_name, root)
            self.names[s] = spec.strip()
        self.advisor_spec = (advisor or "").strip() or None
        self.advisor, self._advisor_built = (_build_agent(self.advisor_spec, self.full_name, root)
                                             if self.advisor_spec else (None, ""))
        self.worker = worker
        self.seat, self.seed, self.open_hands = seat, seed, bool(open_hands)
        self.stepwise = bool(step)
        self._hinter: tuple[Agent, str] | None = None
        self.presenter = presenter_for(self.game)
        self.rngs = [random.Random(seat_seed(seed, 0, seat, s)) for s in range(n)]
        self.id = secrets.token_urlsafe(12)
        self.lock = threading.Lock()
        try:
            self.state = self.game.new_game(seed=seed)
        except GameError as e:
            raise TableError(str(e)) from None
        self.events: list[dict[str, Any]] = []
        self.saved = False  # written to the record folder once over (climbrl.serve.app)
        self._landlord = -1
        self._deals = 1
        for s, move in self.state.history[:getattr(self.state, "n_auto", 0)]:  # Big 2's automatic first play
            self.events.append(self._event(s, move, None, "played automatically"))
        if self.stepwise:
            self._notes()
        else:
            self.advance()

    # --- the game -----------------------------------------------------------------------------
    @property
    def turn(self) -> int:
        """The number of moves made so far (the version a move request must name)."""
        return len(self.state.moves)

    def _event(self, seat: int, move: int, reasoning: dict | None, note: str = "", phase: str = "play") -> dict:
        return {"n": len(self.events), "seat": seat, "who": self.names[seat], "phase": phase,
                **self.presenter.move_view(move), "note": note, "reasoning": reasoning}

    def _note(self, seat: int, note: str, cards: list | None = None) -> dict[str, Any]:
        return {"n": len(self.events), "seat": seat, "who": self.names[seat] if seat >= 0 else "", "phase": "note",
                "label": "", "cards": cards or [], "pass": False, "reasoning": None, "note": note}

    def _apply(self, seat: int, decision: Decision, k: int, reasoning: dict | None) -> None:
        move = decision.moves[k]
        bidding = getattr(decision.observation, "phase", "play") == "bid"
        self.state.apply(move)
        self.events.append(self._event(seat, move, reasoning, phase="bid" if bidding else "play"))
        self._notes()

    def _notes(self) -> None:
        """Public turns of a Dou Dizhu deal: a redeal after an all-pass auction, the landlord named
        and the kitty shown."""
        st = self.state
        if self.game_name != "doudizhu":
            return
        if len(st.deals) != self._deals:
            self._deals = len(st.deals)
            self._landlord = -1
            self.events.append(self._note(-1, "every seat passed: the cards are dealt again"))
        if st.landlord >= 0 and self._landlord < 0:
            self._landlord = st.landlord
            kitty = self.presenter.hand_tokens(st.observation(self.seat).kitty)
            if st.landlord == self.seat:
                text = f"you are the landlord (stake {st.stake}) and take the kitty"
            else:
                text = (f"{self.names[st.landlord]} (seat {st.landlord}) is the landlord (stake {st.stake}) "
                        "and takes the kitty")
            self.events.append(self._note(st.landlord, text, kitty))

    def advance(self) -> None:
        """Let the agents play until it is the person's turn or the game is over."""
        st = self.state
        if self.game_name == "doudizhu":
            self._notes()
        while not st.is_terminal() and st.current_player != self.seat:
            s = st.current_player
            decision = Decision.from_state(st)
            k, reasoning = self._decide(self.agents[s], self.specs[s], decision, self.rngs[s],
                                        f"{self.names[s]} (seat {s})")
            self._apply(s, decision, k, {**reasoning, "agent": self.names[s]})

    def step(self, turn: Any) -> None:
        """One agent's move (the page's pacing: each play shown as it comes). ``turn``: the moves
        the page had seen (another number is stale, 409). Refused when it is the person's turn or
        the game is over; an agent that fails or runs out of time leaves the game as it was."""
        st = self.state
        if isinstance(turn, bool) or not isinstance(turn, int):
            raise TableError("a step names the turn it answers (an integer)")
        if turn != self.turn:
            raise StaleRequest(f"stale request: it answers move {turn}, but the game is at move {self.turn}: "
                               "the page now shows the game as it is")
        if st.is_terminal():
            raise TableError("the game is over: start a new one")
        if st.current_player == self.seat:
            raise TableError("it is your turn: the agents wait for your move")
        s = st.current_player
        decision = Decision.from_state(st)
        k, reasoning = self._decide(self.agents[s], self.specs[s], decision, self.rngs[s],
                                    f"{self.names[s]} (seat {s})")
        self._apply(s, decision, k, {**reasoning, "agent": self.names[s]})

    def _decide(self, agent: Agent, spec: str, decision: Decision, rng: random.Random,
                who: str) -> tuple[int, dict[str, Any]]:
        """The agent's move index and reasoning: in a worker process for a search or a policy
        (when the table has workers), else here."""
        try:
            if self.worker is None or not needs_worker(spec):
                k = agent.act(decision, rng)
                return k, explain(agent, decision, k, self.presenter.label)
            k, reasoning, rng_state = self.worker(decide_job, spec, self.full_name, self.state.to_json(),
                                                  rng.getstate())
            rng.setstate(rng_state)
            return k, reasoning
        except WorkerError as e:
            raise AgentTooSlow(f"{who} did not decide: {e} (a smaller search answers sooner); the game is "
                               "as it was") from None
        except JobFailed as e:
            raise AgentFailed(f"{who} could not move: {e}") from None
        except Exception as e:  # an agent that cannot play this position: the game stops, unchanged
            raise AgentFailed(f"{who} could not move: {type(e).__name__}: {e}") from None

    def move(self, turn: Any, cards: Any = None, index: Any = None) -> None:
        """The person's move: ``cards`` (tokens; ``[]`` passes) or ``index`` (into the legal moves,
        e.g. a bid). Raises :class:`TableError` (state unchanged) when it is not a legal move now."""
        st = self.state
        if st.is_terminal():
            raise TableError("the game is over: start a new one")
        if isinstance(turn, bool) or not isinstance(turn, int):
            raise TableError("a move names the turn it answers (an integer)")
        if turn != self.turn:
            raise StaleRequest(f"stale move: it answers move {turn}, but the game is at move {self.turn} "
                               "(another tab or an old page?): the page now shows the game as it is")
        decision = Decision.from_state(st)
        if (cards is None) == (index is None):
            raise TableError("a move gives either its cards or its index among the legal moves")
        if index is not None:
            if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < len(decision.moves):
                raise TableError(f"no legal move number {index!r} (0..{len(decision.moves) - 1})")
            k = index
        else:
            try:
                ks = self.presenter.select(decision, cards)
            except Refused as e:
                raise TableError(str(e)) from None
            if len(ks) > 1:
                raise TableError("these cards make several moves: choose one",
                                 options=[{"index": k, **self.presenter.move_view(decision.moves[k])} for k in ks])
            k = ks[0]
        saved = self._snapshot()
        try:
            self._apply(self.seat, decision, k, None)
            if not self.stepwise:
                self.advance()
        except TableError:  # an agent failed or ran out of time: the person's move is taken back too
            self._restore(saved)
            raise

    def _snapshot(self) -> tuple:
        return (self.state.clone(), len(self.events), [r.getstate() for r in self.rngs], self._landlord, self._deals)

    def _restore(self, saved: tuple) -> None:
        state, n_events, rngs, self._landlord, self._deals = saved
        self.state = state
        del self.events[n_events:]
        for r, st in zip(self.rngs, rngs, strict=True):
            r.setstate(st)

    def advice(self, turn: Any, hint: bool = False) -> dict[str, Any]:
        """The advisor's reasoning over the person's legal moves (its own random stream), with its
        choice (``choice``: the legal move's index and cards). ``hint``: a game without an advisor
        asks the heuristic instead (the page's *Hint*)."""
        advisor, built, name = self.advisor, self._advisor_built, self.advisor_spec
        if advisor is None and hint:
            if self._hinter is None:
                self._hinter = _build_agent("heuristic", self.full_name)
            (advisor, built), name = self._hinter, "heuristic"
        if advisor is None:
            raise TableError("this game has no advisor: choose one when you start a game")
        if self.state.is_terminal() or self.state.current_player != self.seat:
            raise TableError("it is not your turn")
        if turn != self.turn:
            raise StaleRequest(f"stale request: the game is at move {self.turn}")
        decision = Decision.from_state(self.state)
        rng = random.Random(seat_seed(self.seed, ADVICE_STREAM, self.turn, self.seat))
        k, reasoning = self._decide(advisor, built, decision, rng, f"the advisor {name}")
        return {**reasoning, "agent": name, "choice": {"index": k, **self.presenter.move_view(decision.moves[k])}}

    # --- what the person sees -------------------------------------------------------------------
    def view(self) -> dict[str, Any]:
        st, p = self.state, self.presenter
        over = st.is_terminal()
        obs = st.observation(self.seat)
        n = self.game.num_players
        reveal = over or self.open_hands
        events = [e if reveal or e["reasoning"] is None else {**e, "reasoning": None} for e in self.events]
        out: dict[str, Any] = {
            "id": self.id, "game": self.game_name, "preset": self.preset, "seat": self.seat, "seed": self.seed,
            "names": self.names, "turn": self.turn, "over": over, "open_hands": self.open_hands,
            "advisor": self.advisor_spec, "current_player": st.current_player, "stepwise": self.stepwise,
            "your_turn": not over and st.current_player == self.seat,
            "hand": p.hand_tokens(obs.hand), "cards_left": list(obs.cards_left), "events": events,
            "phase": getattr(obs, "phase", "play"),
        }
        if out["your_turn"]:
            d = Decision.from_state(st)
            out["legal"] = [{"index": i, **p.move_view(m)} for i, m in enumerate(d.moves)]
        out.update(self._table_view(obs))
        if reveal:
            out["hands"] = [p.hand_tokens(h) for h in st.hands]
        if over:
            res = st.result()
            out["result"] = {"winners": list(res.winners), "roles": list(res.roles), "returns": list(res.returns),
                             "you_won": self.seat in res.winners}
            if self.game_name == "doudizhu":
                out["result"]["score"] = st.score()
        out["roles"] = self._roles(obs, n)
        return out

    def _roles(self, obs: Any, n: int) -> list[str]:
        landlord = getattr(obs, "landlord", None)
        if landlord is None:
            return ["player"] * n
        if landlord < 0:
            return ["bidding"] * n
        return ["landlord" if s == landlord else "peasant" for s in range(n)]

    def _table_view(self, obs: Any) -> dict[str, Any]:
        """The play to beat and the game's public state (stake and bombs; the kitty once shown)."""
        p = self.presenter
        if self.game_name == "big2":
            return {"to_beat": {"seat": obs.to_beat_player, **p.move_view(obs.to_beat)} if obs.to_beat else None,
                    "trick": [{"seat": s, **p.move_view(m)} for s, m in obs.trick],
                    "must_include": p.move_tokens(obs.must_include) if obs.must_include else []}
        out = {"to_beat": {"seat": obs.to_beat_player, **p.move_view(obs.to_beat)} if obs.to_beat else None,
               "landlord": obs.landlord, "stake": obs.stake, "bombs": obs.bombs,
               "kitty": p.hand_tokens(obs.kitty) if obs.landlord >= 0 else []}
        rules = self.game.rules
        out["multiplier"] = 2 ** obs.bombs if rules.bomb_doubles else 1
        plays = [e for e in self.events if e["phase"] == "play"]
        out["trick"] = [] if not obs.to_beat else [
            {k: e[k] for k in ("seat", "label", "cards", "pass")} for e in plays[-(obs.passes + 1):]]
        out["bids"] = [{"seat": s, "label": p.label(a)} for s, a in obs.auction]
        return out

    def record(self) -> str:
        """The game as the engine's JSON (what :meth:`Game.from_json` replays); only once over,
        since it holds every hand."""
        if not self.state.is_terminal():
            raise TableError("the record holds every hand: it can be downloaded once the game is over")
        return self.state.to_json()
