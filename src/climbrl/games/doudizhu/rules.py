"""Dou Dizhu rule sets as data: a frozen, validated :class:`Rules` object and named presets.

Every knob is a field with a docstring below. Presets (``-`` = the field's default):

==========================  ==============  =============  ==============  =============  ==============
field                       ``standard``    ``openspiel``  ``rlcard``      ``online``     ``douzero``
==========================  ==============  =============  ==============  =============  ==============
landlord (fixed seat)       none (auction)  none           0               none           0
auction                     call_score      call_score     -               rob            -
bid_rounds                  once            until_passes   -               -              -
all_pass                    redeal          end            -               redeal         -
four_with_two               yes             no             yes             yes            yes
solo_wings_may_pair         yes             yes            yes             yes            yes
solo_wings_may_trio         yes             yes            yes             yes            yes
trio_wing_adjacent          no              yes            no              no             no
joker_pair_wings            no              no             no              no             no
wing_same_rank              no              no             no              no             no
pair_wings_distinct         yes             yes            yes             yes            yes
bomb_doubles / spring       yes / yes       yes / yes      (unused)        yes / yes      yes / no
reward                      score           score          win_loss        score          score
zero-sum                    yes             yes            no              yes            yes
bombs_beat_rocket (fault)   no              no             no              no             no
chain_skips_quad_head (f.)  no              no             no              no             no
==========================  ==============  =============  ==============  =============  ==============

``standard``
    The common tournament rules: the call-score auction (each seat speaks once, starting at a
    seat drawn from the deal seed; a bid must top the last; a bid of 3 ends it), a redeal when
    all pass; every combination including four + two; a trio of solo wings next to the plane
    is not wings (those cards form the longer plane, so a card string is never ambiguous).
``openspiel``
    OpenSpiel 2.0.2's ``dou_dizhu`` (``shared/external/doudizhu/README.md``): the auction goes
    on until two passes follow a bid (a seat that passed may bid later), all pass ends the
    game with zero returns, no four + two, a trio next to the plane may be solo wings (one
    card string can then be two or three moves with different plane ranks, hence different
    action ids). Its two faults are knobs left off here (the preset keeps the correct rule):
    ``bombs_beat_rocket`` and ``chain_skips_quad_head`` reproduce the engine exactly.
``rlcard``
    RLCard 1.2.0's ``doudizhu``: seat 0 is always the landlord (no auction), every
    combination, a trio next to the plane is never solo wings (222 next to AAA is), and the
    payoffs ``[1, 0, 0]`` (landlord wins) / ``[0, 1, 1]`` (peasants win): not zero-sum.
``online``
    ``standard`` with the call/rob-landlord auction (叫地主 / 抢地主) of online play.
``douzero``
    DouZero's ADP setting (Zha et al. 2021; ``kwai/DouZero`` ``douzero/env/game.py``): RLCard's
    game (seat 0 the landlord, RLCard's combinations, so ``rlcard-rule`` plays it) with zero-sum
    ``score`` rewards at stake ``base_stake`` = 1, doubled per bomb or rocket; a spring does not
    double (DouZero's game counts only bombs). The landlord gets +/-2 x 2^bombs, each peasant
    -/+2^bombs: DouZero's points, whose per-game difference between the sides is its ADP
    (:mod:`climbrl.evaluate.duel`).

Scoring (``reward="score"``): pay = stake x 2^(bombs and rockets played, with
``bomb_doubles``) x 2 (spring or anti-spring, with ``spring_doubles``); the landlord gets
+/-2 pay, each peasant -/+pay. The stake is the winning bid (call score), ``base_stake``
doubled per rob (rob auction), or ``base_stake`` (fixed landlord).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from climbrl.games.presets import RulesError, fail, from_preset, overrides_of  # noqa: F401  (RulesError: re-exported)

AUCTIONS = ("call_score", "rob")
BID_ROUNDS = ("once", "until_passes")
ALL_PASS = ("end", "redeal", "forced")
REWARDS = ("score", "win_loss")
NUM_PLAYERS = 3
HAND_SIZE = 17
KITTY_SIZE = 3


@dataclass(frozen=True)
class Rules:
    """One Dou Dizhu rule set. Build it with :func:`get_rules`; every field is validated."""

    name: str = "standard"
    """Preset name this rule set came from (informational; overrides keep it)."""
    landlord: int | None = None
    """A fixed landlord seat (0..2) and no auction (RLCard, DouZero), or ``None`` to bid."""
    auction: str = "call_score"
    """``call_score``: bids 1..3, each above the last, 3 ends it; ``rob``: call landlord, then
    each seat that did not decline may rob it (each rob doubles the stake), the caller last."""
    bid_rounds: str = "once"
    """Call score only. ``once``: each seat speaks once; ``until_passes``: the auction goes on
    until two passes follow a bid (a seat that passed may bid later; OpenSpiel)."""
    all_pass: str = "redeal"
    """When nobody bids: ``end`` (the game ends, all returns 0), ``redeal`` (a new deal from the
    seed; after ``max_redeals`` redeals the game ends as ``end``), ``forced`` (the first bidder
    becomes landlord at stake ``base_stake``)."""
    max_redeals: int = 3
    """Bound on redeals (keeps every game finite); at most :data:`MAX_REDEALS`."""
    base_stake: int = 1
    """The stake without a bid: fixed landlord, rob auction (before robs), forced landlord."""
    four_with_two: bool = True
    """Whether a four plus two solos (``444456``) or two pairs (``44445566``) is a move."""
    solo_wings_may_pair: bool = True
    """Whether solo wings (planes, four + two) may hold two cards of one rank (``33344455``)."""
    solo_wings_may_trio: bool = True
    """Whether a plane's solo wings may hold three cards of one rank (``333444555777``)."""
    trio_wing_adjacent: bool = False
    """Whether such a trio may sit next to the plane (``333444555`` + ``666``); then one card
    string is several moves (a longer plane, or planes with different ranks)."""
    joker_pair_wings: bool = False
    """Whether both jokers may be solo wings together (``333444BR``, ``4444BR``)."""
    wing_same_rank: bool = False
    """Whether a plane's solo wing may be the fourth card of one of the plane's ranks."""
    pair_wings_distinct: bool = True
    """Whether pair wings must be of different ranks (else a four may serve as two pairs)."""
    bomb_doubles: bool = True
    """Whether each bomb or rocket played doubles the pay."""
    spring_doubles: bool = True
    """Whether a spring (peasants never played) or anti-spring (the landlord played once)
    doubles the pay."""
    reward: str = "score"
    """``score`` (zero-sum, see the module docstring) or ``win_loss``: ``[1, 0, 0]`` when the
    landlord wins, ``[0, 1, 1]`` when the peasants win (RLCard's payoffs; not zero-sum)."""
    bombs_beat_rocket: bool = False
    """Fault of OpenSpiel 2.0.2: every bomb held is offered against the rocket."""
    chain_skips_quad_head: bool = False
    """Fault of OpenSpiel 2.0.2: no solo chain, pair chain or plain plane may start at a rank
    the player holds four of (winged planes are not affected)."""

    def __post_init__(self) -> None:
        _validate(self)

    @property
    def zero_sum(self) -> bool:
        return self.reward == "score"

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Rules:
        return get_rules(data.get("name", "standard"), **{k: v for k, v in data.items() if k != "name"})

    def replace(self, **changes: Any) -> Rules:
        return get_rules(self.name, **{**overrides_of(self, PRESETS), **changes})



