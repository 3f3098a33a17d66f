"""The practice guide's look-ahead features (its 6.1; issue 26: "measure their cost, the endgame win rate
with and without them, and the distilled variant"), over training seeds, paired on the same decks and
positions.

Arms of Dou Dizhu's self-play DMC (``douzero`` rules; ``strong/params.yaml``'s ``games.doudizhu.train``
network: role networks of 2 x 512) at a short budget fixed before the run (the command line's; one actor
process per training), seeds 0-2, the same self-play games in every arm (their decisions differ
with the games' lengths: the JSON records them):

- ``base``: today's encoder (``doudizhu``);
- ``lookahead``: ``doudizhu+lookahead`` (:mod:`climbrl.encoders.doudizhu_lookahead`: the rule engine's
  three candidates played out three plays ahead on four deals of the hidden cards, as win probabilities);
- ``distilled``: the ``lookahead`` policies playing with the features predicted by a network
  (:mod:`climbrl.learn.lookahead_distill`, fitted here on heuristic self-play positions of their own
  seed stream) instead of the play-outs: the guide's suggestion for inference.

Measured:

- **cost**: CPU seconds per million learner decisions of each training, and the encoding time per
  decision (play-outs or the distiller) on the same positions;
- **full games** against the ``heuristic`` on fresh decks (purpose ``deep``, seed 2626), every deck in
  both seatings (the agent as landlord against two heuristic peasants, and as both peasants);
- **endgame win rate**: from endgame positions (heuristic self-play of other deals, stopped at the
  first decision where a seat holds 6 cards or fewer), the agent takes the landlord's seat, then both
  peasants' seats, and plays to the end against the heuristic.

Contrasts on the win rates (``lookahead - base``, ``distilled - base``, ``lookahead - distilled``):
:func:`climbrl.evaluate.stats.contrast_interval` over seeds x decks (or positions), Holm's correction over
all of them.

Run: ``.venv/bin/python benchmarks/lookahead_features.py [--epochs 10] [--games 300] [--seeds 0,1,2]
[--decks 200] [--positions 300] [--workers 2]`` (about 50 minutes on two idle cores at the defaults);
``--train-only`` stops after the trainings, which are kept under ``runs/bench/lookahead`` and resumed.
Writes ``benchmarks/results/lookahead_features.json`` and prints a table.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import pipeline  # noqa: E402,F401  (environment defaults)

TRAINED = {"base": "", "lookahead": "doudizhu+lookahead"}
ARMS = ("base", "lookahead", "distilled")
CONTRASTS = (("lookahead", "base"), ("distilled", "base"), ("lookahead", "distilled"))
DECK_SEED, POSITION_SEED, DISTILL_SEED = 2626, 2727, 2828
ENDGAME_CARDS = 6


def run_dir(arm: str, seed: int) -> Path:
    return ROOT / "runs" / "bench" / "lookahead" / f"{arm}-s{seed}"


def train_one(job: tuple[str, int, int, int, int]) -> dict:
    """Train one (arm, seed) to ``epochs`` (resumed from its checkpoint when there is one)."""
    import yaml

    from climbrl.config import train_config
    from climbrl.training import train

    arm, seed, epochs, games, minibatch = job
    base = yaml.safe_load((ROOT / "strong" / "params.yaml").read_text())["games"]["doudizhu"]["train"]
    set_here = ("algo", "epochs", "seed", "actors", "keep_policy_every", "games_per_epoch", "minibatch_decisions")
    kw = {k: v for k, v in base.items() if k not in set_here}
    cfg = train_config(base["algo"], game="doudizhu", **kw, encoder=TRAINED[arm], epochs=epochs, seed=seed, actors=1,
                       games_per_epoch=games, minibatch_decisions=minibatch, keep_policy_every=0)
    out = run_dir(arm, seed)
    hist = train(cfg, out, resume=True, progress=False)["history"]
    return {"arm": arm, "seed": seed, "epochs": len(hist), "decisions": sum(r["decisions"] for r in hist),
            "cpu_seconds": sum(r["cpu_seconds"] for r in hist), "policy": str((out / "policy.pt").relative_to(ROOT))}


def main() -> int:
    from climbrl.threads import process_pool

    p = argparse.ArgumentParser()
    p.add_argument("--epochs", type=int, default=10)
    p.add_argument("--games", type=int, default=300, help="self-play games per epoch")
    p.add_argument("--minibatch", type=int, default=1024, help="decisions per update")
    p.add_argument("--seeds", default="0,1,2")
    p.add_argument("--decks", type=int, default=200)
    p.add_argument("--positions", type=int, default=300)
    p.add_argument("--distill-games", type=int, default=300)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--train-only", action="store_true")
    p.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "lookahead_features.json"))
    args = p.parse_args()
    seeds = [int(s) for s in args.seeds.split(",")]
    jobs = [(arm, s, args.epochs, args.games, args.minibatch) for arm in ("lookahead", "base") for s in seeds]
    load_before = os.getloadavg()
    t0 = time.time()
    with process_pool(args.workers) as pool:
        runs = list(pool.map(train_one, jobs))
    for r in runs:
        print(f"trained {r['arm']} seed {r['seed']}: {r['decisions']:,} decisions, {r['cpu_seconds'] / 60:.1f} CPU-min",
              flush=True)
    if args.train_only:
        print(f"trainings done in {time.time() - t0:.0f} s")
        return 0
    distill = fit_distiller(args.distill_games)
    print(f"distiller: {distill['fit']}", flush=True)
    eval_jobs = [(arm, s, args.decks, args.positions) for arm in ARMS for s in seeds]
    with process_pool(args.workers) as pool:
        evals = list(pool.map(evaluate_one, eval_jobs))
    out = summarize(runs, evals, distill, seeds, args)
    out.update({"measured": datetime.now(UTC).isoformat(timespec="seconds"),
                "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}",
                "load_before": load_before, "load_after": os.getloadavg()})
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(out, indent=2) + "\n")
    for arm, a in out["arms"].items():
        print(f"{arm}: full games {a['full_games']['mean']:.3f} (sd {a['full_games']['sd']:.3f}), endgames "
              f"{a['endgames']['mean']:.3f} (sd {a['endgames']['sd']:.3f}); encoding "
              f"{a['encode_ms_per_decision']:.2f} ms per decision"
              + (f"; {a['cpu_seconds_per_million_decisions']:.0f} CPU-s per million training decisions"
                 if "cpu_seconds_per_million_decisions" in a else ""))
    for c in (c for by in out["contrasts"].values() for c in by.values()):
        print(f"{c['measure']}: {c['contrast']} {c['estimate']:+.3f} [{c['low']:+.3f}, {c['high']:+.3f}], "
              f"p {c['p_value']:.3f}{' (Holm: significant)' if c['holm_significant'] else ''}")
    print(f"wrote {args.out}")
    return 0


def self_play_decisions(games: int, seed: int) -> list:
    """Every decision of ``games`` heuristic self-play games (``douzero`` rules), deals from ``seed``."""
    import random

    from climbrl.agents.base import Decision
    from climbrl.agents.doudizhu_rules import DdzHeuristicAgent
    from climbrl.agents.runner import deal_seeds
    from climbrl.games.registry import make_game

    game, rule, out = make_game("doudizhu:douzero"), DdzHeuristicAgent(), []
    for s in deal_seeds(seed, games):
        st, rng = game.new_game(seed=s), random.Random(s)
        while not st.is_terminal():
            d = Decision.from_state(st)
            out.append(d)
            st.apply(d.moves[rule.act(d, rng)])
    return out


def distiller_path() -> Path:
    return ROOT / "runs" / "bench" / "lookahead" / "distiller.pt"


def fit_distiller(games: int) -> dict:
    """Fit the distiller on heuristic self-play (its own deals), save it, and time the three encodings
    on its held-out positions."""
    import torch

    from climbrl.encoders.doudizhu import DdzEncoder
    from climbrl.encoders.doudizhu_lookahead import DdzLookaheadEncoder
    from climbrl.learn.lookahead_distill import DistilledLookaheadEncoder, LookaheadDistiller

    decisions = self_play_decisions(games, DISTILL_SEED)
    distiller = LookaheadDistiller(seed=DISTILL_SEED)
    t = time.process_time()
    fit = distiller.fit(decisions)
    fit["cpu_seconds"] = time.process_time() - t
    torch.save(distiller.state_dict(), distiller_path())
    held = decisions[-2000:]
    timing = {}
    for arm, enc in (("base", DdzEncoder()), ("lookahead", DdzLookaheadEncoder()),
                     ("distilled", DistilledLookaheadEncoder(distiller))):
        t = time.process_time()
        for i in range(0, len(held), 64):
            enc.encode(held[i:i + 64])
        timing[arm] = 1000 * (time.process_time() - t) / len(held)
    return {"games": games, "seed": DISTILL_SEED, "fit": fit, "encode_ms_per_decision": timing,
            "timed_decisions": len(held)}


def load_arm(arm: str, seed: int):
    """The agent of an (arm, seed): a trained policy, the distilled arm's with the distiller's encoder."""
    import torch

    from climbrl.learn.lookahead_distill import DistilledLookaheadEncoder, LookaheadDistiller
    from climbrl.learn.specs import make_agent

    agent = make_agent(f"checkpoint:{run_dir('base' if arm == 'base' else 'lookahead', seed) / 'policy.pt'}",
                       "doudizhu")
    if arm == "distilled":
        distiller = LookaheadDistiller()
        distiller.load_state_dict(torch.load(distiller_path(), weights_only=True))
        agent.encoder = DistilledLookaheadEncoder(distiller)
    return agent


def play_from(state, agent, seats: tuple[int, ...], rng) -> bool:
    """Play ``state`` to its end, ``agent`` in ``seats`` and the heuristic elsewhere; whether the
    agent's side won."""
    from climbrl.agents.base import Decision
    from climbrl.agents.doudizhu_rules import DdzHeuristicAgent

    rule = DdzHeuristicAgent()
    while not state.is_terminal():
        d = Decision.from_state(state)
        state.apply(d.moves[(agent if state.current_player in seats else rule).act(d, rng)])
    return state.returns()[seats[0]] > 0


