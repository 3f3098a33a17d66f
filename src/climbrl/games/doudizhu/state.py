"""Dou Dizhu game state: deal, auction, play, returns, observations, JSON replay.

Seats 0..2 act in increasing order (mod 3). A game starts in the auction (:mod:`.bidding`)
unless the rules fix the landlord; the landlord then takes the 3 kitty cards (shown to all)
and leads. A trick ends after two passes in a row and its winner leads. The game ends when a
hand is empty. Moves are action ids (:mod:`.moves`); every move is checked against the legal
list and an illegal one raises :class:`IllegalMoveError` leaving the state untouched.
"""

from __future__ import annotations

import json
import threading
from typing import Any, NamedTuple

import numpy as np

from climbrl.games.base import GameError, GameOverError, GameResult, IllegalMoveError
from climbrl.games.doudizhu import combos
from climbrl.games.doudizhu.bidding import Auction
from climbrl.games.doudizhu.moves import (
    FIRST_PLAY,
    NUM_RANKS,
    TYPE_BOMB,
    CardError,
    action_table,
    format_counts,
    parse_counts,
)
from climbrl.games.doudizhu.rules import HAND_SIZE, KITTY_SIZE, NUM_PLAYERS, Rules, get_rules

BID, PLAY, OVER = 0, 1, 2
ROLES = ("landlord", "peasant_down", "peasant_up")
_play_and_generate = combos.play_and_generate
PHASES = ("bid", "play", "over")
_TLS = threading.local()


def _buffer() -> np.ndarray:
    """This thread's output buffer for the move generator (its result is copied out at once)."""
    try:
        return _TLS.buf
    except AttributeError:
        _TLS.buf = np.empty(combos.MAX_LEGAL_MOVES, dtype=np.int32)
        return _TLS.buf


