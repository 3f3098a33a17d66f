"""The interpretability window: what an agent actually does, read from recorded evaluation games.

:func:`record_behaviour` plays the evaluation protocol (duplicate deals, the agent in every seat
against three copies of each opponent) and records every decision of the agent's seat:

- **leads**: when free to lead, how often it leads with 1, 2, 3, 4 or 5 cards, and which type;
- **passing**: when following and some play beats the table, how often it passes (overall and by
  its own hand size);
- **endgame**: with 3 cards or fewer, what it plays, and whether it goes out when a legal move
  empties its hand;
- **2s**: the 2s it was dealt, when it spends them (its hand size before the play, leading or
  following, alone or inside a combination) and how many it still holds when the game ends;
- **named situations** (:data:`SITUATIONS`): the agent's mean probability on a class of moves
  (e.g. "pass" when it can beat an opponent about to go out), and how often its chosen move was
  in that class. A policy network's probabilities (PPO) are the softmax over its scores of the
  legal moves; a value learner (its scores are Q-values) and a rule agent put probability 1 on
  the move they choose.

The numbers are sums over decisions, merged in deal order, so they are the same for any number of
workers. This window reads Big 2's moves (its 2s, its five-card hands); Dou Dizhu's (bids by hand
strength, bombs, peasants' cooperation) is part of its study, and other games are refused.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from climbrl.agents.base import Agent, Decision
from climbrl.games.big2.combos import PASS, SINGLE, TYPE_NAMES

NUM_SEATS = 4
GAMES = ("big2",)
"""The games this window reads (the pipeline's behaviour stage writes a note for the others)."""
TWOS = 0xF << 48  # the four 2s (rank 12 of 3..A,2)
HAND_BUCKETS = ("13-8", "7-4", "3-1")


def rate(a: float, b: float) -> float | None:
    """a / b, or None (no such decisions) when b is 0."""
    return a / b if b else None


def _bucket(n: int) -> str:
    return HAND_BUCKETS[0] if n >= 8 else HAND_BUCKETS[1] if n >= 4 else HAND_BUCKETS[2]


def _ncards(mask: int) -> int:
    return mask.bit_count()


def move_probabilities(agent: Agent, decisions: Sequence[Decision], picks: Sequence[int]) -> list[np.ndarray]:
    """The agent's probability of each legal move of each decision (see the module docstring)."""
    from climbrl.agents.external.charlesworth import CharlesworthAgent
    from climbrl.learn.policy import PolicyAgent

    if isinstance(agent, PolicyAgent) and agent.scores_are_logits:
        import torch

        states, moves, offsets = agent.encoder.encode(decisions)
        seg = torch.from_numpy(np.repeat(np.arange(len(decisions)), np.diff(offsets)))
        with torch.no_grad():
            scores = agent.net(torch.from_numpy(states), torch.from_numpy(moves), seg).numpy().astype(np.float64)
        return [_softmax(scores[offsets[b]:offsets[b + 1]]) for b in range(len(decisions))]
    if isinstance(agent, CharlesworthAgent):
        logits, actions = agent.logits(decisions)
        return [_softmax(logits[b][actions[b]].astype(np.float64)) for b in range(len(decisions))]
    out = []
    for d, k in zip(decisions, picks, strict=True):
        p = np.zeros(len(d.moves))
        p[k] = 1.0
        out.append(p)
    return out


def _softmax(row: np.ndarray) -> np.ndarray:
    z = np.exp(row - row.max())
    return z / z.sum()


# A named situation: (description, applies(decision) -> bool, the move class: (decision, i) -> bool).
Situation = tuple[str, Callable[[Decision], bool], Callable[[Decision, int], bool]]


def _opponents_left(d: Decision) -> list[int]:
    return [n for s, n in enumerate(d.observation.cards_left) if s != d.seat and n > 0]


def _is_two_single(d: Decision, i: int) -> bool:
    return d.types[i] == SINGLE and bool(d.moves[i] & TWOS)


SITUATIONS: dict[str, Situation] = {
    "early_lead_five_plus": (
        "leading with 10+ cards, a hand of 5+ cards legal: probability of leading one",
        lambda d: d.observation.leading and _ncards(d.hand) >= 10 and any(_ncards(m) >= 5 for m in d.moves),
        lambda d, i: _ncards(d.moves[i]) >= 5,
    ),
    "lead_opponent_on_one": (
        "leading while an opponent holds 1 card, a multi-card play legal: probability of leading a single",
        lambda d: d.observation.leading and 1 in _opponents_left(d) and any(_ncards(m) > 1 for m in d.moves),
        lambda d, i: d.types[i] == SINGLE,
    ),
    "beat_single_with_a_two": (
        "a single to beat, both a 2 and a lower single beat it: probability of playing a 2",
        lambda d: d.observation.to_beat_type == SINGLE
        and any(_is_two_single(d, i) for i in range(len(d.moves)))
        and any(d.types[i] == SINGLE and not _is_two_single(d, i) for i in range(len(d.moves))),
        _is_two_single,
    ),
    "pass_early_when_can_beat": (
        "following with 10+ cards, some play beats the table: probability of passing",
        lambda d: not d.observation.leading and len(d.moves) > 1 and _ncards(d.hand) >= 10,
        lambda d, i: d.types[i] == PASS,
    ),
    "pass_opponent_on_one": (
        "following while an opponent holds 1 card, some play beats the table: probability of passing",
        lambda d: not d.observation.leading and len(d.moves) > 1 and 1 in _opponents_left(d),
        lambda d, i: d.types[i] == PASS,
    ),
    "go_out": (
        "a legal play empties the hand: probability of playing it",
        lambda d: any(m == d.hand for m in d.moves),
        lambda d, i: d.moves[i] == d.hand,
    ),
}


@dataclass
class Behaviour:
    """Counters over one agent's decisions; :meth:`summary` turns them into rates with counts."""

    games: int = 0
    wins: int = 0
    decisions: int = 0
    leads_by_cards: dict[int, int] = field(default_factory=dict)
    leads_by_type: dict[str, int] = field(default_factory=dict)
    can_beat: dict[str, int] = field(default_factory=dict)  # by hand bucket
    passed: dict[str, int] = field(default_factory=dict)
    endgame_plays: dict[int, int] = field(default_factory=dict)  # cards played with <= 3 in hand (0: pass)
    could_go_out: int = 0
    went_out: int = 0
    twos_dealt: int = 0
    twos_played_by_bucket: dict[str, int] = field(default_factory=dict)
    twos_played_leading: int = 0
    twos_played_alone: int = 0
    twos_hand_size_sum: int = 0
    twos_held_at_end: int = 0
    situation_n: dict[str, int] = field(default_factory=dict)
    situation_prob: dict[str, float] = field(default_factory=dict)
    situation_chosen: dict[str, int] = field(default_factory=dict)

    def add(self, d: Decision, pick: int, probs: np.ndarray) -> None:
        obs, move = d.observation, d.moves[pick]
        n_hand = _ncards(d.hand)
        self.decisions += 1
        if obs.leading:
            k = _ncards(move)
            self.leads_by_cards[k] = self.leads_by_cards.get(k, 0) + 1
            t = TYPE_NAMES[d.types[pick]]
            self.leads_by_type[t] = self.leads_by_type.get(t, 0) + 1
        elif len(d.moves) > 1:
            b = _bucket(n_hand)
            self.can_beat[b] = self.can_beat.get(b, 0) + 1
            if move == 0:
                self.passed[b] = self.passed.get(b, 0) + 1
        if n_hand <= 3:
            k = _ncards(move)
            self.endgame_plays[k] = self.endgame_plays.get(k, 0) + 1
        if any(m == d.hand for m in d.moves):
            self.could_go_out += 1
            self.went_out += move == d.hand
        twos = _ncards(move & TWOS)
        if twos:
            b = _bucket(n_hand)
            self.twos_played_by_bucket[b] = self.twos_played_by_bucket.get(b, 0) + twos
            self.twos_played_leading += twos * obs.leading
            self.twos_played_alone += twos * (d.types[pick] == SINGLE)
            self.twos_hand_size_sum += twos * n_hand
        for name, (_, applies, in_class) in SITUATIONS.items():
            if applies(d):
                cls = [in_class(d, i) for i in range(len(d.moves))]
                self.situation_n[name] = self.situation_n.get(name, 0) + 1
                self.situation_prob[name] = self.situation_prob.get(name, 0.0) + float(probs[cls].sum())
                self.situation_chosen[name] = self.situation_chosen.get(name, 0) + cls[pick]

    def add_game(self, dealt_hand: int, final_hand: int, won: bool) -> None:
        self.games += 1
        self.wins += won
        self.twos_dealt += _ncards(dealt_hand & TWOS)
        self.twos_held_at_end += _ncards(final_hand & TWOS)

    def merge(self, other: Behaviour) -> None:
        for name, value in vars(other).items():
            mine = getattr(self, name)
            if isinstance(value, dict):
                for k, v in value.items():
                    mine[k] = mine.get(k, 0) + v
            else:
                setattr(self, name, mine + value)

    def summary(self) -> dict[str, Any]:
        leads = sum(self.leads_by_cards.values())
        can_beat = sum(self.can_beat.values())
        twos_played = sum(self.twos_played_by_bucket.values())
        endgame = sum(self.endgame_plays.values())
        return {
            "games": self.games, "win_rate": rate(self.wins, self.games), "decisions": self.decisions,
            "leads": leads,
            "lead_share_by_cards": {str(k): rate(v, leads) for k, v in sorted(self.leads_by_cards.items())},
            "lead_share_by_type": {k: rate(v, leads) for k, v in sorted(self.leads_by_type.items())},
            "can_beat": can_beat,
            "pass_rate_when_can_beat": rate(sum(self.passed.values()), can_beat),
            "pass_rate_when_can_beat_by_hand": {b: rate(self.passed.get(b, 0), self.can_beat.get(b, 0))
                                                for b in HAND_BUCKETS},
            "can_beat_by_hand": {b: self.can_beat.get(b, 0) for b in HAND_BUCKETS},
            "endgame_decisions": endgame,
            "endgame_share_by_cards": {str(k): rate(v, endgame) for k, v in sorted(self.endgame_plays.items())},
            "could_go_out": self.could_go_out, "go_out_rate": rate(self.went_out, self.could_go_out),
            "twos_dealt": self.twos_dealt, "twos_played": twos_played,
            "twos_share_by_hand": {b: rate(self.twos_played_by_bucket.get(b, 0), twos_played) for b in HAND_BUCKETS},
            "twos_share_leading": rate(self.twos_played_leading, twos_played),
            "twos_share_as_single": rate(self.twos_played_alone, twos_played),
            "twos_mean_hand_size": rate(self.twos_hand_size_sum, twos_played),
            "twos_held_at_end_share": rate(self.twos_held_at_end, self.twos_dealt),
            "situations": {name: {"n": self.situation_n.get(name, 0),
                                  "mean_probability": rate(self.situation_prob.get(name, 0.0),
                                                           self.situation_n.get(name, 0)),
                                  "chosen": rate(self.situation_chosen.get(name, 0), self.situation_n.get(name, 0))}
                           for name in SITUATIONS},
        }


def play_recorded(task: tuple, on_decision: Callable[[Decision, int, np.ndarray], None]) -> tuple[Any, list[Any]]:
    """Play one chunk task of :func:`climbrl.evaluate.match.match_tasks` (``(agent, opponents,
    game:rules, seed, first_deal, deal_seeds)``) and hand every decision of the evaluated agent's
    seat to ``on_decision(decision, pick, probabilities)`` (:func:`move_probabilities`), in the
    runner's order. Returns the game and the finished states (game ``i`` has the agent in seat
    ``i % players``, deal ``task[5][i // players]``). Every game's window records through it."""
    from climbrl.agents.runner import play_games
    from climbrl.evaluate.match import duplicate_seatings
    from climbrl.games.registry import make_game

    agent_spec, opponent_specs, name, seed, first_deal, seeds = task
    game = make_game(name)
    agent, seatings, deal_list, seat_seed_list = duplicate_seatings(agent_spec, opponent_specs, seed, first_deal,
                                                                    seeds, name, game.num_players)

    def on_step(who: Agent, gis: list[int], decisions: list[Decision], picks: list[int]) -> None:
        if who is agent:
            for d, k, p in zip(decisions, picks, move_probabilities(agent, decisions, picks), strict=True):
                on_decision(d, k, p)

    return game, play_games(game, seatings, deal_list, seat_seed_list, on_step=on_step)


def record_tasks(chunk: Callable[[tuple], Any], agent: str, opponents: Sequence[str], rules: str, games: int,
                 seed: int, workers: int, seeds: Sequence[int] | None, game: str) -> Any:
    """The chunks of ``games`` evaluation games against copies of each opponent (one in every
    other seat) recorded by ``chunk`` (a picklable function of a task), merged in deal order: the
    same total for any number of workers. ``chunk`` returns an object with ``merge``."""
    from climbrl.evaluate.match import game_name, map_tasks, match_tasks
    from climbrl.games.registry import make_game

    others = make_game(game_name(game, rules)).num_players - 1
    tasks = match_tasks(agent, [(opp,) * others for opp in opponents], rules, games, seed, seeds, game)
    parts = map_tasks(chunk, tasks, workers)
    total = parts[0]
    for p in parts[1:]:
        total.merge(p)
    return total


def _record_chunk(args: tuple) -> Behaviour:
    stats = Behaviour()
    game, states = play_recorded(args, stats.add)
    for i, st in enumerate(states):
        seat = i % NUM_SEATS
        dealt = game.new_game(seed=args[5][i // NUM_SEATS]).observation(seat).hand
        stats.add_game(dealt, st.observation(seat).hand, st.winner == seat)
    return stats


def record_behaviour(agent: str, opponents: Sequence[str], rules: str = "paper", games: int = 400, seed: int = 0,
                     workers: int = 1, seeds: Sequence[int] | None = None, game: str = "big2") -> dict[str, Any]:
    """Play ``games`` evaluation games of ``agent`` against each opponent in ``opponents`` (three
    copies each) and summarize its decisions over all of them (Big 2 only: see the module)."""
    if game.partition(":")[0] not in GAMES:
        raise ValueError(f"the interpretability window reads Big 2 games; {game} has none yet")
    total = record_tasks(_record_chunk, agent, opponents, rules, games, seed, workers, seeds, game)
    return {"agent": agent, "opponents": list(opponents), "games_per_opponent": games, **total.summary()}


LEAD_GROUPS = (("single", ("1",)), ("pair", ("2",)), ("triple", ("3",)), ("4 cards", ("4",)),
               ("5 cards", ("5",)), ("6+ cards", tuple(str(k) for k in range(6, 14))))


def _lead_groups(s: dict[str, Any]) -> dict[str, float]:
    shares = s["lead_share_by_cards"]
    return {g: sum(shares.get(k) or 0.0 for k in keys) for g, keys in LEAD_GROUPS}


def fmt(v: float | None, digits: int = 2) -> str:
    return "-" if v is None else f"{v:.{digits}f}"


def situations_markdown(agents: dict[str, dict[str, Any]], situations: dict[str, tuple], intro: str) -> list[str]:
    """The "Named situations" section of a game's window: the situations' descriptions, then per
    agent the mean probability / chosen share (n) of each (``situations``: name -> (description,
    when, which moves), each agent's summary under ``"situations"``)."""
    lines = ["", "### Named situations", "", intro, ""]
    lines += [f"- `{name}`: {desc}" for name, (desc, _, _) in situations.items()]
    lines += ["", "| agent | " + " | ".join(f"`{n}`" for n in situations) + " |", "|---|" + "---|" * len(situations)]
    for name, s in agents.items():
        cells = [f"{fmt(v['mean_probability'])} / {fmt(v['chosen'])} ({v['n']})" for v in s["situations"].values()]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return lines


def behaviour_markdown(data: dict[str, Any]) -> list[str]:
    """Report tables of a ``behaviour`` stage result (see :func:`record_behaviour`)."""
    if data.get("available") is False:  # a game the window does not read (pipeline.stages.behaviour)
        return ["## Interpretability window", "", data["note"], ""]
    agents: dict[str, dict[str, Any]] = data["agents"]
    opp = ", ".join(data["opponents"])
    lines = ["## Interpretability window", "",
             f"What each agent does, from {data['games_per_opponent']} recorded evaluation games against three "
             f"copies of each of {opp} ({data.get('deals', 'the versioned deals')}; every decision of the agent's "
             "seat counted). "
             "Learners play their greedy policy.", "",
             "### How they lead", "", "Share of leads (free plays) by number of cards.", "",
             "| agent | leads | " + " | ".join(g for g, _ in LEAD_GROUPS) + " |",
             "|---|---|" + "---|" * len(LEAD_GROUPS)]
    for name, s in agents.items():
        g = _lead_groups(s)
        lines.append(f"| {name} | {s['leads']} | " + " | ".join(fmt(g[k]) for k, _ in LEAD_GROUPS) + " |")
    lines += ["", "### Passing and the endgame", "",
              "Pass rate when some play beats the table (overall and by the agent's hand size); how often it goes "
              "out when a legal play empties its hand; with 3 cards or fewer, the share of its decisions that "
              "pass or play 1, 2 or 3 cards.", "",
              "| agent | pass when can beat (n) | 13-8 cards | 7-4 | 3-1 | goes out (n) | endgame: pass / 1 / 2 / 3 |",
              "|---|---|---|---|---|---|---|"]
    for name, s in agents.items():
        by = s["pass_rate_when_can_beat_by_hand"]
        end = s["endgame_share_by_cards"]
        lines.append(f"| {name} | {fmt(s['pass_rate_when_can_beat'])} ({s['can_beat']}) | {fmt(by['13-8'])} | "
                     f"{fmt(by['7-4'])} | {fmt(by['3-1'])} | {fmt(s['go_out_rate'])} ({s['could_go_out']}) | "
                     + " / ".join(fmt(end.get(str(k))) for k in range(4)) + " |")
    lines += ["", "### When the 2s go", "",
              "Of the 2s it played: the share played with 13-8, 7-4 and 3-1 cards in hand, the mean hand size, the "
              "share played alone (as a single) and on a lead; and the share of dealt 2s still in hand at the end.",
              "", "| agent | dealt | played | 13-8 | 7-4 | 3-1 | mean hand size | alone | on a lead | held at end |",
              "|---|---|---|---|---|---|---|---|---|---|"]
    for name, s in agents.items():
        by = s["twos_share_by_hand"]
        lines.append(f"| {name} | {s['twos_dealt']} | {s['twos_played']} | {fmt(by['13-8'])} | {fmt(by['7-4'])} | "
                     f"{fmt(by['3-1'])} | {fmt(s['twos_mean_hand_size'], 1)} | {fmt(s['twos_share_as_single'])} | "
                     f"{fmt(s['twos_share_leading'])} | {fmt(s['twos_held_at_end_share'])} |")
    lines += situations_markdown(
        agents, SITUATIONS,
        "Mean probability the agent puts on a class of moves in a situation, then how often its chosen move "
        "was in the class, and n (decisions in the situation). PPO's probabilities are its policy (the "
        "softmax of its scores; it plays the most probable move); a value learner or rule agent puts "
        "probability 1 on its choice.")
    checkpoints: dict[str, list[dict[str, Any]]] = data.get("checkpoints", {})
    if checkpoints:
        lines += ["", "### Across checkpoints", "",
                  "The same measures for the policies kept during training (`runs/<learner>/snapshots/`); the "
                  "win rate is over all the recorded games (the opponents pooled).", "",
                  "| learner | epoch | win rate | single leads | 5+ card leads | pass when can beat | 2s: mean hand "
                  "size | early 5+ lead p | pass vs one card p |", "|---|---|---|---|---|---|---|---|---|"]
        for algo, points in checkpoints.items():
            for p in points:
                g = _lead_groups(p)
                sit = p["situations"]
                lines.append(
                    f"| {algo} | {p['epoch']} | {fmt(p['win_rate'], 3)} | {fmt(g['single'])} | "
                    f"{fmt(g['5 cards'] + g['6+ cards'])} | {fmt(p['pass_rate_when_can_beat'])} | "
                    f"{fmt(p['twos_mean_hand_size'], 1)} | {fmt(sit['early_lead_five_plus']['mean_probability'])} | "
                    f"{fmt(sit['pass_opponent_on_one']['mean_probability'])} |")
    return lines + [""]


def plot_behaviour(data: dict[str, Any], out_dir: str) -> list[str]:
    """Two figures: lead composition per agent, and four measures across checkpoints."""
    import matplotlib

    matplotlib.use("Agg")
    from pathlib import Path

    import matplotlib.pyplot as plt

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    agents = data["agents"]
    fig, ax = plt.subplots(figsize=(max(5.0, 0.8 * len(agents) + 2), 3.6))
    bottom = np.zeros(len(agents))
    for g, _ in LEAD_GROUPS:
        vals = np.array([_lead_groups(s)[g] for s in agents.values()])
        ax.bar(list(agents), vals, bottom=bottom, label=g)
        bottom += vals
    ax.set_ylabel("share of leads")
    ax.set_title("How each agent leads")
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1, 1))
    fig.tight_layout()
    paths.append(str(out / "behaviour_leads.png"))
    fig.savefig(paths[-1], dpi=100)
    plt.close(fig)
    checkpoints = data.get("checkpoints", {})
    if checkpoints:
        measures = (("single leads", lambda p: _lead_groups(p)["single"]),
                    ("5+ card leads", lambda p: _lead_groups(p)["5 cards"] + _lead_groups(p)["6+ cards"]),
                    ("pass when can beat", lambda p: p["pass_rate_when_can_beat"]),
                    ("2s: mean hand size at play", lambda p: p["twos_mean_hand_size"]))
        fig, axes = plt.subplots(1, 4, figsize=(16, 3.4))
        for ax, (title, get) in zip(axes, measures, strict=True):
            for algo, points in checkpoints.items():
                ax.plot([p["epoch"] for p in points], [get(p) for p in points], marker="o", label=algo)
            ax.set_title(title)
            ax.set_xlabel("epoch")
        axes[0].legend(fontsize=7)
        fig.tight_layout()
        paths.append(str(out / "behaviour_checkpoints.png"))
        fig.savefig(paths[-1], dpi=100)
        plt.close(fig)
    return paths