def endgame_positions(n: int) -> list:
    """``n`` endgame positions: heuristic self-play of the ``POSITION_SEED`` deals, stopped at the first
    decision where a seat holds ``ENDGAME_CARDS`` cards or fewer (a deal that ends before is skipped)."""
    import random

    from climbrl.agents.base import Decision
    from climbrl.agents.doudizhu_rules import DdzHeuristicAgent
    from climbrl.agents.runner import deal_seeds
    from climbrl.games.registry import make_game

    game, rule, out = make_game("doudizhu:douzero"), DdzHeuristicAgent(), []
    for s in deal_seeds(POSITION_SEED, 3 * n):
        st, rng = game.new_game(seed=s), random.Random(s)
        while not st.is_terminal() and min(st.left) > ENDGAME_CARDS:
            d = Decision.from_state(st)
            st.apply(d.moves[rule.act(d, rng)])
        if not st.is_terminal():
            out.append(st)
            if len(out) == n:
                return out
    raise RuntimeError(f"only {len(out)} endgame positions in {3 * n} deals")


def evaluate_one(job: tuple[str, int, int, int]) -> dict:
    """One (arm, seed)'s wins: per deck (mean of the two seatings) and per endgame position (mean of the
    agent as landlord and as the peasants), with the same decks and positions for every arm."""
    import random

    import numpy as np

    from climbrl.agents.runner import deal_seeds
    from climbrl.games.registry import make_game

    arm, seed, decks, positions = job
    agent, game = load_arm(arm, seed), make_game("doudizhu:douzero")
    lord = game.rules.landlord
    peasants = tuple(p for p in range(3) if p != lord)
    out: dict = {"arm": arm, "seed": seed}
    for name, starts in (("full_games", [game.new_game(seed=s) for s in deal_seeds(DECK_SEED, decks, "deep")]),
                         ("endgames", endgame_positions(positions))):
        wins = np.zeros((len(starts), 2))
        for i, st in enumerate(starts):
            if name == "endgames":
                lord, peasants = st.landlord, tuple(p for p in range(3) if p != st.landlord)
            for j, seats in enumerate(((lord,), peasants)):
                wins[i, j] = play_from(st.clone(), agent, seats, random.Random(1000 * i + j))
        out[name] = {"per_start": wins.mean(axis=1).tolist(), "landlord": float(wins[:, 0].mean()),
                     "peasants": float(wins[:, 1].mean()), "starts": len(starts)}
    return out


