"""RLCard's Dou Dizhu rule agent (``doudizhu-rule-v1``, PyPI ``rlcard`` 1.2.0) as an opponent.

An optional extra: ``pip install -e '.[rlcard]'``. Building the agent checks that ``rlcard`` is
installed (without it :class:`RLCardMissingError` names that command) but does not import it:
``rlcard`` is imported at the agent's first decision. Importing it imports torch (RLCard's DQN
agent), about 2 s here, and every Dou Dizhu stage builds the agents of its params to check them
before any work (:mod:`climbrl.params`), most of them without playing this one.

The agent is RLCard's own code, ``rlcard.models.doudizhu_rule_models.DouDizhuRuleAgentV1``: this
adapter only builds the state its ``step(state)`` expects from the climbrl :class:`Decision` and
maps the action string it returns back to the index of a legal move. The state is what RLCard's
``DoudizhuEnv._extract_state`` hands an agent (``state['raw_obs']`` is ``DoudizhuPlayer.get_state``),
built from the seat's own observation only (own hand + the public record):

=====================  ============================================================================
``raw_obs`` key        value (RLCard's card strings: ranks ``3456789TJQKA2BR`` sorted low to high)
=====================  ============================================================================
``self``               the seat
``landlord``           the landlord's seat
``current_hand``       the seat's hand
``trace``              every play of the deal in order, ``(seat, cards or 'pass')`` (passes included)
``played_cards``       per seat, the cards it has played (``''`` for none)
``num_cards_left``     per seat, the cards it holds
``others_hand``        the union of the two other hands. RLCard shows it to every seat; it is
                       public knowledge (the 54 cards less the seat's hand and every card played),
                       and computed here from exactly that, never from the other hands
``seen_cards``         the kitty, less every rank the landlord has played since (RLCard's
                       ``round.update_public`` removes every copy of a played rank from it)
``actions``            the legal moves as card strings (``'pass'`` when following)
=====================  ============================================================================

The top level also holds ``raw_legal_actions`` (the same list). ``obs`` and ``legal_actions``
(RLCard's encoded vectors and its action ids, for its learning agents) are left out: the rule
agent reads only ``raw_obs`` (``trace``, ``current_hand``, ``actions``, ``landlord``, ``self``).

The order of ``actions`` is RLCard's (the rule agent depends on it, see below):

- Following (``'pass'`` offered), RLCard's list is ``utils.get_gt_cards``: ``'pass'``, then the
  moves of the type to beat, then the rocket, then the bombs (after a bomb: the higher bombs,
  then the rocket), each group in the order of RLCard's ``TYPE_CARD`` table (its
  ``type_card.json``: by weight, then as the file lists them). That order is fixed, not a
  hash order, and the list here is exactly that one. Within a weight the file mostly lists
  moves rank by rank, but not for planes with solo wings (``trio_solo_chain_N``): there the
  wings holding a joker come first (``'3334445B'`` before ``'33344455'``). Following, the
  agent keeps the first move of the lowest weight among those of the type to beat, so on
  ``'33344456'``, holding ``555666`` + ``77`` + ``B``, it plays ``'5556667B'`` in RLCard (and
  here); the sorted list this adapter used before gave ``'55566677'``. The agent itself never
  leads a winged plane, so in rule-vs-rule games the two orders play the same moves (no
  decision differed in 5,000 games); they differ only against agents that lead one.
- Leading, RLCard's list is the ``set`` of ``judger.playable_cards_from_hand`` turned into a
  list, so its order follows the string-hash seed. The agent never reads it on a lead (it plays
  from ``combine_cards(current_hand)``), so here it is sorted as the shared reference games
  sort it (``'pass'`` first when offered, then by length, then rank by rank) and a game depends
  only on its seeds.

Given the same deals and draws, the agent plays every decision as in RLCard's own environment:
``tests/test_rlcard_agent.py`` replays the shared ``measured.json`` rule-vs-rule run (RLCard's
env, seed 0, 1000 games) on this engine, state equal at every decision, and its landlord wins
the same 454. That 0.454 [0.423, 0.485] is one 1000-deal sample: RLCard's own engine gives
0.488 [0.482, 0.494] over 24,000 fresh deals, this adapter 0.493 [0.479, 0.506] over 5,000
(``climbrl duel``, seeds 515151, 1-4: 0.517, 0.511, 0.485, 0.452, 0.498). Its one draw,
``np.random.choice(actions)`` on numpy's global generator (when following with no move of the
type to beat, unless a peasant follows its partner), is seeded here from the seat's
``random.Random`` (one 32-bit draw per decision) around each call, and the global state restored
afterwards, so other users of ``np.random`` are not disturbed.

Moves back: the chosen string names a multiset of ranks; its move is the legal id with those
cards. Under RLCard's rules every card string is one move. If rules allowed a trio of solo
wings next to a plane, a string could be several ids (``333444555666``); the lowest legal id is
taken then, but such rules are refused anyway (see below). A string that is no legal move, or
``None``, raises :class:`RLCardAgentError` naming the move and the hand.

Rules: the agent plays only where RLCard's game would be the same game: a fixed landlord (RLCard
has no auction, so an auction is refused rather than guessed) and exactly RLCard's moves (the
``rlcard`` preset's combinations, no OpenSpiel faults). Scoring knobs (``reward``, doubling) do
not matter to it. So ``rlcard`` and ``douzero`` (and either with other scoring or another fixed landlord
seat) are accepted; ``standard``, ``openspiel`` and ``online`` are refused with an error.
"""

