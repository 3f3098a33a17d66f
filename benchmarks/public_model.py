"""The public agent's network in compiled code: its cost per decision, and the belief filter's
accuracy with it as the opponents' model (:mod:`climbrl.agents.external.charlesworth_compiled`,
``search:...,rollout=charlesworth,belief=M``).

1. Seconds per decision, on one core, over every decision of ``--games`` random games
   (charlesworth rules): the compiled observation plus legal logits (what a network seat of a
   rollout pays), against the compiled heuristic's pick (what a rule seat pays).
2. The belief filter: at ``--positions`` positions of games the public agent plays against
   itself, 512 deals of the unseen cards are drawn uniformly and weighted by their likelihood
   under its network to the power T; reported per T: the weights' effective sample size
   (median) and the share of the unseen cards that the weighted deals put in the right hand.

Run: ``python benchmarks/public_model.py [--games 40] [--positions 60]`` (needs the public
agent's weights); writes ``benchmarks/results/public_model.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import time
from pathlib import Path

import numpy as np

from climbrl.agents import Decision, make_agent
from climbrl.agents.external.charlesworth import load_weights
from climbrl.agents.external.charlesworth_compiled import MAX_ACTIVE, compile_weights, encode_active, legal_logits
from climbrl.agents.hand_structure import heuristic_pick
from climbrl.agents.rollouts import replay_loglik
from climbrl.agents.search import public_replay, sample_deals
from climbrl.games.big2 import Big2Game

TEMPERATURES = (0.0, 0.05, 0.1, 0.2, 0.5, 1.0)


def decision_cost(game: Big2Game, w: tuple, games: int, repeat: int = 200) -> dict[str, float]:
    rng = random.Random(0)
    active = np.zeros(MAX_ACTIVE, dtype=np.int64)
    h1, h2 = np.zeros(w[1].shape[0], np.float32), np.zeros(w[3].shape[0], np.float32)
    net_s = rule_s = 0.0
    n = 0
    for g in range(games):
        s = game.new_game(seed=g)
        while not s.is_terminal():
            d = Decision.from_state(s)
            o = d.observation
            masks = np.array(d.moves, dtype=np.int64)
            types, powers = np.array(d.types, dtype=np.int64), np.array(d.powers, dtype=np.int64)
            out = np.zeros(len(masks), np.float32)
            args = (o.hand, o.seat, np.array(o.cards_left, dtype=np.int64), np.array(o.played, dtype=np.int64),
                    np.array(o.types_played, dtype=np.int64), o.leading, o.to_beat, o.to_beat_type, o.passes, active)
            t0 = time.process_time()
            for _ in range(repeat):
                k = encode_active(*args)
                legal_logits(*w, active, k, o.hand, masks, len(masks), out, h1, h2)
            t1 = time.process_time()
            for _ in range(repeat):
                heuristic_pick(o.hand, masks, types, powers, game.tables)
            t2 = time.process_time()
            net_s += t1 - t0
            rule_s += t2 - t1
            n += repeat
            s.apply(d.moves[rng.randrange(len(d.moves))])
    return {"decisions": n, "network_us_per_decision": 1e6 * net_s / n, "heuristic_us_per_decision": 1e6 * rule_s / n,
            "note": "each call from Python (about 0.3 us of call overhead each); inside a rollout there is none"}


def belief_accuracy(game: Big2Game, w: tuple, positions: int) -> dict[str, dict[str, float]]:
    public = make_agent("charlesworth")
    acc = {t: [] for t in TEMPERATURES}
    ess = {t: [] for t in TEMPERATURES}
    g = 0
    while len(acc[0.0]) < positions:
        s = game.new_game(seed=200 + g)
        rng = random.Random(g)
        step = 0
        while not s.is_terminal() and len(acc[0.0]) < positions:
            d = Decision.from_state(s)
            if step in (8, 16, 24, 32) and len(d.moves) > 1:
                obs = d.observation
                pool = sample_deals(obs, game.rules.starting_card_id, rng, 512)
                ll = replay_loglik(pool, *public_replay(obs, game, record=True), game.tables, w)
                others = [p for p in range(4) if p != obs.seat]
                total = sum(s.hands[p].bit_count() for p in others)
                right = np.array([sum((int(pool[k, p]) & s.hands[p]).bit_count() for p in others) / total
                                  for k in range(len(pool))])
                for t in TEMPERATURES:
                    wt = np.exp(t * (ll - ll.max()))
                    acc[t].append(float(np.average(right, weights=wt)))
                    ess[t].append(float(wt.sum() ** 2 / (wt ** 2).sum()))
            s.apply(d.moves[public.act(d, rng)])
            step += 1
        g += 1
    per_t = {str(t): {"right_hand_share": float(np.mean(acc[t])),
                      "median_effective_deals_of_512": float(np.median(ess[t]))} for t in TEMPERATURES}
    return per_t | {"positions": positions, "games": g}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--games", type=int, default=40)
    ap.add_argument("--positions", type=int, default=60)
    args = ap.parse_args()
    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    game = Big2Game("charlesworth")
    w = compile_weights(load_weights())
    out = {"decision_cost": decision_cost(game, w, args.games), "belief": belief_accuracy(game, w, args.positions),
           "load_average_1min": os.getloadavg()[0], "measured": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
    path = Path(__file__).parent / "results" / "public_model.json"
    path.write_text(json.dumps(out, indent=2) + "\n")
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
