"""Big 2 game state: deal, turn order, legal moves, apply, returns, observations, JSON.

A move is the 52-bit mask of the cards played (``0`` is a pass). Seats are 0..3 and play in
increasing order (mod 4). A trick ends when the turn would come back to the seat that made
its last play: that seat then leads a new trick (with ``pass_locks_out``, seats that passed
are skipped until the trick ends). The game ends as soon as a seat has no cards left.

Finishing order: the seat that went out, then the others by fewest cards left, ties broken
by turn order after the winner. Returns: ``rank`` rewards by that order, or ``cards``
scoring (each loser pays its cards left times the multiplier, the winner collects the total).
"""

from __future__ import annotations

import json
import threading
from typing import Any, NamedTuple

import numpy as np

from climbrl.cards import (
    FULL_DECK,
    CardError,
    format_cards,
    parse_mask,
)
from climbrl.games.base import GameError, GameOverError, GameResult, IllegalMoveError
from climbrl.games.big2 import combos
from climbrl.games.big2.actions import ActionTable, action_table
from climbrl.games.big2.rules import HAND_SIZE, NUM_PLAYERS, Rules, get_rules

_TLS = threading.local()


def _buffer() -> np.ndarray:
    buf = getattr(_TLS, "buf", None)
    if buf is None:
        buf = _TLS.buf = np.empty((3, combos.MAX_LEGAL_MOVES + 1), dtype=np.int64)
    return buf


