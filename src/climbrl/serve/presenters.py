"""Each game's cards and moves as the page shows them, and the person's selection read back.

A card on the page is a token: Big 2's are the card ids ``"c0".."c51"`` (rank and suit), Dou
Dizhu's are a rank and a copy number (``"7#0"``, ``"7#1"``; the game has no suits, so two 7s are
the same card). A selection is a list of tokens; :meth:`Presenter.select` turns it into the legal
moves it makes, or raises :class:`Refused` with the reason a person can act on: cards not held,
no combination, a combination that does not beat the table, a pass where the seat leads.
A Dou Dizhu selection can be several moves (a plane with wings read two ways); the caller then
offers each.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from climbrl.cards import RANKS as BIG2_RANKS
from climbrl.cards import SUIT_SYMBOLS, SUITS, format_cards, mask_to_cards, rank_of, suit_of
from climbrl.games.base import GameError


class Refused(ValueError):
    """The person's selection is not a legal move (the message says why)."""


class Presenter:
    """The interface; :func:`presenter_for` picks the game's."""

    game: Any

    def hand_tokens(self, hand: Any) -> list[dict[str, str]]:
        """The cards of a hand, lowest first: ``{"id", "rank", "suit", "label"}``."""
        raise NotImplementedError

    def move_tokens(self, move: int) -> list[dict[str, str]]:
        """The cards a move plays (empty for a pass or an auction action)."""
        raise NotImplementedError

    def label(self, move: int) -> str:
        raise NotImplementedError

    def select(self, decision: Any, tokens: Sequence[str]) -> list[int]:
        """The indices (into ``decision.moves``) of the legal moves these cards make."""
        raise NotImplementedError

    def move_view(self, move: int) -> dict[str, Any]:
        return {"label": self.label(move), "cards": self.move_tokens(move), "pass": move == 0}


def _check_tokens(tokens: Sequence[str]) -> None:
    if not isinstance(tokens, (list, tuple)) or not all(isinstance(t, str) for t in tokens):
        raise Refused("a selection is a list of card tokens")
    if len(set(tokens)) != len(tokens):
        raise Refused("the selection names a card twice")


class Big2Presenter(Presenter):
    def __init__(self, game: Any) -> None:
        self.game = game

    @staticmethod
    def _token(c: int) -> dict[str, str]:
        return {"id": f"c{c}", "rank": BIG2_RANKS[rank_of(c)], "suit": SUITS[suit_of(c)],
                "label": BIG2_RANKS[rank_of(c)] + SUIT_SYMBOLS[suit_of(c)]}

    def hand_tokens(self, hand: int) -> list[dict[str, str]]:
        return [self._token(c) for c in mask_to_cards(hand)]

    def move_tokens(self, move: int) -> list[dict[str, str]]:
        return self.hand_tokens(move)

    def label(self, move: int) -> str:
        return format_cards(move, symbols=True) if move else "pass"

    def select(self, decision: Any, tokens: Sequence[str]) -> list[int]:
        _check_tokens(tokens)
        mask = 0
        for t in tokens:
            if not (t.startswith("c") and t[1:].isascii() and t[1:].isdigit() and 0 <= int(t[1:]) < 52):
                raise Refused(f"unknown card {t!r}")
            mask |= 1 << int(t[1:])
        if mask in decision.moves:
            return [decision.moves.index(mask)]
        raise Refused(self._why_not(decision, mask))

    def _why_not(self, d: Any, mask: int) -> str:
        from climbrl.games.big2.combos import INVALID, TYPE_NAMES, classify

        obs, rules = d.observation, self.game.rules
        if mask == 0:
            return "you lead this trick: you cannot pass" if obs.leading else "pass is not allowed here"
        if mask & ~obs.hand:
            return f"you do not hold {format_cards(mask & ~obs.hand, symbols=True)}"
        if d.moves == [0]:
            return "you passed earlier in this trick: you can only pass until it ends"
        typ, cls, power = classify(mask, rules)
        cards = format_cards(mask, symbols=True)
        if typ == INVALID:
            return f"{cards} is not a combination under the {rules.name} rules"
        if obs.must_include and not mask & obs.must_include:
            return f"the first play must include {format_cards(obs.must_include, symbols=True)}"
        if not obs.leading:
            t_typ, t_cls, t_power = classify(obs.to_beat, rules)
            table = f"{TYPE_NAMES[t_typ]} {format_cards(obs.to_beat, symbols=True)}"
            if cls != t_cls:
                return f"a {TYPE_NAMES[typ]} cannot answer the {table}: play the same kind of combination, or pass"
            if power <= t_power:
                return f"{cards} does not beat the {table}"
        return f"{cards} is not a legal move here"


