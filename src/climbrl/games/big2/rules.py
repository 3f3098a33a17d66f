"""Big 2 rule sets as data: a frozen, validated :class:`Rules` object and named presets.

Every knob is a field with a docstring below. Presets:

``paper`` (default)
    The rules of the 2026 study as written. Ranks 3 < ... < A < 2, suits D < C < H < S, 13 cards
    each; the holder of the 3 of clubs leads the first trick and need not play it; single, pair,
    triple, straight (3 to 12 consecutive ranks, never a 2), flush, full house, four of a kind
    plus one card, straight flush (5 consecutive cards of one suit, no 2). The study does not
    say how straights of different lengths compare; we decided: a straight is beaten only by a
    straight of the same length with a higher top card, except that a 5-card straight sits in
    the usual 5-card order (straight < flush < full house < four of a kind + 1 < straight
    flush). A pass does not lock a player out of the trick; when the three others have passed
    the last player to play leads. First player out wins: +1, each other seat -1/3.
``standard``
    The common Hong Kong rules (pagat.com's Big Two): 5-card straights only (2 may be the top
    card, J-Q-K-A-2 is the highest straight, no wrap-around), flushes compared by their highest
    rank, then the next, ..., then the suit; the holder of 3D leads and must include it; four
    of a kind plays with one kicker; scoring by cards left: 1 per card, doubled at 10 or more,
    tripled at 13, the winner collects the total.
``charlesworth``
    The variant of the public PPO agent (``shared/external/charlesworth-big2/README.md``): 3D
    is auto-played as a single by its holder; two pair and four of a kind alone as 4-card
    hands (four of a kind beats any two pair); no four of a kind plus kicker; only 5-card
    straights, 2 allowed (J-Q-K-A-2 highest), no wrap; flushes compared by their top card only;
    score: each loser minus its cards left, the winner the sum, no multipliers.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from climbrl.cards import CardError, parse_card
from climbrl.games.presets import RulesError, fail, from_preset, overrides_of  # noqa: F401  (RulesError: re-exported)

START_MODES = ("lead", "must_include", "auto_play")
FLUSH_COMPARES = ("top_card", "rank_then_suit", "suit_then_rank")
REWARD_SCHEMES = ("rank", "cards")
NUM_PLAYERS = 4
HAND_SIZE = 13


@dataclass(frozen=True)
class Rules:
    """One Big 2 rule set. Build it with :func:`get_rules`; every field is validated."""

    name: str = "paper"
    """Preset name this rule set came from (informational; overrides keep it)."""
    suit_order: str = "DCHS"
    """The four suits from lowest to highest (a permutation of ``DCHS``)."""
    starting_card: str = "3C"
    """The card whose holder starts the game."""
    start_mode: str = "lead"
    """``lead``: its holder leads freely; ``must_include``: the first play must contain it;
    ``auto_play``: it is played automatically as a single and the next seat acts."""
    straight_lengths: tuple[int, ...] = (3, 4, 5, 6, 7, 8, 9, 10, 11, 12)
    """Allowed straight lengths (each 3..13). Must contain 5 (straight flushes have 5 cards)."""
    twos_in_straights: bool = False
    """Whether a 2 may be in a straight (as the rank above the ace: J-Q-K-A-2)."""
    wrap_straights: bool = False
    """Whether straights wrap past the 2 to the 3 (e.g. A-2-3-4-5, ranked by its last card, the 5).
    Needs ``twos_in_straights``."""
    flush_compare: str = "rank_then_suit"
    """How flushes compare: ``top_card`` (the highest card, rank then suit), ``rank_then_suit``
    (ranks from the highest down, then the suit), ``suit_then_rank`` (suit, then ranks)."""
    four_card_hands: bool = False
    """Whether two pair and four of a kind alone are playable 4-card hands (four of a kind
    beats any two pair)."""
    four_of_a_kind_kicker: bool = True
    """Whether four of a kind plus any one card is a 5-card hand (between full house and
    straight flush)."""
    pass_locks_out: bool = False
    """Whether a player who passes may not play again until the trick ends."""
    reward: str = "rank"
    """``rank``: ``rank_rewards`` by finishing place; ``cards``: each loser loses its card-count
    score (cards left times ``card_multipliers``) and the winner collects the total."""
    rank_rewards: tuple[float, float, float, float] = (1.0, -1.0 / 3, -1.0 / 3, -1.0 / 3)
    """Reward by finishing place (first out, then by fewest cards left)."""
    card_multipliers: tuple[tuple[int, int], ...] = ()
    """``(threshold, multiplier)`` pairs for ``cards`` scoring: a loser holding at least
    ``threshold`` cards pays ``multiplier`` per card (the largest threshold reached applies)."""

    def __post_init__(self) -> None:
        _validate(self)

    # --- derived -------------------------------------------------------------------------
    @property
    def starting_card_id(self) -> int:
        return parse_card(self.starting_card)

    @property
    def max_straight_length(self) -> int:
        return max(self.straight_lengths)

    @property
    def returns_sum(self) -> float:
        """The sum of the returns of every finished game under these rules."""
        if self.reward == "rank":
            return float(sum(self.rank_rewards))
        return 0.0

    def card_penalty(self, cards_left: int) -> int:
        """What a loser holding ``cards_left`` cards pays under ``cards`` scoring (the cards
        times the multiplier of the largest threshold reached, else 1)."""
        mult = 1
        for threshold, m in self.card_multipliers:
            if cards_left >= threshold:
                mult = max(mult, m)
        return cards_left * mult

    def to_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d["straight_lengths"] = list(self.straight_lengths)
        d["rank_rewards"] = list(self.rank_rewards)
        d["card_multipliers"] = [list(p) for p in self.card_multipliers]
        return d

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Rules:
        return get_rules(data.get("name", "paper"), **{k: v for k, v in data.items() if k != "name"})

    def replace(self, **changes: Any) -> Rules:
        return get_rules(self.name, **{**overrides_of(self, PRESETS), **changes})



def _validate(r: Rules) -> None:
    if sorted(r.suit_order) != sorted("DCHS") or len(r.suit_order) != 4:
        fail("suit_order", f"must be a permutation of 'DCHS', got {r.suit_order!r}")
    try:
        parse_card(r.starting_card)
    except CardError as e:
        fail("starting_card", str(e))
    if r.start_mode not in START_MODES:
        fail("start_mode", f"must be one of {START_MODES}, got {r.start_mode!r}")
    if not isinstance(r.straight_lengths, tuple) or not r.straight_lengths:
        fail("straight_lengths", "must be a non-empty tuple of lengths")
    for n in r.straight_lengths:
        if not isinstance(n, int) or isinstance(n, bool) or not 3 <= n <= 13:
            fail("straight_lengths", f"each length must be an integer in 3..13, got {n!r}")
    if 5 not in r.straight_lengths:
        fail("straight_lengths", "must contain 5 (straight flushes are 5-card straights)")
    if len(set(r.straight_lengths)) != len(r.straight_lengths) or list(r.straight_lengths) != sorted(
        r.straight_lengths
    ):
        fail("straight_lengths", "must be ascending without repeats")
    if not r.twos_in_straights and max(r.straight_lengths) > 12:
        fail("straight_lengths", "a 13-card straight needs twos_in_straights")
    for name in ("twos_in_straights", "wrap_straights", "four_card_hands", "four_of_a_kind_kicker",
                 "pass_locks_out"):
        if not isinstance(getattr(r, name), bool):
            fail(name, f"must be true or false, got {getattr(r, name)!r}")
    if r.wrap_straights and not r.twos_in_straights:
        fail("wrap_straights", "wrap-around straights pass through the 2: needs twos_in_straights")
    if r.flush_compare not in FLUSH_COMPARES:
        fail("flush_compare", f"must be one of {FLUSH_COMPARES}, got {r.flush_compare!r}")
    if r.reward not in REWARD_SCHEMES:
        fail("reward", f"must be one of {REWARD_SCHEMES}, got {r.reward!r}")
    if len(r.rank_rewards) != NUM_PLAYERS:
        fail("rank_rewards", f"needs {NUM_PLAYERS} values (first to last place)")
    for v in r.rank_rewards:
        if isinstance(v, bool) or not isinstance(v, (int, float)) or v != v:
            fail("rank_rewards", f"values must be numbers, got {v!r}")
    for pair in r.card_multipliers:
        if (
            not isinstance(pair, tuple)
            or len(pair) != 2
            or not all(isinstance(x, int) and not isinstance(x, bool) for x in pair)
            or not 1 <= pair[0] <= HAND_SIZE
            or pair[1] < 1
        ):
            fail("card_multipliers", f"entries are (threshold 1..13, multiplier >= 1), got {pair!r}")


PRESETS: dict[str, dict[str, Any]] = {
    "paper": {},
    "standard": {
        "starting_card": "3D",
        "start_mode": "must_include",
        "straight_lengths": (5,),
        "twos_in_straights": True,
        "flush_compare": "rank_then_suit",
        "reward": "cards",
        "card_multipliers": ((10, 2), (13, 3)),
    },
    "charlesworth": {
        "starting_card": "3D",
        "start_mode": "auto_play",
        "straight_lengths": (5,),
        "twos_in_straights": True,
        "flush_compare": "top_card",
        "four_card_hands": True,
        "four_of_a_kind_kicker": False,
        "reward": "cards",
        "card_multipliers": (),
    },
}


def _normalize(key: str, value: Any) -> Any:
    """Accept JSON/YAML shapes (lists) for tuple fields."""
    if key in ("straight_lengths", "rank_rewards") and isinstance(value, list):
        return tuple(value)
    if key == "card_multipliers" and isinstance(value, list):
        return tuple(tuple(p) if isinstance(p, list) else p for p in value)
    return value


def get_rules(preset: str | Rules = "paper", **overrides: Any) -> Rules:
    """The named preset with ``overrides`` applied; raises :class:`RulesError` naming a bad field."""
    if isinstance(preset, Rules):
        return preset.replace(**overrides) if overrides else preset
    return from_preset(Rules, PRESETS, preset, overrides, _normalize)
