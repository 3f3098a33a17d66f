"""``climbrl play``: a person at the table with three agents, in the terminal.

Each turn shows the person's sorted hand, the play to beat, every seat's cards left and the
current trick, then lists the legal moves with numbers. The person types cards (``5D 5S``), a
move's number (``#3``; in Big 2, whose cards carry suits, a bare ``3`` too), or ``pass``; bad
input gets a message and the prompt again. In Dou Dizhu a bare ``3`` is the card 3, and the
auction's prompt names the bids to type. With ``--hints AGENT``
an agent's probabilities for the person's legal moves are shown beside them (a network gives
its softmax; a rule agent puts 1 on its own choice). ``quit`` or end of input leaves the game.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from climbrl.agents import Agent, Decision
from climbrl.cards import CardError, format_cards, parse_mask
from climbrl.evaluate.match import seat_seed
from climbrl.games.big2 import Big2Game
from climbrl.games.big2.combos import TYPE_NAMES
from climbrl.learn.specs import make_agent


class QuitGame(Exception):
    """The person left the game."""


def hint_probabilities(agent: Agent, decision: Decision, rng: random.Random) -> list[float]:
    """The agent's probability for each legal move (a rule agent: 1 on its choice)."""
    from climbrl.evaluate.behaviour import move_probabilities

    return move_probabilities(agent, [decision], [agent.act(decision, rng)])[0].tolist()


def _show_table(state, seat: int, names: list[str], out: Callable[[str], None]) -> None:
    left = state.cards_left()
    out("")
    out("seats: " + "   ".join(
        f"{'you' if s == seat else f'{s}:{names[s]}'} ({left[s]} cards)" for s in range(4)))
    trick = [f"{'you' if s == seat else s}: {format_cards(m) or 'pass'}" for s, m in state.history[state.trick_start:]]
    out("trick: " + (" | ".join(trick) if trick else "(new trick)"))
    out("to beat: " + (format_cards(state.last_mask) if state.last_mask else "nothing - you lead"))
    out("your hand: " + format_cards(state.hands[seat], symbols=False))


def move_number(text: str) -> int | None:
    """``#N``: the listed move N; None for anything else."""
    digits = text[1:].strip()
    if text.startswith("#") and digits.isascii() and digits.isdigit():  # '²'.isdigit() is true, int() refuses it
        return int(digits)
    return None


def read_move(decision: Decision, ask: Callable[[str], str], out: Callable[[str], None]) -> int:
    """Ask until the person gives a legal move; returns its index."""
    while True:
        try:
            text = ask("your move (cards, a number, or pass): ").strip()
        except EOFError:
            raise QuitGame from None
        if text.lower() in ("quit", "exit", "q"):
            raise QuitGame
        if not text:
            out("type cards, a move number, or pass (an empty line is not a move)")
            continue
        k = move_number(text)
        if k is None and text.isascii() and text.isdigit():  # Big 2's cards carry suits: a bare number is a move's
            k = int(text)
        if k is not None:
            if 0 <= k < len(decision.moves):
                return k
            out(f"no move number {k}: choose 0 to {len(decision.moves) - 1}")
            continue
        try:
            mask = 0 if text.lower() == "pass" else parse_mask(text)
        except CardError as e:
            out(f"not understood: {e}")
            continue
        if mask in decision.moves:
            return decision.moves.index(mask)
        if mask == 0:
            out("you lead this trick: you cannot pass")
        elif mask & ~decision.hand:
            out(f"you do not hold {format_cards(mask & ~decision.hand)}")
        else:
            out(f"{format_cards(mask)} is not a legal move here")


def play(rules: str = "paper", opponents: tuple[str, str, str] = ("heuristic",) * 3, seat: int = 0,
         seed: int = 0, hints: str | None = None, ask: Callable[[str], str] = input,
         out: Callable[[str], None] = print) -> list[float] | None:
    """Play one game; returns the returns (None when the person quits)."""
    if not 0 <= seat < 4:
        raise ValueError(f"--seat must be 0..3, got {seat}")
    game = Big2Game(rules)
    agents = [make_agent(o) for o in opponents]
    hint_agent = make_agent(hints) if hints else None
    names: list[str] = ["you"] * 4
    seats: list[Agent | None] = [None] * 4
    for j, agent in enumerate(agents):
        s = (seat + 1 + j) % 4
        seats[s], names[s] = agent, opponents[j]
    rngs = [random.Random(seat_seed(seed, 0, seat, s)) for s in range(4)]
    state = game.new_game(seed=seed)
    out(f"Big 2 under {rules} rules, deal {seed}; you are seat {seat}. Type 'quit' to leave.")
    if state.history:
        s, m = state.history[0]
        out(f"seat {s} plays {format_cards(m)} (automatically)")
    try:
        while not state.is_terminal():
            s = state.current_player
            decision = Decision.from_state(state)
            if s == seat:
                _show_table(state, seat, names, out)
                probs = hint_probabilities(hint_agent, decision, rngs[seat]) if hint_agent else None
                for i, (m, t) in enumerate(zip(decision.moves, decision.types, strict=True)):
                    hint = f"   {probs[i]:6.1%}" if probs else ""
                    out(f"  {i:3d}  {format_cards(m) or 'pass':<22} {TYPE_NAMES[t]}{hint}")
                k = read_move(decision, ask, out)
            else:
                k = seats[s].act(decision, rngs[s])
                out(f"seat {s} ({names[s]}): {format_cards(decision.moves[k]) or 'pass'}")
            state.apply(decision.moves[k])
    except QuitGame:
        out("you left the game")
        return None
    winner = "you" if state.winner == seat else f"seat {state.winner} ({names[state.winner]})"
    out(f"game over: {winner} won. cards left: {state.cards_left()}; returns: {state.returns()}")
    return state.returns()