DDZ_LABELS = {"B": "BJ", "R": "RJ"}


class DdzPresenter(Presenter):
    def __init__(self, game: Any) -> None:
        from climbrl.games.doudizhu.moves import RANKS

        self.game = game
        self.ranks = RANKS

    def _tokens_of_counts(self, counts: Sequence[int]) -> list[dict[str, str]]:
        out = []
        for r, n in enumerate(counts):
            rank = self.ranks[r]
            for k in range(int(n)):
                out.append({"id": f"{rank}#{k}", "rank": rank, "suit": "",
                            "label": DDZ_LABELS.get(rank, "10" if rank == "T" else rank)})
        return out

    def hand_tokens(self, hand: Sequence[int]) -> list[dict[str, str]]:
        return self._tokens_of_counts(hand)

    def move_counts(self, move: int) -> list[int]:
        from climbrl.games.doudizhu.moves import FIRST_PLAY, NUM_RANKS, parse_counts

        if move < FIRST_PLAY:
            return [0] * NUM_RANKS
        return parse_counts(self.game.table.moves[move].cards).tolist()

    def move_tokens(self, move: int) -> list[dict[str, str]]:
        return self._tokens_of_counts(self.move_counts(move))

    def label(self, move: int) -> str:
        from climbrl.games.doudizhu.moves import FIRST_PLAY

        if move < FIRST_PLAY:
            return {0: "pass", 1: "bid 1", 2: "bid 2", 3: "bid 3", 4: "call landlord", 5: "rob landlord"}[move]
        from climbrl.games.doudizhu.moves import parse_counts

        m = self.game.table.moves[move]
        main = m.cards_main if m.wings else m.cards
        text = self._text(parse_counts(main))
        if m.wings:
            text += " + " + self._text(parse_counts(m.wings))
        return f"{text} ({m.type_name.replace('_', ' ')})"

    def select(self, decision: Any, tokens: Sequence[str]) -> list[int]:
        from climbrl.games.doudizhu import combos
        from climbrl.games.doudizhu.moves import NUM_RANKS

        _check_tokens(tokens)
        if getattr(decision.observation, "phase", "play") == "bid":
            raise Refused("the auction is on: bid or pass with the buttons")
        counts = [0] * NUM_RANKS
        for t in tokens:
            rank, sep, k = t.partition("#")
            if not sep or rank not in self.ranks or not (k.isascii() and k.isdigit()) or len(rank) != 1:
                raise Refused(f"unknown card {t!r}")
            counts[self.ranks.index(rank)] += 1
        hand = decision.observation.hand
        if any(c > h for c, h in zip(counts, hand, strict=True)):
            missing = [max(0, c - h) for c, h in zip(counts, hand, strict=True)]
            raise Refused(f"you do not hold {self._text(missing)}")
        if not any(counts):
            if 0 in decision.moves:
                return [decision.moves.index(0)]
            raise Refused("you lead this trick: you cannot pass")
        import numpy as np

        try:
            ids = combos.classify(np.array(counts, dtype=np.int8), self.game.rules)
        except GameError as e:
            raise Refused(str(e)) from None
        legal = [decision.moves.index(i) for i in ids if i in decision.moves]
        if legal:
            return legal
        text = self._text(counts)
        if not ids:
            raise Refused(f"{text} is not a combination under the {self.game.rules.name} rules")
        to_beat = decision.observation.to_beat
        if to_beat:
            raise Refused(f"{text} does not beat the {self.label(to_beat)} on the table")
        raise Refused(f"{text} is not a legal move here")

    def _text(self, counts: Sequence[int]) -> str:
        return " ".join(t["label"] for t in self._tokens_of_counts(counts))


def presenter_for(game: Any) -> Presenter:
    return Big2Presenter(game) if game.name == "big2" else DdzPresenter(game)
