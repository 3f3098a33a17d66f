"""Dou Dizhu's interpretability window: what an agent does, read from recorded evaluation games.

:func:`record_ddz_behaviour` plays the evaluation protocol of :mod:`climbrl.evaluate.match` (every
deal from every seat, the agent in one seat and copies of an opponent in the two others, deals
from a seed list) through Big 2's recorder (:func:`climbrl.evaluate.behaviour.play_recorded`) and
counts every decision of the agent's seat, by role (``landlord``, ``peasant_down`` who acts right
after the landlord, ``peasant_up`` right before it):

- **bids by hand strength** (auction presets only): ``S`` is the documented bidding score of
  :func:`climbrl.agents.doudizhu_rules.hand_strength` (jokers, 2s, aces, bombs, rocket and the
  plays of the hand split), bucketed as :data:`S_BUCKETS`. Per bucket: of the auction decisions
  where some bid is legal, the share that bid (call, rob or a score) and the mean bid (call-score
  auction: 1..3, a pass 0); the share of games in which the agent became landlord; and the
  landlord's win rate (``S`` of the 17 cards it held in the auction, before the kitty: under a
  fixed landlord too, which reproduces the calibration in the rule agents' docstring).
- **bombs** (the rocket included): bombs held when the play starts (four of a rank below the
  jokers, or both jokers, in the hand with the kitty), the share of them played as a bomb, the
  agent's cards in hand when it plays one (:data:`HAND_BUCKETS`), whether it led with it, beat an
  enemy's play or its partner's, and the share still whole in hand at the end; the rest were
  broken up (``broken_share``: a four with two, or its cards played in other combinations).
- **cooperation** (peasants): decisions where some play beats the table and no play empties the
  hand, split by who made the play to beat (the partner or the landlord): the pass rate. When it
  tops its partner, why: a sure win (:func:`climbrl.agents.doudizhu_rules.sure_win_moves`), a
  block (the landlord holds 1 card) or neither (``other``). *Quiet* decisions: the partner's play
  to beat, no sure win, the landlord holds 2 cards or more -- a cooperative peasant passes there.
- **endgame**: decisions while an enemy holds 1 or 2 cards (keyed by the fewest an enemy holds).
  Leading: the share of single leads, of bombs, and of its single leads the share of its highest
  single (the hardest to beat). Following with a choice: the pass rate, the bomb rate, and the
  share playing its *strongest* move (the highest main rank among its legal non-bomb plays, which
  all share the table's type; counted over decisions that have one).
- **named situations** (:data:`SITUATIONS`): the agent's mean probability on a class of moves in a
  situation and how often its chosen move was in the class (probabilities as Big 2's window: a
  PPO policy's softmax; a value learner or a rule agent puts 1 on its choice).

Every counter is a sum over decisions, merged in deal order: the same numbers for any number of
workers.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from climbrl.agents.base import Decision
from climbrl.agents.doudizhu_rules import hand_strength, sure_win_moves
from climbrl.evaluate.behaviour import fmt, play_recorded, rate, record_tasks, situations_markdown
from climbrl.games.doudizhu.moves import TYPE_BOMB, TYPE_SOLO
from climbrl.games.doudizhu.state import ROLES

GAMES = ("doudizhu",)
PEASANTS = ROLES[1:]
S_BUCKETS = ("<5", "5-6", "7-8", "9-10", "11-12", "13+")
"""Buckets of the hand-strength score ``S`` (the rule agents' calibration buckets)."""
HAND_BUCKETS = ("11+", "10-7", "6-1")
"""Cards in the agent's hand when it plays a bomb: early, middle, late."""
ENEMY_CARDS = (1, 2)


def s_bucket(s: int) -> str:
    for i, top in enumerate((5, 7, 9, 11, 13)):
        if s < top:
            return S_BUCKETS[i]
    return S_BUCKETS[-1]


def _hand_bucket(n: int) -> str:
    return HAND_BUCKETS[0] if n >= 11 else HAND_BUCKETS[1] if n >= 7 else HAND_BUCKETS[2]


def _bombs_in(hand: Sequence[int]) -> int:
    """Bombs (four of a rank) and the rocket (both jokers) in a hand of 15 rank counts."""
    return sum(c == 4 for c in hand[:13]) + int(hand[13] == 1 and hand[14] == 1)


class Facts:
    """What the window reads of one play decision (computed once, shared by the counters)."""

    def __init__(self, d: Decision) -> None:
        obs = d.observation
        self.role = ROLES[(obs.seat - obs.landlord) % 3]
        self.peasant = obs.seat != obs.landlord
        others = ((obs.seat + 1) % 3, (obs.seat + 2) % 3)
        self.partner = next(s for s in others if s != obs.landlord) if self.peasant else -1
        self.enemies = (obs.landlord,) if self.peasant else others
        self.enemy_min = min(obs.cards_left[e] for e in self.enemies)
        self.size = sum(obs.hand)
        self.leading = obs.to_beat == 0
        self.by_partner = not self.leading and obs.to_beat_player == self.partner
        self.can_beat = not self.leading and len(d.moves) > 1
        self.go_out = any(d.game.ncards[m] == self.size for m in d.moves)
        self.landlord_cards = obs.cards_left[obs.landlord]


def _bomb(d: Decision, i: int) -> bool:
    return d.types[i] >= TYPE_BOMB


def _singles_and_pairs(d: Decision) -> bool:
    h = d.observation.hand
    return max(h) <= 2 and not (h[13] and h[14]) and 1 in h


def _lowest_single(d: Decision, i: int) -> bool:
    h = d.observation.hand
    return d.types[i] == TYPE_SOLO and d.powers[i] == h.index(1)


def _bid_three_legal(d: Decision) -> bool:
    return 3 in d.moves and hand_strength(d.observation.hand) >= 11


# A named situation: (description, applies(decision, facts or None in the auction), the move class).
Situation = tuple[str, Callable[[Decision, Facts | None], bool], Callable[[Decision, int], bool]]

SITUATIONS: dict[str, Situation] = {
    "lead_lowest_single": (
        "leading with a hand of singles and pairs only (no rank held 3+ times, no rocket, some rank held "
        "once), no enemy on 2 cards or fewer: probability of leading its lowest once-held card as a single",
        lambda d, f: f is not None and f.leading and f.enemy_min > 2 and _singles_and_pairs(d),
        _lowest_single,
    ),
    "pass_partner_single": (
        "a peasant, its partner's single to beat, some play beats it, none empties the hand, the landlord "
        "holds 2+ cards: probability of passing",
        lambda d, f: f is not None and f.by_partner and f.can_beat and not f.go_out and f.landlord_cards >= 2
        and d.game.types[d.observation.to_beat] == TYPE_SOLO,
        lambda d, i: d.moves[i] == 0,
    ),
    "pass_enemy_single": (
        "its enemy's single to beat, some play beats it, none empties the hand, every enemy holds 3+ cards: "
        "probability of passing",
        lambda d, f: f is not None and f.can_beat and not f.by_partner and not f.go_out and f.enemy_min >= 3
        and d.game.types[d.observation.to_beat] == TYPE_SOLO,
        lambda d, i: d.moves[i] == 0,
    ),
    "lead_single_enemy_on_one": (
        "leading while an enemy holds 1 card, a play of 2+ cards legal, none empties the hand: probability "
        "of leading a single",
        lambda d, f: f is not None and f.leading and f.enemy_min == 1 and not f.go_out
        and any(d.types[i] != TYPE_SOLO for i in range(len(d.moves))),
        lambda d, i: d.types[i] == TYPE_SOLO,
    ),
    "bomb_enemy_on_two": (
        "following an enemy's play while an enemy holds 2 cards or fewer, a bomb or the rocket legal, no play "
        "empties the hand: probability of a bomb or the rocket",
        lambda d, f: f is not None and f.can_beat and not f.by_partner and f.enemy_min <= 2 and not f.go_out
        and any(_bomb(d, i) for i in range(len(d.moves))),
        _bomb,
    ),
    "bid_three_strong": (
        "in a call-score auction with S >= 11 (the heuristic's bid-3 threshold), bid 3 legal: probability "
        "of bidding 3",
        lambda d, f: f is None and _bid_three_legal(d),
        lambda d, i: d.moves[i] == 3,
    ),
    "go_out": (
        "a legal play empties the hand: probability of playing it",
        lambda d, f: f is not None and f.go_out,
        lambda d, i: d.game.ncards[d.moves[i]] == sum(d.observation.hand),
    ),
}


@dataclass
class DdzBehaviour:
    """Every counter of the window under one key (``name/role/...``); :meth:`summary` turns
    them into rates with counts."""

    n: dict[str, float] = field(default_factory=dict)

    def inc(self, key: str, v: float = 1) -> None:
        self.n[key] = self.n.get(key, 0) + v

    def get(self, key: str) -> float:
        return self.n.get(key, 0)

    def merge(self, other: DdzBehaviour) -> None:
        for k, v in other.n.items():
            self.inc(k, v)

    # --- decisions ---------------------------------------------------------------------------
    def add(self, d: Decision, pick: int, probs: np.ndarray) -> None:
        self.inc("decisions")
        f = None
        if d.observation.phase == "bid":
            self._bid(d, pick)
        else:
            f = Facts(d)
            self._play(d, pick, f)
        for name, (_, applies, in_class) in SITUATIONS.items():
            if applies(d, f):
                cls = [in_class(d, i) for i in range(len(d.moves))]
                self.inc(f"sit_n/{name}")
                self.inc(f"sit_p/{name}", float(probs[cls].sum()))
                self.inc(f"sit_chosen/{name}", cls[pick])

    def _bid(self, d: Decision, pick: int) -> None:
        if len(d.moves) < 2:
            return
        b = s_bucket(hand_strength(d.observation.hand))
        move = d.moves[pick]
        self.inc(f"bid_n/{b}")
        self.inc(f"bid_made/{b}", move != 0)
        if d.game.rules.auction == "call_score":
            self.inc(f"bid_score_n/{b}")
            self.inc(f"bid_sum/{b}", move)

    def _play(self, d: Decision, pick: int, f: Facts) -> None:
        r, move = f.role, d.moves[pick]
        bomb = _bomb(d, pick)
        if bomb:
            how = "lead" if f.leading else "over_partner" if f.by_partner else "over_enemy"
            self.inc(f"bombs_played/{r}")
            self.inc(f"bombs_{how}/{r}")
            self.inc(f"bombs_hand_sum/{r}", f.size)
            self.inc(f"bombs_hand/{r}/{_hand_bucket(f.size)}")
        if f.peasant and f.can_beat and not f.go_out:
            who = "partner" if f.by_partner else "enemy"
            self.inc(f"coop_{who}_n/{r}")
            self.inc(f"coop_{who}_pass/{r}", move == 0)
            if f.by_partner:
                sure = sure_win_moves(d)
                quiet = not sure and f.landlord_cards >= 2
                self.inc(f"coop_quiet_n/{r}", quiet)
                self.inc(f"coop_quiet_pass/{r}", quiet and move == 0)
                if move:
                    why = "sure_win" if pick in sure else "block" if f.landlord_cards <= 1 else "other"
                    self.inc(f"tops_{why}/{r}")
                    self.inc(f"tops_bomb/{r}", bomb)
        if f.enemy_min <= 2:
            e = f"{r}/{f.enemy_min}"
            if f.leading:
                single = d.types[pick] == TYPE_SOLO
                self.inc(f"end_lead_n/{e}")
                self.inc(f"end_lead_single/{e}", single)
                self.inc(f"end_lead_bomb/{e}", bomb)
                if single:
                    top = max(d.powers[i] for i in range(len(d.moves)) if d.types[i] == TYPE_SOLO)
                    self.inc(f"end_lead_top_single/{e}", d.powers[pick] == top)
            elif f.can_beat:
                self.inc(f"end_follow_n/{e}")
                self.inc(f"end_follow_pass/{e}", move == 0)
                self.inc(f"end_follow_bomb/{e}", bomb)
                plain = [d.powers[i] for i in range(len(d.moves)) if d.moves[i] and not _bomb(d, i)]
                if plain:
                    self.inc(f"end_follow_plain_n/{e}")
                    self.inc(f"end_follow_strongest/{e}", bool(move) and not bomb and d.powers[pick] == max(plain))

    # --- games -------------------------------------------------------------------------------
    def add_game(self, state: Any, seat: int) -> None:
        """The game-level counters of one finished game (the agent in ``seat``)."""
        res = state.result()
        r = res.roles[seat]
        won = seat in res.winners
        self.inc(f"games/{r}")
        self.inc(f"wins/{r}", won)
        dealt = np.frombuffer(state.deals[-1][0], dtype=np.int8).reshape(3, -1)[seat]
        b = s_bucket(hand_strength(dealt))
        self.inc(f"s_games/{b}")
        if state.landlord == seat:
            self.inc(f"ll_games/{b}")
            self.inc(f"ll_wins/{b}", won)
        if state.landlord >= 0:
            obs = state.observation(seat)
            start = [a + p for a, p in zip(obs.hand, obs.played[seat], strict=True)]
            self.inc(f"bombs_held/{r}", _bombs_in(start))
            self.inc(f"bombs_at_end/{r}", _bombs_in(obs.hand))

    # --- summary -----------------------------------------------------------------------------
    def _sum(self, key: str, roles: Sequence[str]) -> float:
        return sum(self.get(f"{key}/{r}") for r in roles)

    def _bombs(self, roles: Sequence[str]) -> dict[str, Any]:
        held, played = self._sum("bombs_held", roles), self._sum("bombs_played", roles)
        return {"held": int(held), "played": int(played), "played_share": rate(played, held),
                "mean_hand_size": rate(self._sum("bombs_hand_sum", roles), played),
                "share_by_hand": {h: rate(sum(self.get(f"bombs_hand/{r}/{h}") for r in roles), played)
                                  for h in HAND_BUCKETS},
                "share_leading": rate(self._sum("bombs_lead", roles), played),
                "share_over_enemy": rate(self._sum("bombs_over_enemy", roles), played),
                "share_over_partner": rate(self._sum("bombs_over_partner", roles), played),
                "held_at_end_share": rate(self._sum("bombs_at_end", roles), held),
                "broken_share": rate(held - played - self._sum("bombs_at_end", roles), held)}

    def _coop(self, roles: Sequence[str]) -> dict[str, Any]:
        s = {k: self._sum(k, roles) for k in ("coop_partner_n", "coop_partner_pass", "coop_enemy_n",
                                               "coop_enemy_pass", "coop_quiet_n", "coop_quiet_pass",
                                               "tops_sure_win", "tops_block", "tops_other", "tops_bomb")}
        tops = s["tops_sure_win"] + s["tops_block"] + s["tops_other"]
        return {"partner_n": int(s["coop_partner_n"]),
                "partner_pass_rate": rate(s["coop_partner_pass"], s["coop_partner_n"]),
                "enemy_n": int(s["coop_enemy_n"]), "enemy_pass_rate": rate(s["coop_enemy_pass"], s["coop_enemy_n"]),
                "quiet_n": int(s["coop_quiet_n"]), "quiet_pass_rate": rate(s["coop_quiet_pass"], s["coop_quiet_n"]),
                "tops": int(tops), "tops_sure_win": int(s["tops_sure_win"]), "tops_block": int(s["tops_block"]),
                "tops_other": int(s["tops_other"]), "tops_bomb": int(s["tops_bomb"])}

    def _endgame(self, roles: Sequence[str], e: int) -> dict[str, Any]:
        def g(k: str) -> float:
            return sum(self.get(f"{k}/{r}/{e}") for r in roles)

        lead, follow = g("end_lead_n"), g("end_follow_n")
        return {"leads": int(lead), "lead_single_share": rate(g("end_lead_single"), lead),
                "lead_top_single_share": rate(g("end_lead_top_single"), g("end_lead_single")),
                "lead_bomb_share": rate(g("end_lead_bomb"), lead),
                "follows": int(follow), "follow_pass_rate": rate(g("end_follow_pass"), follow),
                "follow_strongest_share": rate(g("end_follow_strongest"), g("end_follow_plain_n")),
                "follow_bomb_share": rate(g("end_follow_bomb"), follow)}

    def summary(self) -> dict[str, Any]:
        roles = [r for r in ("none", *ROLES) if self.get(f"games/{r}")]
        games = self._sum("games", roles)
        bids = {}
        for b in S_BUCKETS:
            n, sg, lg = self.get(f"bid_n/{b}"), self.get(f"s_games/{b}"), self.get(f"ll_games/{b}")
            bids[b] = {"bid_decisions": int(n), "bid_rate": rate(self.get(f"bid_made/{b}"), n),
                       "mean_bid": rate(self.get(f"bid_sum/{b}"), self.get(f"bid_score_n/{b}")),
                       "games": int(sg), "landlord_share": rate(lg, sg), "landlord_games": int(lg),
                       "landlord_win_rate": rate(self.get(f"ll_wins/{b}"), lg)}
        return {
            "games": int(games), "win_rate": rate(self._sum("wins", roles), games),
            "decisions": int(self.get("decisions")),
            "by_role": {r: {"games": int(self.get(f"games/{r}")),
                            "win_rate": rate(self.get(f"wins/{r}"), self.get(f"games/{r}"))} for r in roles},
            "auction": any(self.get(f"bid_n/{b}") for b in S_BUCKETS),
            "bids_by_strength": bids,
            "bombs": {"all": self._bombs(ROLES), **{r: self._bombs([r]) for r in ROLES}},
            "cooperation": {"peasant": self._coop(PEASANTS), **{r: self._coop([r]) for r in PEASANTS}},
            "endgame": {str(e): {"all": self._endgame(ROLES, e), **{r: self._endgame([r], e) for r in ROLES}}
                        for e in ENEMY_CARDS},
            "situations": {name: {"n": int(self.get(f"sit_n/{name}")),
                                  "mean_probability": rate(self.get(f"sit_p/{name}"), self.get(f"sit_n/{name}")),
                                  "chosen": rate(self.get(f"sit_chosen/{name}"), self.get(f"sit_n/{name}"))}
                           for name in SITUATIONS},
        }


def _record_chunk(args: tuple) -> DdzBehaviour:
    stats = DdzBehaviour()
    game, states = play_recorded(args, stats.add)
    for i, st in enumerate(states):
        stats.add_game(st, i % game.num_players)
    return stats


def record_ddz_behaviour(agent: str, opponents: Sequence[str], rules: str = "", games: int = 300, seed: int = 0,
                         workers: int = 1, seeds: Sequence[int] | None = None,
                         game: str = "doudizhu") -> dict[str, Any]:
    """Play ``games`` evaluation games of ``agent`` against each opponent in ``opponents`` (two
    copies each; ``games`` a multiple of 3) and summarize its decisions over all of them."""
    if game.partition(":")[0] not in GAMES:
        raise ValueError(f"game: Dou Dizhu's window reads Dou Dizhu games, got {game!r}")
    total = record_tasks(_record_chunk, agent, opponents, rules, games, seed, workers, seeds, "doudizhu")
    return {"agent": agent, "opponents": list(opponents), "games_per_opponent": games, **total.summary()}


ROLE_SHORT = {"landlord": "landlord", "peasant_down": "peasant (down)", "peasant_up": "peasant (up)"}


def _bid_cell(v: dict[str, Any]) -> str:
    if not v["bid_decisions"]:
        return "-"
    return f"{fmt(v['bid_rate'])} / {fmt(v['mean_bid'], 1)} ({v['bid_decisions']})"


def behaviour_ddz_markdown(data: dict[str, Any]) -> list[str]:
    """Report tables of a Dou Dizhu ``behaviour`` stage result (see :func:`record_ddz_behaviour`)."""
    agents: dict[str, dict[str, Any]] = data["agents"]
    opp = ", ".join(data["opponents"])
    lines = ["## Interpretability window", "",
             f"What each agent does in Dou Dizhu ({data.get('rules', 'its rules')}), from "
             f"{data['games_per_opponent']} recorded evaluation games against two copies of each of {opp} "
             f"({data.get('deals', 'the versioned deals')}; every deal from every seat, every decision of the agent's "
             "seat counted). Learners play their greedy policy. Roles: the landlord, the peasant who acts right "
             "after it (down) and the one right before it (up).", ""]
    if any(s["auction"] for s in agents.values()):
        lines += ["### Bids by hand strength", "",
                  "Hand strength S: the rule agents' bidding score (jokers, 2s, aces, bombs, rocket, and the plays "
                  "of the hand split). Per bucket of S: bid rate / mean bid (a pass counts 0) over the auction "
                  "decisions where a bid was legal (n).", "",
                  "| agent | " + " | ".join(f"S {b}" for b in S_BUCKETS) + " |", "|---|" + "---|" * len(S_BUCKETS)]
        for name, s in agents.items():
            lines.append(f"| {name} | " + " | ".join(_bid_cell(s["bids_by_strength"][b]) for b in S_BUCKETS) + " |")
    lines += ["", "### The landlord by hand strength", "",
              "Per bucket of S (counted on the 17 cards held before the kitty): the share of games the agent was the "
              "landlord, and its win rate as landlord (games).", "",
              "| agent | " + " | ".join(f"S {b}" for b in S_BUCKETS) + " |", "|---|" + "---|" * len(S_BUCKETS)]
    for name, s in agents.items():
        cells = [f"{fmt(v['landlord_share'])} / {fmt(v['landlord_win_rate'])} ({v['landlord_games']})"
                 for v in s["bids_by_strength"].values()]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    lines += ["", "### When bombs and the rocket go", "",
              "Bombs and rockets held when the play starts; the share played as one; the agent's mean cards in hand "
              "when it plays one and the share played with 11+, 10-7 and 6-1 cards; the share leading, over an "
              "enemy's play, over the partner's; the share still whole at the end, and broken up into other plays.",
              "", "| agent | role | held | played | mean hand | 11+ / 10-7 / 6-1 | lead / enemy / partner | at end | "
              "broken |", "|---|---|---|---|---|---|---|---|---|"]
    for name, s in agents.items():
        for r in ROLES:
            b = s["bombs"][r]
            by = " / ".join(fmt(b["share_by_hand"][h]) for h in HAND_BUCKETS)
            how = " / ".join(fmt(b[k]) for k in ("share_leading", "share_over_enemy", "share_over_partner"))
            lines.append(f"| {name} | {ROLE_SHORT[r]} | {b['held']} | {fmt(b['played_share'])} | "
                         f"{fmt(b['mean_hand_size'], 1)} | {by} | {how} | {fmt(b['held_at_end_share'])} | "
                         f"{fmt(b['broken_share'])} |")
    lines += ["", "### How the peasants cooperate", "",
              "A peasant's decisions where some play beats the table and none empties its hand: the pass rate when "
              "the play to beat is its partner's and when it is the landlord's (n); quiet: the partner's play, no "
              "sure win, the landlord on 2+ cards. When it tops its partner: for a sure win, to block the landlord "
              "on 1 card, or neither (and with a bomb).", "",
              "| agent | role | pass on partner (n) | pass on landlord (n) | pass when quiet (n) | tops: sure win / "
              "block / other | tops with a bomb |", "|---|---|---|---|---|---|---|"]
    for name, s in agents.items():
        for r in ("peasant", *PEASANTS):
            c = s["cooperation"][r]
            lines.append(f"| {name} | {ROLE_SHORT.get(r, 'both peasants')} | {fmt(c['partner_pass_rate'])} "
                         f"({c['partner_n']}) | {fmt(c['enemy_pass_rate'])} ({c['enemy_n']}) | "
                         f"{fmt(c['quiet_pass_rate'])} ({c['quiet_n']}) | {c['tops_sure_win']} / {c['tops_block']} / "
                         f"{c['tops_other']} | {c['tops_bomb']} |")
    lines += ["", "### The endgame", "",
              "Decisions while an enemy holds 1 (or 2) cards. Leading: the share of single leads, of them the share "
              "of its highest single, and of bombs. Following with a choice: pass rate, the share playing its "
              "strongest move (the highest non-bomb play), and of bombs.", "",
              "| agent | role | enemy on | leads | single / highest single / bomb | follows | pass / strongest / "
              "bomb |", "|---|---|---|---|---|---|---|"]
    for name, s in agents.items():
        for r in ROLES:
            for e in ENEMY_CARDS:
                v = s["endgame"][str(e)][r]
                lines.append(f"| {name} | {ROLE_SHORT[r]} | {e} | {v['leads']} | {fmt(v['lead_single_share'])} / "
                             f"{fmt(v['lead_top_single_share'])} / {fmt(v['lead_bomb_share'])} | {v['follows']} | "
                             f"{fmt(v['follow_pass_rate'])} / {fmt(v['follow_strongest_share'])} / "
                             f"{fmt(v['follow_bomb_share'])} |")
    lines += situations_markdown(
        agents, SITUATIONS,
        "Mean probability the agent puts on a class of moves in a situation / how often its chosen move was in "
        "the class (n). PPO's probabilities are its policy's softmax; a value learner or rule agent puts "
        "probability 1 on its choice.")
    checkpoints: dict[str, list[dict[str, Any]]] = data.get("checkpoints", {})
    if checkpoints:
        lines += ["", "### Across checkpoints", "",
                  "The same measures for the policies kept during training; win rates over all the recorded games.",
                  "", "| learner | epoch | win rate | as landlord | bombs played | pass on partner | pass on landlord "
                  "| single lead vs one card p |", "|---|---|---|---|---|---|---|---|"]
        for algo, points in checkpoints.items():
            for p in points:
                ll = p["by_role"].get("landlord", {}).get("win_rate")
                c = p["cooperation"]["peasant"]
                lines.append(f"| {algo} | {p['epoch']} | {fmt(p['win_rate'], 3)} | {fmt(ll, 3)} | "
                             f"{fmt(p['bombs']['all']['played_share'])} | {fmt(c['partner_pass_rate'])} | "
                             f"{fmt(c['enemy_pass_rate'])} | "
                             f"{fmt(p['situations']['lead_single_enemy_on_one']['mean_probability'])} |")
    return lines + [""]


def plot_ddz_behaviour(data: dict[str, Any], out_dir: str) -> list[str]:
    """Figures: bids and the landlord's win rate by hand strength; bombs and cooperation per
    agent; and, when there are kept policies, four measures across checkpoints."""
    import matplotlib

    matplotlib.use("Agg")
    from pathlib import Path

    import matplotlib.pyplot as plt

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    agents = data["agents"]

    def nan(v: float | None) -> float:
        return np.nan if v is None else v

    auction = any(s["auction"] for s in agents.values())
    panels = (("bid rate", "bid_rate"),) if auction else ()
    panels += (("landlord win rate", "landlord_win_rate"),)
    fig, axes = plt.subplots(1, len(panels), figsize=(5.2 * len(panels), 3.6), squeeze=False)
    for ax, (title, key) in zip(axes[0], panels, strict=True):
        for name, s in agents.items():
            ax.plot(S_BUCKETS, [nan(s["bids_by_strength"][b][key]) for b in S_BUCKETS], marker="o", label=name)
        ax.set_title(f"{title} by hand strength S")
        ax.set_xlabel("S")
        ax.set_ylim(0, 1.05)
    axes[0][0].legend(fontsize=7)
    fig.tight_layout()
    paths.append(str(out / "behaviour_bids.png"))
    fig.savefig(paths[-1], dpi=100)
    plt.close(fig)

    measures = (("bombs played (share held)", lambda s: s["bombs"]["all"]["played_share"]),
                ("bombs played with 11+ cards", lambda s: s["bombs"]["all"]["share_by_hand"]["11+"]),
                ("peasant: pass on partner", lambda s: s["cooperation"]["peasant"]["partner_pass_rate"]),
                ("peasant: pass on landlord", lambda s: s["cooperation"]["peasant"]["enemy_pass_rate"]))
    fig, ax = plt.subplots(figsize=(max(6.0, 1.2 * len(agents) + 4), 3.6))
    width = 0.8 / len(measures)
    x = np.arange(len(agents))
    for j, (label, get) in enumerate(measures):
        ax.bar(x + j * width, [nan(get(s)) for s in agents.values()], width, label=label)
    ax.set_xticks(x + 0.4 - width / 2, list(agents))
    ax.set_ylim(0, 1.05)
    ax.set_title("Bombs and cooperation")
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1, 1))
    fig.tight_layout()
    paths.append(str(out / "behaviour_bombs_cooperation.png"))
    fig.savefig(paths[-1], dpi=100)
    plt.close(fig)

    checkpoints = data.get("checkpoints", {})
    if checkpoints:
        fig, axes = plt.subplots(1, 4, figsize=(16, 3.4))
        series = (("win rate", lambda p: p["win_rate"]),) + measures[:1] + measures[2:]
        for ax, (title, get) in zip(axes, series, strict=True):
            for algo, points in checkpoints.items():
                ax.plot([p["epoch"] for p in points], [nan(get(p)) for p in points], marker="o", label=algo)
            ax.set_title(title)
            ax.set_xlabel("epoch")
        axes[0].legend(fontsize=7)
        fig.tight_layout()
        paths.append(str(out / "behaviour_checkpoints.png"))
        fig.savefig(paths[-1], dpi=100)
        plt.close(fig)
    return paths
