"""The auction that picks the landlord (see :mod:`.rules` for the knobs).

Actions are the action table's ids: 0 pass, 1..3 bid 1..3 (call score), 4 call landlord and
5 rob landlord (rob auction).

Call score, ``bid_rounds="once"``: from the first bidder, each seat speaks once; a bid must top
the highest so far; a bid of 3 ends the auction; the highest bidder is landlord.
``bid_rounds="until_passes"`` (OpenSpiel): seats speak in turn until two passes follow a bid
(a seat that passed may bid later); three passes before any bid is an all-pass.

Rob: from the first bidder, each seat may call landlord until one does. Then each later seat
that did not decline to call may rob it (each rob doubles the stake); if anyone robbed, the
caller may rob back last. The last to call or rob is landlord.
"""

from __future__ import annotations

from climbrl.games.base import IllegalMoveError
from climbrl.games.doudizhu.rules import NUM_PLAYERS, Rules

PASS, CALL, ROB = 0, 4, 5


class Auction:
    """One auction in progress; ``done`` once decided (``landlord`` -1 when all passed)."""

    __slots__ = ("rules", "player", "turns", "highest", "bidder", "passes", "declined", "queue",
                 "caller", "robs", "final", "done", "landlord")

    def __init__(self, rules: Rules, first: int) -> None:
        self.rules = rules
        self.player = first
        self.turns = 0
        self.highest = 0
        self.bidder = -1
        self.passes = 0
        self.declined = 0
        self.queue: list[int] = []
        self.caller = -1
        self.robs = 0
        self.final = False
        self.done = False
        self.landlord = -1

    def clone(self) -> Auction:
        new = object.__new__(Auction)
        for name in self.__slots__:
            setattr(new, name, getattr(self, name))
        new.queue = list(self.queue)
        return new

    def _key(self) -> tuple:
        return tuple(getattr(self, n) for n in self.__slots__)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Auction) and self._key() == other._key()

    __hash__ = None

    @property
    def stake(self) -> int:
        """The stake the auction set (0 while undecided or when all passed)."""
        if not self.done or self.landlord < 0:
            return 0
        if self.rules.auction == "call_score":
            return self.highest
        return self.rules.base_stake * 2 ** self.robs

    def legal(self) -> list[int]:
        if self.done:
            return []
        if self.rules.auction == "call_score":
            return [PASS] + list(range(self.highest + 1, 4))
        return [PASS, ROB if self.caller >= 0 else CALL]

    def apply(self, action: int) -> None:
        if action not in self.legal():
            raise IllegalMoveError(
                f"seat {self.player} may not make auction action {action!r} (legal: {self.legal()})"
            )
        if self.rules.auction == "call_score":
            self._call_score(action)
        else:
            self._rob(action)

    def _end(self, landlord: int) -> None:
        self.done = True
        self.landlord = landlord

    def _call_score(self, action: int) -> None:
        p = self.player
        self.turns += 1
        if action == PASS:
            self.passes += 1
        else:
            self.highest, self.bidder, self.passes = action, p, 0
            if action == 3:
                return self._end(p)
        if self.rules.bid_rounds == "once":
            if self.turns == NUM_PLAYERS:
                return self._end(self.bidder)
        elif self.highest == 0 and self.passes == NUM_PLAYERS:
            return self._end(-1)
        elif self.highest > 0 and self.passes == NUM_PLAYERS - 1:
            return self._end(self.bidder)
        self.player = (p + 1) % NUM_PLAYERS

    def _rob(self, action: int) -> None:
        p = self.player
        if self.caller < 0:
            self.turns += 1
            if action == PASS:
                self.declined |= 1 << p
                if self.turns == NUM_PLAYERS:
                    return self._end(-1)
                self.player = (p + 1) % NUM_PLAYERS
                return
            self.caller = self.landlord = p
            self.queue = [s for s in ((p + 1) % 3, (p + 2) % 3) if not self.declined >> s & 1]
        else:
            self.queue.pop(0)
            if action == ROB:
                self.robs += 1
                self.landlord = p
            if not self.queue and self.robs and not self.final:
                self.final = True
                self.queue = [self.caller]
        if not self.queue:
            return self._end(self.landlord)
        self.player = self.queue[0]
