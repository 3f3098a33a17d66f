"""Self-play data: the learner's decisions from lockstep games, as flat arrays.

The batched runner is :func:`climbrl.agents.runner.play_games`, which evaluation uses too:
many games advance in lockstep, each agent (the learner, frozen snapshots, rule agents) scores
all of its waiting decisions in one call. :class:`Collector` listens to it and keeps what the
learner's :class:`~climbrl.learn.policy.PolicyAgent` encoded and chose; :meth:`Collector.build`
orders the decisions by game, seat and time and attaches rewards.

Rewards: the seat's terminal return under the rules (Big 2: rank rewards by default) at its last
decision, or the encoder's card-count score with ``card_score_reward``; with ``reward_shaping``,
the encoder's per-decision shaping term (Big 2: +0.05 at a decision where the seat leads after
winning a trick, -0.02 where its last play in the current trick has been beaten). With active
:class:`~climbrl.encoders.base.RewardTerms` (Dou Dizhu's ``reward_cards_left``,
``reward_bombs_kept``, ``reward_partner_win``, ``reward_guide``), the encoder's ``final_reward`` turns
that terminal value into the seat's final reward, and the terms that reward decisions (``reward_guide``,
``reward_pass_penalty``) add the encoder's ``step_reward`` at each decision; with none active neither
is called, so the rewards are the ones from before the terms existed. The game's rewards live with its encoder
(:mod:`climbrl.encoders`), so this module knows no game.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from climbrl.agents.base import Agent, Decision
from climbrl.agents.bidding import routed
from climbrl.agents.runner import play_games
from climbrl.encoders.base import RewardTerms
from climbrl.learn.policy import PolicyAgent


@dataclass
class Rollout:
    """Decisions of the learner, ordered by game, seat and time."""

    states: np.ndarray  # [D, STATE_DIM]
    moves: np.ndarray  # [R, MOVE_DIM]
    offsets: np.ndarray  # [D + 1] legal moves of decision d: rows offsets[d]:offsets[d + 1]
    picks: np.ndarray  # [D] index of the chosen move among the decision's legal moves
    logp: np.ndarray  # [D] behaviour log-probability (sampling policies)
    rewards: np.ndarray  # [D] reward received after the decision
    dones: np.ndarray  # [D] the seat's last decision of the game
    games: int
    outcomes: np.ndarray | None = None
    """[number of dones] the rules' return of each (game, seat) the learner played, in the order of
    its last decisions (before any reward term or objective: what the curriculum's win rates count)."""
    hidden: np.ndarray | None = None
    """[D, H] the other seats' hands at each decision (the encoder's
    :meth:`~climbrl.encoders.base.Encoder.hidden_targets`), collected only for the training
    signals of issue 46 (``aux_hidden_coef``, ``oracle_critic``); never an input of the policy."""
    hidden_mask: np.ndarray | None = None
    """[D] whether decision ``d`` has hidden targets (Dou Dizhu: not in the auction)."""

    @classmethod
    def concat(cls, parts: list[Rollout]) -> Rollout:
        """The rollout of consecutive slices of games, in their order (each part ordered by game,
        seat and time, so the whole is too)."""
        if not parts:
            raise ValueError("no rollouts to join")
        starts = np.cumsum([0] + [int(p.offsets[-1]) for p in parts[:-1]])
        return cls(
            states=np.concatenate([p.states for p in parts]), moves=np.concatenate([p.moves for p in parts]),
            offsets=np.concatenate([parts[0].offsets[:1]]
                                   + [p.offsets[1:] + s for p, s in zip(parts, starts, strict=True)]),
            picks=np.concatenate([p.picks for p in parts]), logp=np.concatenate([p.logp for p in parts]),
            rewards=np.concatenate([p.rewards for p in parts]), dones=np.concatenate([p.dones for p in parts]),
            games=sum(p.games for p in parts),
            outcomes=_joined([p.outcomes for p in parts]), hidden=_joined([p.hidden for p in parts]),
            hidden_mask=_joined([p.hidden_mask for p in parts]),
        )

    @property
    def size(self) -> int:
        return len(self.picks)

    def next_index(self) -> np.ndarray:
        """Index of the same seat's next decision (-1 after its last one)."""
        nxt = np.arange(1, self.size + 1, dtype=np.int64)
        nxt[self.dones] = -1
        return nxt

    def chosen_rows(self) -> np.ndarray:
        return self.offsets[:-1] + self.picks

    def segments(self) -> np.ndarray:
        return np.repeat(np.arange(self.size, dtype=np.int64), np.diff(self.offsets))

    def discounted_returns(self, gamma: float) -> np.ndarray:
        """Return of the rest of the game from each decision (discounted per own decision)."""
        out = np.zeros(self.size, dtype=np.float32)
        running = 0.0
        for i in range(self.size - 1, -1, -1):
            if self.dones[i]:
                running = 0.0
            running = self.rewards[i] + gamma * running
            out[i] = running
        return out


def _joined(arrays: list[np.ndarray | None]) -> np.ndarray | None:
    """The parts' arrays end to end, or ``None`` unless every part has one."""
    return np.concatenate(arrays) if all(a is not None for a in arrays) else None


def collect(game: Any, seatings: Sequence[Sequence[Agent]], seeds: Sequence[int], seat_seeds: Sequence[Sequence[int]],
            learner: PolicyAgent, shaping: bool = False, card_score: bool = False,
            terms: RewardTerms | None = None, hidden: bool = False) -> tuple[Rollout, int]:
    """Play the games (:func:`~climbrl.agents.runner.play_games`) and return the learner's
    decisions and the number of decisions of every seat (what an actor process does; the
    training process plays its own games so, with the bid routing of :mod:`climbrl.learn.bidding`).
    ``hidden``: with the decisions' hidden targets (:class:`Collector`)."""
    collector = Collector(learner, shaping=shaping, terms=terms, hidden=hidden)
    states = play_games(game, seatings, seeds, seat_seeds, on_step=collector)
    return collector.build(states, card_score=card_score, terms=terms), sum(len(s.moves) for s in states)


class Collector:
    """Records the decisions of one learner agent during :func:`~climbrl.agents.runner.play_games`."""

    def __init__(self, learner: PolicyAgent, shaping: bool = False, terms: RewardTerms | None = None,
                 hidden: bool = False) -> None:
        """``terms``: the encoder's reward terms; those that reward decisions (the guide's, the
        pass penalty) are added at each decision here, the terminal ones in :meth:`build`.
        ``hidden``: keep each decision's observation, so that :meth:`build` can read the other
        seats' hands at that decision from the finished game (issue 46's training signals; the
        runner tells listeners nothing else, and a run without them keeps no observation)."""
        self.learner = learner
        self.shaping = shaping
        self.steps = terms if terms is not None and terms.steps_active() else None
        self.chunks: list[dict] = []
        self.index: dict[tuple[int, int], list[tuple[int, int, float]]] = {}
        self.observations: dict[tuple[int, int], list[Any]] | None = {} if hidden else None

    def __call__(self, agent: Agent, gis: list[int], decisions: list[Decision], picks: list[int]) -> None:
        for sub, g2, d2, _ in routed(agent, gis, decisions, picks):  # a BiddingAgent's play part
            if sub is self.learner:
                self._record(sub, g2, d2)

    def _record(self, agent: PolicyAgent, gis: list[int], decisions: list[Decision]) -> None:
        assert agent.last is not None
        c = len(self.chunks)
        self.chunks.append(agent.last)
        encoder = self.learner.encoder
        for b, (g, d) in enumerate(zip(gis, decisions, strict=True)):
            bonus = encoder.shaping(d) if self.shaping else 0.0
            if self.steps is not None:
                bonus += encoder.step_reward(d, int(agent.last["picks"][b]), self.steps)
            self.index.setdefault((g, d.seat), []).append((c, b, bonus))
            if self.observations is not None:
                self.observations.setdefault((g, d.seat), []).append(d.observation)

    def final_reward(self, state, seat: int, card_score: bool = False, terms: RewardTerms | None = None) -> float:
        """The seat's final reward of a finished game: the rules' return (or the card score), its
        sign with ``terms.win``, with the encoder's terminal reward ``terms`` when any is on."""
        encoder = self.learner.encoder
        final = encoder.card_score(state, seat) if card_score else state.returns()[seat]
        if terms is not None and terms.win:
            final = float(np.sign(final))
        if terms is not None and terms.active():
            final = encoder.final_reward(state, seat, final, terms)
        return final

    def build(self, final_states: list, card_score: bool = False, terms: RewardTerms | None = None) -> Rollout:
        """The recorded decisions ordered by game, seat and time, with their rewards (and their
        hidden targets when the collector keeps observations)."""
        states, moves, offsets, picks, logp, rewards, dones, outcomes = [], [], [0], [], [], [], [], []
        total = 0
        for g, seat in sorted(self.index):
            steps = self.index[(g, seat)]
            final = self.final_reward(final_states[g], seat, card_score, terms)
            outcomes.append(final_states[g].returns()[seat])
            for k, (c, b, bonus) in enumerate(steps):
                ch = self.chunks[c]
                states.append(ch["states"][b])
                lo, hi = ch["offsets"][b], ch["offsets"][b + 1]
                moves.append(ch["moves"][lo:hi])
                total += hi - lo
                offsets.append(total)
                picks.append(ch["picks"][b])
                logp.append(ch["logp"][b])
                last = k == len(steps) - 1
                rewards.append(bonus + (final if last else 0.0))
                dones.append(last)
        if not picks:
            raise RuntimeError("the learner made no decision in these games")
        hidden = self._hidden(final_states) if self.observations is not None else (None, None)
        return Rollout(
            states=np.stack(states), moves=np.concatenate(moves), offsets=np.array(offsets, dtype=np.int64),
            picks=np.array(picks, dtype=np.int64), logp=np.array(logp, dtype=np.float32),
            rewards=np.array(rewards, dtype=np.float32), dones=np.array(dones, dtype=bool),
            games=len(final_states), outcomes=np.array(outcomes, dtype=np.float32),
            hidden=hidden[0], hidden_mask=hidden[1],
        )

    def _hidden(self, final_states: list) -> tuple[np.ndarray, np.ndarray]:
        """The hidden targets and their mask, in :meth:`build`'s order of the decisions."""
        assert self.observations is not None
        encoder = self.learner.encoder
        pairs = [encoder.hidden_targets(final_states[g], obs)
                 for g, seat in sorted(self.index) for obs in self.observations[(g, seat)]]
        return (np.stack([p[0] for p in pairs]).astype(np.float32, copy=False),
                np.array([p[1] for p in pairs], dtype=bool))