from __future__ import annotations

import importlib.util
import random
from functools import lru_cache
from typing import Any

import numpy as np

from climbrl.agents.base import Agent, Decision
from climbrl.games.doudizhu.moves import NUM_RANKS, RANKS, action_table, allowed_mask, format_counts
from climbrl.games.doudizhu.rules import Rules, get_rules

RLCARD_VERSION = "1.2.0"
INSTALL_HINT = "pip install -e '.[rlcard]'"
SPEC = "rlcard-rule"
_FULL_DECK = np.array([4] * 13 + [1, 1], dtype=np.int64)
_RANK_INDEX = {r: i for i, r in enumerate(RANKS)}


class RLCardMissingError(ImportError):
    """The optional ``rlcard`` package is not installed."""


class RLCardAgentError(ValueError):
    """Rules the agent cannot play, or a choice of RLCard's agent that is not a legal move."""


def _missing(why: object) -> str:
    return f"RLCard's rule agent needs the optional package rlcard=={RLCARD_VERSION} ({why}): {INSTALL_HINT}"


def rlcard_missing() -> str | None:
    """``None`` when ``rlcard`` is installed, else one line: what is missing and how to install it.
    The package is found on the path, not imported (see the module docstring); one that is found
    but fails to import raises :class:`RLCardMissingError` at :func:`load_rule_agent`."""
    try:
        found = importlib.util.find_spec("rlcard") is not None  # None too when sys.modules holds None
    except (ImportError, ValueError) as e:
        return _missing(e)
    return None if found else _missing("No module named 'rlcard'")


def load_rule_agent() -> Any:
    """A fresh ``DouDizhuRuleAgentV1`` (what ``rlcard.models.load('doudizhu-rule-v1').agents[0]``
    is, without building an RLCard env)."""
    if missing := rlcard_missing():
        raise RLCardMissingError(missing)
    try:
        from rlcard.models.doudizhu_rule_models import DouDizhuRuleAgentV1
    except ImportError as e:
        raise RLCardMissingError(_missing(e)) from e
    return DouDizhuRuleAgentV1()


def rules_problem(rules: Rules) -> str | None:
    """Why the agent cannot play under ``rules`` (``None`` when it can)."""
    if rules.landlord is None:
        return (f"RLCard's rule agent has no auction: rules {rules.name!r} bid for the landlord; "
                "use rules with a fixed landlord (the 'rlcard' preset)")
    ref = get_rules("rlcard")
    if rules.bombs_beat_rocket or rules.chain_skips_quad_head or not np.array_equal(
            allowed_mask(rules), allowed_mask(ref)):
        return (f"RLCard's rule agent plays RLCard's combinations only: rules {rules.name!r} allow other moves; "
                "use the 'rlcard' preset")
    return None


@lru_cache(maxsize=1)
def _strings() -> list[str]:
    """RLCard's card string of every action id (``'pass'`` for id 0)."""
    t = action_table()
    return ["pass"] + [format_counts(t.counts[i]) for i in range(1, t.n_ids)]


def _sort_key(s: str) -> tuple:
    return (0, ()) if s == "pass" else (1, len(s), tuple(_RANK_INDEX[c] for c in s))


@lru_cache(maxsize=1)
def _rlcard_order() -> tuple[dict[str, int], dict[str, str]]:
    """RLCard's ``TYPE_CARD`` flattened: each card string's position (type, weight, then the
    file's order within a weight) and its type (under RLCard every string has exactly one)."""
    if missing := rlcard_missing():
        raise RLCardMissingError(missing)
    try:
        from rlcard.games.doudizhu.utils import TYPE_CARD
    except ImportError as e:
        raise RLCardMissingError(_missing(e)) from e
    position: dict[str, int] = {}
    kind: dict[str, str] = {}
    for card_type, by_weight in TYPE_CARD.items():
        for cards in by_weight.values():
            for c in cards:
                position.setdefault(c, len(position))
                kind.setdefault(c, card_type)
    return position, kind