_BOOLS = (
    "four_with_two", "solo_wings_may_pair", "solo_wings_may_trio", "trio_wing_adjacent",
    "joker_pair_wings", "wing_same_rank", "pair_wings_distinct", "bomb_doubles", "spring_doubles",
    "bombs_beat_rocket", "chain_skips_quad_head",
)


MAX_REDEALS = 100
"""The bound on ``max_redeals``: a game's longest length, and the work of replaying one, grow with
it (a record naming 10^9 redeals once took 3 GB and 20 s to replay in ``climbrl serve``)."""


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _validate(r: Rules) -> None:
    if r.landlord is not None and (not _is_int(r.landlord) or not 0 <= r.landlord < NUM_PLAYERS):
        fail("landlord", f"must be a seat 0..2 or null, got {r.landlord!r}")
    for name, allowed in (("auction", AUCTIONS), ("bid_rounds", BID_ROUNDS), ("all_pass", ALL_PASS),
                          ("reward", REWARDS)):
        if getattr(r, name) not in allowed:
            fail(name, f"must be one of {allowed}, got {getattr(r, name)!r}")
    for name in ("max_redeals", "base_stake"):
        v = getattr(r, name)
        if not _is_int(v) or v < (0 if name == "max_redeals" else 1):
            fail(name, f"must be an integer >= {0 if name == 'max_redeals' else 1}, got {v!r}")
    if r.max_redeals > MAX_REDEALS:
        fail("max_redeals", f"must be at most {MAX_REDEALS} (the bound on redeals: a game's length grows with it), "
                            f"got {r.max_redeals}")
    for name in _BOOLS:
        if not isinstance(getattr(r, name), bool):
            fail(name, f"must be true or false, got {getattr(r, name)!r}")
    if r.trio_wing_adjacent and not r.solo_wings_may_trio:
        fail("trio_wing_adjacent", "needs solo_wings_may_trio (the wings are a trio)")


PRESETS: dict[str, dict[str, Any]] = {
    "standard": {},
    "openspiel": {
        "bid_rounds": "until_passes",
        "all_pass": "end",
        "four_with_two": False,
        "trio_wing_adjacent": True,
    },
    "rlcard": {
        "landlord": 0,
        "reward": "win_loss",
    },
    "online": {
        "auction": "rob",
    },
    "douzero": {
        "landlord": 0,
        "spring_doubles": False,
    },
}


def get_rules(preset: str | Rules = "standard", **overrides: Any) -> Rules:
    """The named preset with ``overrides`` applied; raises :class:`RulesError` naming a bad field."""
    if isinstance(preset, Rules):
        return preset.replace(**overrides) if overrides else preset
    return from_preset(Rules, PRESETS, preset, overrides)



OPENSPIEL_EXACT = {"bombs_beat_rocket": True, "chain_skips_quad_head": True}
"""Overrides that make the ``openspiel`` preset reproduce that engine's faults too."""