def deal(seed: int) -> list[int]:
    """Four 13-card hands (masks) dealt from ``seed`` (a permutation by numpy's PCG64)."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise GameError(f"seed must be a non-negative integer, got {seed!r}")
    perm = np.random.Generator(np.random.PCG64(int(seed))).permutation(52)
    hands = []
    for p in range(NUM_PLAYERS):
        m = 0
        for c in perm[p * HAND_SIZE:(p + 1) * HAND_SIZE]:
            m |= 1 << int(c)
        hands.append(m)
    return hands


class Big2Observation(NamedTuple):
    """What one seat knows: its own hand and the public record, never another seat's cards.

    Masks are 52-bit card masks (see :mod:`climbrl.cards`). ``must_include`` (the card the
    first play must contain) is shown only to the seat that must play it.
    """

    seat: int
    hand: int
    cards_left: tuple[int, int, int, int]
    current_player: int
    leading: bool
    to_beat: int
    to_beat_type: int
    to_beat_power: int  # its power within its comparison class (see combos)
    to_beat_player: int
    passes: int
    locked_out: int
    must_include: int
    played: tuple[int, int, int, int]
    types_played: tuple[int, int, int, int]  # per seat, bit ``type`` set for each type it played
    trick: tuple[tuple[int, int], ...]
    history: tuple[tuple[int, int], ...]


class Big2State:
    """A Big 2 game in progress. Create with :meth:`Big2Game.new_game`."""

    __slots__ = (
        "game", "hands", "player", "last_mask", "last_type", "last_cls", "last_power",
        "last_player", "locked", "must", "passes", "history", "n_auto", "trick_start",
        "winner", "deal_hands", "seed", "played", "types_played", "_legal",
    )

    num_players = NUM_PLAYERS

    def __init__(self, game: Big2Game, hands: list[int], seed: int | None = None) -> None:
        self.game = game
        self.deal_hands = tuple(hands)
        self.seed = seed
        self.hands = list(hands)
        rules = game.rules
        start = 1 << rules.starting_card_id
        holder = next(p for p in range(NUM_PLAYERS) if hands[p] & start)
        self.player = holder
        self.last_mask = 0
        self.last_type = combos.PASS
        self.last_cls = 0
        self.last_power = -1
        self.last_player = -1
        self.locked = 0
        self.must = start if rules.start_mode == "must_include" else 0
        self.passes = 0
        self.history: list[tuple[int, int]] = []
        self.played = [0, 0, 0, 0]
        self.types_played = [0, 0, 0, 0]
        self.n_auto = 0
        self.trick_start = 0
        self.winner = -1
        self._legal: tuple[list[int], list[int], list[int]] | None = None
        if rules.start_mode == "auto_play":
            self.n_auto = 1
            self._play(start, combos.SINGLE, 1, game.strength[rules.starting_card_id])

    # --- protocol ----------------------------------------------------------------------------
    @property
    def current_player(self) -> int:
        return -1 if self.winner >= 0 else self.player

    @property
    def rules(self) -> Rules:
        return self.game.rules

    def is_terminal(self) -> bool:
        return self.winner >= 0

    def legal_moves(self) -> list[int]:
        """Legal moves of the seat to act in canonical order (see :mod:`.combos`); [] at the end.

        The returned list is shared with the state's cache: do not modify it.
        """
        return self._legal_lists()[0]

    def legal_features(self) -> tuple[list[int], list[int], list[int]]:
        """(masks, types, powers) of the legal moves (shared with the cache: do not modify)."""
        return self._legal_lists()

    def legal_move_details(self) -> list[tuple[int, int, int]]:
        """(mask, type, power) of each legal move, in the order of :meth:`legal_moves`."""
        masks, types, powers = self._legal_lists()
        return list(zip(masks, types, powers, strict=True))

    def _legal_lists(self) -> tuple[list[int], list[int], list[int]]:
        legal = self._legal
        if legal is None:
            if self.winner >= 0:
                legal = ([], [], [])
            else:
                buf = _buffer()
                n = combos.generate_moves(
                    self.hands[self.player], self.last_cls, self.last_power, self.must,
                    self.last_cls != 0, self.game.tables, buf,
                )
                legal = buf[:, :n].tolist()
            self._legal = legal
        return legal

    def apply(self, move: int, seat: int | None = None) -> None:
        """Play ``move`` (a card mask, 0 = pass) for the seat to act.

        ``seat``, when given, must be the seat to act. Raises :class:`IllegalMoveError` (the
        state is unchanged) if the move is not legal or it is not that seat's turn.
        """
        if self.winner >= 0:
            raise GameOverError("the game is over: no more moves")
        if seat is not None and seat != self.player:
            raise IllegalMoveError(f"seat {seat} moved out of turn: seat {self.player} is to act")
        masks, types, powers = self._legal_lists()
        try:
            i = masks.index(move)
        except ValueError:
            raise IllegalMoveError(self._illegal_reason(move)) from None
        if move == 0:
            self._pass()
        else:
            self._play(move, types[i], self.last_cls or combos.combo_cls(types[i], move.bit_count()),
                       powers[i])

    def apply_cards(self, text: str, seat: int | None = None) -> None:
        """Apply a move written as cards (``"5D 5S"``) or ``"pass"``."""
        self.apply(self.game.parse_move(text), seat)

    def _illegal_reason(self, move: Any) -> str:
        seat = self.player
        if not isinstance(move, (int, np.integer)) or isinstance(move, bool):
            return f"a move is a card mask (int), got {type(move).__name__}"
        move = int(move)
        if move < 0 or move > FULL_DECK:
            return f"invalid card mask {move}"
        text = format_cards(move) or "pass"
        if move == 0:
            return f"seat {seat} may not pass: it leads the trick"
        if move & ~self.hands[seat]:
            return f"seat {seat} does not hold {format_cards(move & ~self.hands[seat])} (move {text})"
        typ, cls, power = combos.classify(move, self.rules)
        if typ == combos.INVALID:
            return f"{text} is not a combination under {self.rules.name} rules"
        if self.must and not move & self.must:
            return f"the first play must include {format_cards(self.must)}"
        if self.last_cls:
            if cls != self.last_cls:
                return f"{text} ({combos.TYPE_NAMES[typ]}) cannot meet {format_cards(self.last_mask)}"
            return f"{text} does not beat {format_cards(self.last_mask)}"
        return f"{text} is not a legal move here"

    def _pass(self) -> None:
        self.history.append((self.player, 0))
        self.passes += 1
        if self.game.locks:
            self.locked |= 1 << self.player
        self._advance()

    def _play(self, mask: int, typ: int, cls: int, power: int) -> None:
        p = self.player
        self.history.append((p, mask))
        self.hands[p] ^= mask
        self.played[p] |= mask
        self.types_played[p] |= 1 << typ
        self.last_mask = mask
        self.last_type = typ
        self.last_cls = cls
        self.last_power = power
        self.last_player = p
        self.passes = 0
        self.must = 0
        if self.hands[p] == 0:
            self.winner = p
            self._legal = None
            return
        self._advance()

    def _advance(self) -> None:
        nxt = (self.player + 1) & 3
        locked = self.locked
        while locked >> nxt & 1 and nxt != self.last_player:
            nxt = (nxt + 1) & 3
        if nxt == self.last_player:
            self.last_mask = 0
            self.last_type = combos.PASS
            self.last_cls = 0
            self.last_power = -1
            self.locked = 0
            self.passes = 0
            self.trick_start = len(self.history)
        self.player = nxt
        self._legal = None

    # --- results ------------------------------------------------------------------------------
    def cards_left(self) -> list[int]:
        return [h.bit_count() for h in self.hands]

    def finishing_order(self) -> list[int]:
        """Seats from first to last place (only meaningful once the game is over)."""
        if self.winner < 0:
            raise GameError("the game is not over: no finishing order yet")
        w = self.winner
        others = [(w + k) % NUM_PLAYERS for k in range(1, NUM_PLAYERS)]
        left = self.cards_left()
        return [w] + sorted(others, key=lambda s: left[s])  # stable: turn order breaks ties

    def result(self) -> GameResult:
        """The seat that went out first wins; every seat plays for itself."""
        if self.winner < 0:
            raise GameError("the game is not over: no result yet")
        return GameResult((self.winner,), ("player",) * NUM_PLAYERS, tuple(self.returns()))

    def returns(self) -> list[float]:
        if self.winner < 0:
            return [0.0] * NUM_PLAYERS
        rules = self.rules
        if rules.reward == "rank":
            out = [0.0] * NUM_PLAYERS
            for place, seat in enumerate(self.finishing_order()):
                out[seat] = float(rules.rank_rewards[place])
            return out
        out = [0.0] * NUM_PLAYERS
        left = self.cards_left()
        for s in range(NUM_PLAYERS):
            if s != self.winner:
                out[s] = -float(rules.card_penalty(left[s]))
        out[self.winner] = -sum(out)
        return out

    # --- observations ---------------------------------------------------------------------------
    def observation(self, seat: int) -> Big2Observation:
        if not 0 <= seat < NUM_PLAYERS:
            raise GameError(f"seat must be 0..3, got {seat}")
        hist = tuple(self.history)
        return Big2Observation(
            seat=seat,
            hand=self.hands[seat],
            cards_left=tuple(h.bit_count() for h in self.hands),
            current_player=self.current_player,
            leading=self.last_cls == 0 and self.winner < 0,
            to_beat=self.last_mask,
            to_beat_type=self.last_type,
            to_beat_power=self.last_power if self.last_cls else 0,
            to_beat_player=self.last_player if self.last_cls else -1,
            passes=self.passes,
            locked_out=self.locked,
            must_include=self.must if seat == self.player else 0,
            played=tuple(self.played),
            types_played=tuple(self.types_played),
            trick=hist[self.trick_start:],
            history=hist,
        )

    # --- copying and serialization --------------------------------------------------------------
    def clone(self) -> Big2State:
        new = object.__new__(Big2State)
        for name in self.__slots__:
            setattr(new, name, getattr(self, name))
        new.hands = list(self.hands)
        new.history = list(self.history)
        new.played = list(self.played)
        new.types_played = list(self.types_played)
        return new

    def _key(self) -> tuple:
        return tuple(getattr(self, n) for n in self.__slots__ if n not in ("_legal", "game")) + (
            self.game.rules,
        )

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Big2State) and self._key() == other._key()

    __hash__ = None  # mutable

    @property
    def moves(self) -> list[int]:
        """The decisions made so far (auto-played cards excluded), in order."""
        return [m for _, m in self.history[self.n_auto:]]

    def to_json(self) -> str:
        return json.dumps(
            {
                "game": "big2",
                "version": 1,
                "rules": self.rules.to_dict(),
                "seed": self.seed,
                "deal": [format_cards(h).split() for h in self.deal_hands],
                "moves": [format_cards(m).split() for m in self.moves],
            }
        )

    def __repr__(self) -> str:
        hands = " | ".join(format_cards(h) for h in self.hands)
        return (
            f"Big2State(rules={self.rules.name}, player={self.current_player}, "
            f"to_beat={format_cards(self.last_mask) or '-'}, hands=[{hands}])"
        )


class Big2Game:
    """Big 2 under one rule set: deals games and reads them back from JSON."""

    name = "big2"
    roles = ("player",)
    teams = (("player",),)
    phases = ("play",)
    num_players = NUM_PLAYERS

    def __init__(self, rules: Rules | str = "paper", **overrides: Any) -> None:
        self.rules = get_rules(rules, **overrides)
        self.tables = combos.rule_tables(self.rules)
        self.strength = self.tables[combos.T_STRENGTH:combos.T_STRENGTH + 52].tolist()
        self.locks = self.rules.pass_locks_out

    def __repr__(self) -> str:
        return f"Big2Game({self.rules.name!r})"

    def new_game(self, seed: int | None = None, hands: list[int] | None = None) -> Big2State:
        """A game dealt from ``seed``, or from explicit ``hands`` (four 13-card masks)."""
        if hands is None:
            if seed is None:
                raise GameError("give a seed or the hands")
            hands = deal(seed)
        else:
            hands = self._check_hands(hands)
        return Big2State(self, hands, seed)

    @staticmethod
    def _check_hands(hands: list[int] | list[str]) -> list[int]:
        if len(hands) != NUM_PLAYERS:
            raise GameError(f"a deal has {NUM_PLAYERS} hands, got {len(hands)}")
        masks = [parse_mask(h, HAND_SIZE) if isinstance(h, str) else int(h) for h in hands]
        seen = 0
        for i, m in enumerate(masks):
            if m < 0 or m > FULL_DECK or m.bit_count() != HAND_SIZE:
                raise GameError(f"hand {i} must hold {HAND_SIZE} cards")
            if m & seen:
                raise CardError(f"card {format_cards(m & seen)} dealt twice (hand {i})")
            seen |= m
        return masks

    @property
    def max_game_length(self) -> int:
        # every trick holds at most 3 passes per play and at most 49 cards are played
        return 4 * 49

    @property
    def returns_sum(self) -> float:
        return self.rules.returns_sum

    @property
    def zero_sum(self) -> bool:
        return self.rules.returns_sum == 0

    @property
    def max_legal_moves(self) -> int:
        return combos.MAX_LEGAL_MOVES

    @staticmethod
    def move_size(move: int) -> int:
        """The number of cards of ``move`` (0 for a pass)."""
        return move.bit_count()

    @property
    def actions(self) -> ActionTable:
        """The dense action ids of these rules (:mod:`.actions`; built on first use, cached)."""
        return action_table(self.rules)

    @property
    def num_distinct_actions(self) -> int:
        """Pass plus every combination these rules allow (see :mod:`.actions` for the counts)."""
        return action_table(self.rules).size

    def action_id(self, move: int) -> int:
        """The dense id of ``move`` (a card mask, 0 = pass); :class:`GameError` naming the move
        when it is no combination under these rules."""
        return action_table(self.rules).id_of(move)

    def move_of(self, action_id: int) -> int:
        """The card mask with dense id ``action_id``; :class:`GameError` when out of range."""
        return action_table(self.rules).mask_of(action_id)

    def format_move(self, move: int) -> str:
        return format_cards(move) if move else "pass"

    def parse_move(self, text: str) -> int:
        if text.strip().lower() == "pass":
            return 0
        return parse_mask(text)

    def from_json(self, text: str | dict[str, Any]) -> Big2State:
        """Replay a game written by :meth:`Big2State.to_json`; every move is checked."""
        data = json.loads(text) if isinstance(text, str) else text
        if data.get("game") != "big2":
            raise GameError(f"not a Big 2 game record (game={data.get('game')!r})")
        rules = Rules.from_dict(data["rules"])
        if rules != self.rules:
            raise GameError("the record's rules differ from this game's rules")
        state = self.new_game(seed=data.get("seed"), hands=[" ".join(h) for h in data["deal"]])
        for i, cards in enumerate(data["moves"]):
            move = parse_mask(" ".join(cards)) if cards else 0
            try:
                state.apply(move)
            except IllegalMoveError as e:
                raise GameError(f"move {i} of the record is illegal: {e}") from None
        return state


def load_game(text: str) -> Big2State:
    """Replay a JSON game record under the rules it names."""
    data = json.loads(text)
    return Big2Game(Rules.from_dict(data["rules"])).from_json(data)


def hands_at(final: Big2State, obs: Big2Observation) -> list[int] | None:
    """Every seat's hand (card masks) at the moment of ``obs``, read from the finished game
    ``final`` of the same deal: what each seat holds at the end plus what it played since;
    ``None`` when the seat's own hand does not match (not this deal). Training-time only
    (issue 46's hidden-card signals): an agent never sees it."""
    hands = [(h | p) & ~o for h, p, o in zip(final.hands, final.played, obs.played, strict=True)]
    return hands if hands[obs.seat] == obs.hand else None


__all__ = ["Big2Game", "Big2State", "Big2Observation", "deal", "load_game", "hands_at"]