_FULL = np.array([4] * 13 + [1, 1], dtype=np.int8)
_RANK_OF_CARD = np.array([c // 4 for c in range(52)] + [13, 14], dtype=np.int64)
_SLOT_OFFSET = np.array([NUM_RANKS * (j // HAND_SIZE) for j in range(54)], dtype=np.int64)  # 3 = kitty
_OPENSPIEL_RANK = [c % 13 for c in range(52)] + [13, 14]  # its card id: rank id % 13, suit id // 13


def deal(seed: int, number: int = 0) -> tuple[list[np.ndarray], np.ndarray, int]:
    """Deal ``number`` (0 first, then redeals) of ``seed``: three 17-card hands, the kitty and
    the first bidder, from a permutation of the 54 cards by numpy's PCG64."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise GameError(f"seed must be a non-negative integer, got {seed!r}")
    bitgen = np.random.PCG64(int(seed) if number == 0 else np.random.SeedSequence([int(seed), number]))
    rng = np.random.Generator(bitgen)
    # positions 17p .. 17p+16 are seat p's hand, 51..53 the kitty: one bincount for all four
    counts = np.bincount(_RANK_OF_CARD[rng.permutation(54)] + _SLOT_OFFSET, minlength=4 * NUM_RANKS)
    counts = counts.astype(np.int8).reshape(4, NUM_RANKS)
    return [counts[0], counts[1], counts[2]], counts[3], int(rng.integers(NUM_PLAYERS))


def openspiel_deal(chance: list[int]) -> tuple[list[np.ndarray], np.ndarray, int]:
    """Hands, kitty and first bidder from OpenSpiel's chance actions: the face-up position k
    (0..50), then 51 deals ``51 + card`` (card j goes to seat j % 3; the seat dealt card k
    bids first; the 3 cards never dealt are the kitty)."""
    if len(chance) != 52 or not 0 <= chance[0] <= 50:
        raise GameError("an OpenSpiel deal is a face-up position 0..50 and 51 deal actions")
    cards = [a - 51 for a in chance[1:]]
    if sorted(cards) != sorted(set(cards)) or not all(0 <= c < 54 for c in cards):
        raise GameError("OpenSpiel deal actions must name 51 distinct cards 0..53")
    hands = [np.zeros(NUM_RANKS, dtype=np.int8) for _ in range(3)]
    for j, c in enumerate(cards):
        hands[j % 3][_OPENSPIEL_RANK[c]] += 1
    kitty = np.zeros(NUM_RANKS, dtype=np.int8)
    for c in set(range(54)) - set(cards):
        kitty[_OPENSPIEL_RANK[c]] += 1
    return hands, kitty, chance[0] % 3


class DdzObservation(NamedTuple):
    """What one seat knows: its own hand and the public record, never another seat's cards.

    Card sets are 15 rank counts (``3..A, 2, B, R``); moves are action ids.
    """

    seat: int
    phase: str
    hand: tuple[int, ...]
    cards_left: tuple[int, int, int]
    current_player: int
    landlord: int  # -1 during the auction
    kitty: tuple[int, ...]  # all zero until the landlord takes it (then shown to all)
    auction: tuple[tuple[int, int], ...]  # (seat, action) of this deal's auction
    stake: int
    to_beat: int  # the action id on the table, 0 when leading
    to_beat_player: int
    passes: int
    bombs: int
    played: tuple[tuple[int, ...], ...]  # rank counts each seat has played
    history: tuple[tuple[int, int], ...]  # (seat, action id) of this deal's plays


class DdzState:
    """A Dou Dizhu game in progress. Create with :meth:`DdzGame.new_game`."""

    __slots__ = (
        "game", "seed", "deals", "hands", "kitty", "left", "phase", "auction", "landlord", "stake",
        "player", "prev", "prev_player", "passes", "bombs", "plays", "played", "history",
        "auction_history", "actions", "winner", "_legal",
    )

    num_players = NUM_PLAYERS

    def __init__(self, game: DdzGame, hands: list[np.ndarray], kitty: np.ndarray, first: int,
                 seed: int | None) -> None:
        self.game = game
        self.seed = seed
        self.deals: list[tuple[bytes, bytes, int]] = []  # (hands, kitty, first bidder) as dealt
        self.actions: list[int] = []
        self._start_deal(hands, kitty, first)

    def _start_deal(self, hands: list[np.ndarray], kitty: np.ndarray, first: int) -> None:
        rules = self.game.rules
        self.hands = np.array(hands, dtype=np.int8)
        self.kitty = np.array(kitty, dtype=np.int8)
        self.deals.append((self.hands.tobytes(), self.kitty.tobytes(), first))
        self.left = [HAND_SIZE] * NUM_PLAYERS
        self.played = np.zeros((NUM_PLAYERS, NUM_RANKS), dtype=np.int8)
        self.prev = 0
        self.prev_player = -1
        self.passes = 0
        self.bombs = 0
        self.plays = [0, 0, 0]
        self.history: list[tuple[int, int]] = []
        self.auction_history: list[tuple[int, int]] = []
        self.winner = -1
        self.landlord = -1
        self.stake = 0
        self._legal: list[int] | None = None
        if rules.landlord is not None:
            self.auction = None
            self._start_play(rules.landlord, rules.base_stake)
        else:
            self.auction = Auction(rules, first)
            self.phase = BID
            self.player = first

    def _start_play(self, landlord: int, stake: int) -> None:
        self.landlord = landlord
        self.stake = stake
        self.hands[landlord] += self.kitty
        self.left[landlord] += KITTY_SIZE
        self.phase = PLAY
        self.player = landlord

    # --- protocol ----------------------------------------------------------------------------
    @property
    def rules(self) -> Rules:
        return self.game.rules

    @property
    def current_player(self) -> int:
        return -1 if self.phase == OVER else self.player

    def is_terminal(self) -> bool:
        return self.phase == OVER

    def legal_moves(self) -> list[int]:
        """Legal action ids of the seat to act, ascending; [] at the end. Do not modify it."""
        legal = self._legal
        if legal is None:
            if self.phase == PLAY:
                buf = _buffer()
                n = combos.generate_moves(self.hands[self.player], self.prev, self.game.packed, buf)
                legal = buf[:n].tolist()
            elif self.phase == BID:
                legal = self.auction.legal()
            else:
                legal = []
            self._legal = legal
        return legal

    def legal_features(self) -> tuple[list[int], list[int], list[int]]:
        """(action ids, types, main ranks) of the legal moves: a bid's type is 0 (as a pass) and
        its "main rank" is the bid itself (1..3 call score, 4 call, 5 rob)."""
        legal = self.legal_moves()
        game = self.game
        return legal, [game.types[m] for m in legal], [game.powers[m] for m in legal]

    def apply(self, move: int, seat: int | None = None) -> None:
        """Make ``move`` (an action id) for the seat to act; illegal moves raise, changing nothing."""
        legal = self._legal
        if legal is None:
            legal = self.legal_moves()
        # fast path: a plain int among the legal ids (none once the game is over), no seat given
        if type(move) is not int or seat is not None or move not in legal:
            move = self._checked(move, seat)
        self.actions.append(move)
        if self.phase == PLAY:
            self._play(move)
        else:
            self._legal = None
            self._bid(move)

    def _checked(self, move: Any, seat: int | None) -> int:
        """The full check of :meth:`apply`: ``move`` as an int if legal, else the error."""
        if self.phase == OVER:
            raise GameOverError("the game is over: no more moves")
        if seat is not None and seat != self.player:
            raise IllegalMoveError(f"seat {seat} moved out of turn: seat {self.player} is to act")
        if isinstance(move, bool) or not isinstance(move, (int, np.integer)) or move not in self.legal_moves():
            raise IllegalMoveError(self._illegal_reason(move))
        return int(move)

    def apply_text(self, text: str, seat: int | None = None) -> None:
        """Apply a move written as in :meth:`DdzGame.parse_move`."""
        self.apply(self.game.parse_move(text), seat)

    def _illegal_reason(self, move: Any) -> str:
        seat = self.player
        if isinstance(move, bool) or not isinstance(move, (int, np.integer)):
            return f"a move is an action id (int), got {type(move).__name__}"
        move = int(move)
        t = self.game.table
        if not 0 <= move < t.n_ids:
            return f"unknown action id {move} (ids are 0..{t.n_ids - 1})"
        name = self.game.format_move(move)
        if self.phase == BID:
            return f"seat {seat} may not {name} in the auction (legal: {self.auction.legal()})"
        if 0 < move < FIRST_PLAY:
            return f"{name} is an auction action: the auction is over"
        if move == 0:
            return f"seat {seat} may not pass: it leads the trick"
        if np.any(t.counts[move] > self.hands[seat]):
            return f"seat {seat} does not hold {name}"
        if not self.game.allowed[move]:
            return f"{name} ({t.moves[move].type_name}) is not a move under {self.rules.name} rules"
        if self.prev:
            return f"{name} does not beat {self.game.format_move(self.prev)}"
        return f"{name} is not a legal move here"

    def _bid(self, move: int) -> None:
        a = self.auction
        self.auction_history.append((self.player, move))
        a.apply(move)
        if not a.done:
            self.player = a.player
            return
        if a.landlord >= 0:
            self._start_play(a.landlord, a.stake)
            return
        rules = self.rules
        if rules.all_pass == "forced":
            self._start_play(self.deals[-1][2], rules.base_stake)
        elif rules.all_pass == "redeal" and len(self.deals) <= rules.max_redeals:
            self._start_deal(*deal(self.seed if self.seed is not None else 0, len(self.deals)))
        else:
            self.phase = OVER

    def _play(self, move: int) -> None:
        """Play a legal ``move``; one compiled call moves the cards and lists the next legal moves."""
        p = self.player
        self.history.append((p, move))
        game = self.game
        if move == 0:
            if self.passes:  # the second pass in a row ends the trick
                self.prev = 0
                self.prev_player = -1
                self.passes = 0
            else:
                self.passes = 1
        else:
            left = self.left
            left[p] -= game.ncards[move]
            self.plays[p] += 1
            if game.types[move] >= TYPE_BOMB:
                self.bombs += 1
            self.prev = move
            self.prev_player = p
            self.passes = 0
            if left[p] == 0:
                _play_and_generate(self.hands, self.played, p, move, p, 0, game.packed, _buffer())
                self.winner = p
                self.phase = OVER
                self._legal = []
                return
        nxt = self.player = p + 1 if p < 2 else 0
        buf = _buffer()
        self._legal = buf[:_play_and_generate(self.hands, self.played, p, move, nxt, self.prev, game.packed,
                                              buf)].tolist()

    # --- results ------------------------------------------------------------------------------
    @property
    def moves(self) -> list[int]:
        """Every action so far (auction and play, across redeals), in order."""
        return self.actions

    def cards_left(self) -> list[int]:
        return list(self.left)

    def roles(self) -> tuple[str, ...]:
        """Each seat's role: ``landlord``, ``peasant_down`` (acts right after the landlord) and
        ``peasant_up`` (right before it); ``none`` for every seat before there is a landlord."""
        if self.landlord < 0:
            return ("none",) * NUM_PLAYERS
        return tuple(ROLES[(s - self.landlord) % NUM_PLAYERS] for s in range(NUM_PLAYERS))

    def result(self) -> GameResult:
        """The landlord alone or both peasants win; nobody when the deal ended without a landlord."""
        if self.phase != OVER:
            raise GameError("the game is not over: no result yet")
        if self.winner < 0:
            winners: tuple[int, ...] = ()
        elif self.winner == self.landlord:
            winners = (self.landlord,)
        else:
            winners = tuple(s for s in range(NUM_PLAYERS) if s != self.landlord)
        return GameResult(winners, self.roles(), tuple(self.returns()))

    def spring(self) -> bool:
        """Spring (the peasants never played) or anti-spring (the landlord played only once)."""
        if self.winner < 0:
            return False
        peasants = sum(self.plays) - self.plays[self.landlord]
        return (self.winner == self.landlord and peasants == 0) or (
            self.winner != self.landlord and self.plays[self.landlord] == 1)

    def score(self) -> dict[str, Any]:
        """The breakdown of the result: stake, bombs, spring, multiplier, pay, winner."""
        rules = self.rules
        spring = self.spring()
        mult = (2 ** self.bombs if rules.bomb_doubles else 1) * (2 if spring and rules.spring_doubles else 1)
        return {
            "landlord": self.landlord, "winner": self.winner, "stake": self.stake, "bombs": self.bombs,
            "spring": spring, "multiplier": mult, "pay": self.stake * mult,
            "landlord_won": self.winner >= 0 and self.winner == self.landlord,
            "deals": len(self.deals),
        }

    def returns(self) -> list[float]:
        if self.winner < 0:
            return [0.0] * NUM_PLAYERS
        won = self.winner == self.landlord
        if self.rules.reward == "win_loss":
            return [float(won if s == self.landlord else not won) for s in range(NUM_PLAYERS)]
        pay = float(self.score()["pay"])
        sign = 1.0 if won else -1.0
        return [2 * sign * pay if s == self.landlord else -sign * pay for s in range(NUM_PLAYERS)]

    # --- observations ---------------------------------------------------------------------------
    def observation(self, seat: int) -> DdzObservation:
        if isinstance(seat, bool) or not isinstance(seat, (int, np.integer)) or not 0 <= seat < NUM_PLAYERS:
            raise GameError(f"seat must be 0..2, got {seat!r}")
        shown = self.phase != BID
        return DdzObservation(
            seat=seat,
            phase=PHASES[self.phase],
            hand=tuple(self.hands[seat].tolist()),
            cards_left=tuple(self.left),
            current_player=self.current_player,
            landlord=self.landlord,
            kitty=tuple(self.kitty.tolist()) if shown and self.landlord >= 0 else (0,) * NUM_RANKS,
            auction=tuple(self.auction_history),
            stake=self.stake,
            to_beat=self.prev,
            to_beat_player=self.prev_player,
            passes=self.passes,
            bombs=self.bombs,
            played=tuple(tuple(r) for r in self.played.tolist()),
            history=tuple(self.history),
        )

    # --- copying and serialization --------------------------------------------------------------
    def clone(self) -> DdzState:
        new = object.__new__(DdzState)
        for name in self.__slots__:
            setattr(new, name, getattr(self, name))
        new.hands = self.hands.copy()
        new.kitty = self.kitty.copy()
        new.played = self.played.copy()
        new.left = list(self.left)
        new.plays = list(self.plays)
        new.history = list(self.history)
        new.auction_history = list(self.auction_history)
        new.actions = list(self.actions)
        new.deals = list(self.deals)
        new.auction = self.auction.clone() if self.auction is not None else None
        return new

    def _key(self) -> tuple:
        out = []
        for n in self.__slots__:
            if n in ("_legal", "game"):
                continue
            v = getattr(self, n)
            out.append(v.tobytes() if isinstance(v, np.ndarray) else v)
        return (*out, self.game.rules)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, DdzState) and self._key() == other._key()

    __hash__ = None  # mutable

    def to_json(self) -> str:
        hands, kitty, first_bidder = self.deals[0]
        return json.dumps({
            "game": "doudizhu",
            "version": 1,
            "rules": self.rules.to_dict(),
            "seed": self.seed,
            "deal": {"hands": [format_counts(h) for h in np.frombuffer(hands, np.int8).reshape(3, NUM_RANKS)],
                     "kitty": format_counts(np.frombuffer(kitty, np.int8)), "first_bidder": first_bidder},
            "moves": [self.game.format_move(m) for m in self.actions],
        })

    def __repr__(self) -> str:
        hands = " | ".join(format_counts(h) for h in self.hands)
        return (f"DdzState(rules={self.rules.name}, phase={PHASES[self.phase]}, landlord={self.landlord}, "
                f"player={self.current_player}, to_beat={self.game.format_move(self.prev)}, hands=[{hands}])")


class DdzGame:
    """Dou Dizhu under one rule set: deals games and reads them back from JSON."""

    name = "doudizhu"
    num_players = NUM_PLAYERS
    teams = (("landlord",), ("peasant_down", "peasant_up"))

    def __init__(self, rules: Rules | str = "standard", **overrides: Any) -> None:
        self.rules = get_rules(rules, **overrides)
        self.table = action_table()
        self.packed = combos.packed_table(self.rules)
        self.allowed = self.packed[self.packed[combos.H_ALLOWED]:][: self.table.n_ids]
        self.types = self.table.type.tolist()
        self.powers = self.table.main.tolist()
        self.powers[1:FIRST_PLAY] = list(range(1, FIRST_PLAY))
        self.ncards = self.table.ncards.tolist()

    def __repr__(self) -> str:
        return f"DdzGame({self.rules.name!r})"

    @property
    def zero_sum(self) -> bool:
        return self.rules.zero_sum

    @property
    def num_actions(self) -> int:
        return self.table.num_actions(self.rules)

    @property
    def roles(self) -> tuple[str, ...]:
        return ROLES if self.rules.landlord is not None else ("none", *ROLES)

    @property
    def phases(self) -> tuple[str, ...]:
        return ("play",) if self.rules.landlord is not None else ("bid", "play")

    @property
    def num_distinct_actions(self) -> int:
        return self.num_actions

    @property
    def max_legal_moves(self) -> int:
        return combos.MAX_LEGAL_MOVES

    def action_id(self, move: int) -> int:
        if isinstance(move, bool) or not isinstance(move, (int, np.integer)) or not 0 <= move < self.num_actions:
            raise GameError(f"{move!r} is no action of {self.rules.name} Dou Dizhu (ids 0..{self.num_actions - 1})")
        return int(move)

    def move_of(self, action_id: int) -> int:
        return self.action_id(action_id)

    def move_size(self, move: int) -> int:
        """The number of cards of action ``move`` (0 for a pass or an auction action)."""
        return self.ncards[move]

    def new_game(self, seed: int | None = None, hands: list[Any] | None = None, kitty: Any = None,
                 first_bidder: int = 0) -> DdzState:
        """A game dealt from ``seed``, or from explicit ``hands`` (three 17-card strings or rank
        counts), ``kitty`` (3 cards) and ``first_bidder``. Redeals draw from ``seed`` (0 if none)."""
        if hands is None:
            if seed is None:
                raise GameError("give a seed or the hands")
            h, k, first = deal(seed)
        else:
            h, k, first = self._check_deal(hands, kitty, first_bidder)
        return DdzState(self, h, k, first, seed)

    @staticmethod
    def _check_deal(hands: list[Any], kitty: Any, first: int) -> tuple[list[np.ndarray], np.ndarray, int]:
        if len(hands) != NUM_PLAYERS:
            raise GameError(f"a deal has {NUM_PLAYERS} hands, got {len(hands)}")
        if kitty is None:
            raise GameError("a deal from explicit hands needs the kitty")
        counts = [parse_counts(h, f"hand {i}") if isinstance(h, str) else np.asarray(h, dtype=np.int8)
                  for i, h in enumerate(hands)]
        k = parse_counts(kitty, "kitty") if isinstance(kitty, str) else np.asarray(kitty, dtype=np.int8)
        for i, c in enumerate(counts):
            if c.shape != (NUM_RANKS,) or c.min() < 0 or int(c.sum()) != HAND_SIZE:
                raise CardError(f"hand {i} must hold {HAND_SIZE} cards, got {format_counts(c)!r}")
        if k.shape != (NUM_RANKS,) or k.min() < 0 or int(k.sum()) != KITTY_SIZE:
            raise CardError(f"the kitty must hold {KITTY_SIZE} cards")
        total = sum(counts) + k
        if not np.array_equal(total, _FULL):
            from climbrl.games.doudizhu.moves import RANKS
            bad = [RANKS[r] for r in range(NUM_RANKS) if total[r] != _FULL[r]]
            raise CardError(f"the deal is not one deck: wrong number of {', '.join(bad)}")
        if isinstance(first, bool) or not isinstance(first, (int, np.integer)) or not 0 <= first < 3:
            raise GameError(f"first_bidder must be a seat 0..2, got {first!r}")
        return counts, k, int(first)

    @property
    def max_game_length(self) -> int:
        # per deal: an auction of at most 9 actions (until_passes: each round a higher bid or
        # it ends) and plays: 54 cards, each play followed by at most 2 passes
        return (self.rules.max_redeals + 1) * (9 + 3 * 54)

    @property
    def returns_sum(self) -> float | None:
        """0 when zero-sum; ``None`` when the sum varies (``win_loss``: 1 or 2)."""
        return 0.0 if self.zero_sum else None

    def format_move(self, move: int) -> str:
        if move == 0:
            return "pass"
        if 1 <= move <= 3:
            return f"bid{move}"
        if move == 4:
            return "call"
        if move == 5:
            return "rob"
        return self.table.moves[move].label

    def parse_move(self, text: str, what: str = "move") -> int:
        """An action id from ``pass``, ``bid1``..``bid3``, ``call``, ``rob``, a label
        (``333444-57``) or cards (``33344``; an error when the cards are several moves); ``what``
        names the input in errors (``--prev``)."""
        s = text.strip()
        low = s.lower()
        if low in ("pass", ""):
            return 0
        names = {"bid1": 1, "bid2": 2, "bid3": 3, "call": 4, "rob": 5}
        if low in names:
            return names[low]
        if "-" in s:
            i = self.table.id_of_label(s.upper())
            if i is None:
                raise CardError(f"{text!r} is not a plane with wings (write 'PLANE-WINGS', e.g. 333444-57)")
            return i
        ids = combos.classify(parse_counts(s, what), self.rules)
        if not ids:
            raise CardError(f"{text!r} is not a combination under {self.rules.name} rules")
        if len(ids) > 1:
            raise CardError(f"{text!r} is {len(ids)} moves here: name one as "
                            + " or ".join(self.table.moves[i].label for i in ids))
        return ids[0]

    def from_json(self, text: str | dict[str, Any]) -> DdzState:
        """Replay a game written by :meth:`DdzState.to_json`; every move is checked."""
        data = json.loads(text) if isinstance(text, str) else text
        if data.get("game") != "doudizhu":
            raise GameError(f"not a Dou Dizhu game record (game={data.get('game')!r})")
        if Rules.from_dict(data["rules"]) != self.rules:
            raise GameError("the record's rules differ from this game's rules")
        d = data["deal"]
        state = self.new_game(seed=data.get("seed"), hands=d["hands"], kitty=d["kitty"],
                              first_bidder=d["first_bidder"])
        for i, text_move in enumerate(data["moves"]):
            try:
                state.apply(self.parse_move(text_move))
            except (IllegalMoveError, CardError) as e:
                raise GameError(f"move {i} of the record is illegal: {e}") from None
        return state


def load_game(text: str) -> DdzState:
    """Replay a JSON game record under the rules it names."""
    data = json.loads(text)
    return DdzGame(Rules.from_dict(data["rules"])).from_json(data)


def hands_at(final: DdzState, obs: DdzObservation) -> np.ndarray | None:
    """Every seat's hand (rank counts, [3, 15]) at the moment of ``obs``, read from the finished
    game ``final`` of the same deal: what each seat holds at the end plus what it played since
    (the landlord's hand has held the kitty since play began). Only a play-phase observation of
    ``final``'s last deal has one; anything else (an auction decision, a deal redealt since) is
    ``None``. Training-time only (issue 46's hidden-card signals): an agent never sees it."""
    if obs.phase != "play" or obs.landlord != final.landlord:
        return None
    hands = final.hands.astype(np.int16) + final.played - np.asarray(obs.played, dtype=np.int16)
    if hands.min() < 0 or not np.array_equal(hands[obs.seat], obs.hand):
        return None
    return hands


__all__ = ["DdzGame", "DdzState", "DdzObservation", "deal", "openspiel_deal", "load_game", "hands_at"]