def summarize(runs: list[dict], evals: list[dict], distill: dict, seeds: list[int], args) -> dict:
    """Per-arm means and sd over seeds, the contrasts with Holm's correction."""
    import numpy as np

    from climbrl.evaluate.stats import contrast_interval, holm

    measures = ("full_games", "endgames")
    table = {m: {a: np.stack([np.array(e[m]["per_start"]) for e in evals if e["arm"] == a]) for a in ARMS}
             for m in measures}
    arms: dict = {}
    for a in ARMS:
        mine = [e for e in evals if e["arm"] == a]
        arms[a] = {"encode_ms_per_decision": distill["encode_ms_per_decision"][a]}
        trained = [r for r in runs if r["arm"] == ("base" if a == "base" else "lookahead")]
        if a != "distilled":
            arms[a]["cpu_seconds_per_million_decisions"] = (1e6 * sum(r["cpu_seconds"] for r in trained)
                                                            / sum(r["decisions"] for r in trained))
        for m in measures:
            by_seed = table[m][a].mean(axis=1)
            arms[a][m] = {"by_seed": by_seed.tolist(), "mean": float(by_seed.mean()),
                          "sd": float(by_seed.std(ddof=1)) if len(by_seed) > 1 else 0.0,
                          "landlord": float(np.mean([e[m]["landlord"] for e in mine])),
                          "peasants": float(np.mean([e[m]["peasants"] for e in mine]))}
    contrasts = []
    for m in measures:
        for a, b in CONTRASTS:
            c = contrast_interval([table[m][a], table[m][b]], [1, -1], bounds=(-1, 1))
            contrasts.append({"measure": m, "contrast": f"{a} - {b}", **c})
    for c, rejected in zip(contrasts, holm([c["p_value"] for c in contrasts]), strict=True):
        c["holm_significant"] = rejected
    return {"rules": "douzero", "opponent": "heuristic", "epochs": args.epochs, "games_per_epoch": args.games,
            "minibatch_decisions": args.minibatch, "seeds": seeds, "decks": args.decks, "deck_seed": DECK_SEED,
            "positions": args.positions, "position_seed": POSITION_SEED, "endgame_cards": ENDGAME_CARDS,
            "distiller": distill, "arms": arms, "runs": runs,
            "contrasts": {m: {c["contrast"]: c for c in contrasts if c["measure"] == m} for m in measures}}


if __name__ == "__main__":
    sys.exit(main())