def _ddz_tokens(table, text: str) -> list[str]:
    """The person's typed cards (``33344``, ``10 J Q K A``, ``BR``) as the table's card tokens."""
    from climbrl.games.doudizhu.moves import parse_counts

    return [t["id"] for t in table.presenter.hand_tokens(parse_counts(text.replace("10", "T")))]


def _plain(text: str) -> str:
    return "".join(text.lower().split())


DDZ_PROMPT = "your move (cards such as 33 or 10JQKA, #N for move N, or pass): "


def _bids(legal: list[dict]) -> str:
    """The auction's choices as a person types them: ``bid 1, bid 2 or bid 3, or pass``."""
    bids = [m["label"] for m in legal if m["label"] != "pass"]
    if not bids:
        return "pass"
    said = " or ".join([", ".join(bids[:-1]), bids[-1]] if len(bids) > 1 else bids)
    return f"{said}, or pass" if len(bids) < len(legal) else said


def _is_cards(text: str) -> bool:
    """Whether the typed text reads as cards (``33``), not as a word of the auction (``bid 3``)."""
    return not any(c.isalpha() and c.upper() not in "TJQKABR" for c in text)


def play_doudizhu(rules: str = "standard", opponents: tuple[str, str] = ("heuristic",) * 2, seat: int = 0,
                  seed: int = 0, hints: str | None = None, ask: Callable[[str], str] = input,
                  out: Callable[[str], None] = print) -> list[float] | None:
    """One Dou Dizhu game in the terminal, the auction included (under a preset that has one):
    the same table as the browser's (:class:`climbrl.serve.table.Table`), so the moves, the
    agents' seeds and the messages are the same. Returns the returns (None when the person quits)."""
    from climbrl.games.doudizhu.moves import CardError as DdzCardError
    from climbrl.serve.table import Table, TableError

    try:
        table = Table("doudizhu", rules, list(opponents), seat=seat, seed=seed, advisor=hints)
    except TableError as e:
        raise ValueError(str(e)) from None
    out(f"Dou Dizhu under {table.preset} rules, deal {seed}; you are seat {seat}. Type 'quit' to leave.")
    shown = 0
    while True:
        v = table.view()
        for e in v["events"][shown:]:
            if e["phase"] == "note":
                kitty = " ".join(c["label"] for c in e["cards"])
                out(e["note"] + (f": {kitty}" if kitty else ""))
            elif e["seat"] != seat:
                out(f"seat {e['seat']} ({e['who']}): {e['label']}")
        shown = len(v["events"])
        if v["over"]:
            r = v["result"]
            out(f"game over: {'you won' if r['you_won'] else 'you lost'}; returns: {r['returns']}")
            return r["returns"]
        out("")
        names = ["you" if s == seat else f"{s}:{name}" for s, name in enumerate(v["names"])]
        out("cards left: " + "   ".join(f"{name} {n}" for name, n in zip(names, v["cards_left"], strict=True)))
        if v["to_beat"]:
            out(f"to beat: {v['to_beat']['label']} (seat {v['to_beat']['seat']})")
        out("your hand: " + " ".join(c["label"] for c in v["hand"]))
        probs = None
        if hints:
            probs = {row["move"]: row["value"] for row in table.advice(v["turn"])["rows"]}
        for m in v["legal"][:40]:
            hint = f"   {probs[m['label']]:6.1%}" if probs and probs.get(m["label"]) is not None else ""
            out(f"  #{m['index']:<3d} {m['label']}{hint}")
        if len(v["legal"]) > 40:
            out(f"  ... and {len(v['legal']) - 40} more (type the cards)")
        bidding = v["phase"] == "bid"
        while True:
            try:
                text = ask(f"your bid ({_bids(v['legal'])}): " if bidding else DDZ_PROMPT).strip()
            except EOFError:
                text = "quit"
            if text.lower() in ("quit", "exit", "q"):
                out("you left the game")
                return None
            named = [m["index"] for m in v["legal"] if _plain(m["label"].split(" (")[0]) == _plain(text)]
            number = move_number(text)
            try:
                if number is not None:
                    table.move(v["turn"], index=number)
                elif named and (bidding or not _is_cards(text)):  # a bid, or a word such as pass
                    table.move(v["turn"], index=named[0])
                elif not text:
                    out("type cards, #N for move N, or pass (an empty line is not a move)")
                    continue
                elif bidding:
                    out(f"the auction is on: type {_bids(v['legal'])}")
                    continue
                elif text.lower() == "pass":
                    table.move(v["turn"], cards=[])
                else:
                    table.move(v["turn"], cards=_ddz_tokens(table, text))
                break
            except TableError as e:
                out(str(e) + "".join(f"\n  {o['index']:3d}  {o['label']}" for o in e.extra.get("options", [])))
            except DdzCardError as e:
                out(f"not understood: {e}")