def follow_order(actions: list[str], target: str) -> list[str]:
    """``actions`` (the legal moves when following ``target``) in the order RLCard's
    ``utils.get_gt_cards`` lists them: ``'pass'``, the moves of ``target``'s type, the rocket,
    the bombs (for a bomb target: the bombs, then the rocket); each group in ``TYPE_CARD``
    order."""
    position, kind = _rlcard_order()
    groups = {"rocket": 2, "bomb": 3, kind[target]: 1}  # a bomb target: bombs first, then the rocket

    def key(a: str) -> tuple[int, int]:
        return (0, 0) if a == "pass" else (groups[kind[a]], position[a])

    return sorted(actions, key=key)


def lead_order(actions: list[str]) -> list[str]:
    """``actions`` on a lead: sorted (RLCard's order is a string-hash order the agent never reads)."""
    return sorted(actions, key=_sort_key)


def _cards(counts: Any) -> str:
    return "".join(RANKS[r] * int(counts[r]) for r in range(NUM_RANKS))


def seen_cards(kitty: Any, history: Any, landlord: int) -> str:
    """RLCard's ``seen_cards``: the kitty, less every copy of each rank the landlord has played."""
    seen = _cards(kitty)
    strings = _strings()
    for seat, move in history:
        if seat == landlord and move:
            for c in strings[move]:
                seen = seen.replace(c, "")
    return seen


def rlcard_state(decision: Decision) -> dict[str, Any]:
    """The state RLCard's env gives the seat to act (layout in the module docstring)."""
    obs = decision.observation
    strings = _strings()
    hand = np.asarray(obs.hand, dtype=np.int64)
    played = np.asarray(obs.played, dtype=np.int64)
    unseen = _FULL_DECK - hand - played.sum(axis=0)
    actions = list(dict.fromkeys(strings[m] for m in decision.moves))
    actions = follow_order(actions, strings[obs.to_beat]) if obs.to_beat else lead_order(actions)
    raw = {
        "seen_cards": seen_cards(obs.kitty, obs.history, obs.landlord),
        "landlord": obs.landlord,
        "trace": [(seat, strings[m]) for seat, m in obs.history],
        "played_cards": [_cards(p) for p in played],
        "self": obs.seat,
        "current_hand": _cards(hand),
        "others_hand": _cards(unseen),
        "num_cards_left": list(obs.cards_left),
        "actions": actions,
    }
    return {"raw_obs": raw, "raw_legal_actions": list(actions)}


class RLCardRuleAgent(Agent):
    """RLCard 1.2.0's ``DouDizhuRuleAgentV1`` through :func:`rlcard_state` (spec ``rlcard-rule``)."""

    games = ("doudizhu",)
    name = SPEC

    def __init__(self, game: str | None = None) -> None:
        """``game``: a game name with its preset (``doudizhu:rlcard``) to refuse other rules at
        once; every decision is checked again against its game's rules."""
        preset = (game or "").partition(":")[2]
        if preset and (why := rules_problem(get_rules(preset))):
            raise RLCardAgentError(why)
        if missing := rlcard_missing():
            raise RLCardMissingError(missing)
        self._agent: Any = None
        self._checked: Rules | None = None

    @property
    def agent(self) -> Any:
        """RLCard's agent, loaded at the first decision (the module docstring says why)."""
        if self._agent is None:
            self._agent = load_rule_agent()
        return self._agent

    def _check(self, decision: Decision) -> None:
        rules = decision.game.rules
        if rules is self._checked:
            return
        if decision.observation.phase != "play":
            raise RLCardAgentError("RLCard's rule agent has no auction: it plays only the play phase")
        if why := rules_problem(rules):
            raise RLCardAgentError(why)
        self._checked = rules

    def choose(self, decision: Decision, rng: random.Random) -> str:
        """RLCard's action string for ``decision`` (its global numpy draw seeded from ``rng``)."""
        state = rlcard_state(decision)
        agent = self.agent  # loaded (at the first decision) before the global generator is seeded
        saved = np.random.get_state()
        np.random.seed(rng.getrandbits(32))
        try:
            action = agent.step(state)
        finally:
            np.random.set_state(saved)
        return action

    def act(self, decision: Decision, rng: random.Random) -> int:
        self._check(decision)
        action = self.choose(decision, rng)
        strings = _strings()
        if isinstance(action, (str, np.str_)):
            action = str(action)
            for k, m in enumerate(decision.moves):  # ascending ids: the lowest id with these cards
                if strings[m] == action:
                    return k
        obs = decision.observation
        raise RLCardAgentError(
            f"RLCard's rule agent chose {action!r}, not a legal move for seat {obs.seat} holding "
            f"{_cards(obs.hand)!r} (legal: {', '.join(strings[m] for m in decision.moves)})")


__all__ = ["RLCardRuleAgent", "RLCardMissingError", "RLCardAgentError", "rlcard_state", "rlcard_missing",
           "rules_problem", "load_rule_agent", "follow_order", "lead_order", "SPEC", "INSTALL_HINT"]
