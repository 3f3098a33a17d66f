"""``climbrl play``: a person at the table with three agents, in the terminal.

Each turn shows the person's sorted hand, the play to beat, every seat's cards left and the
current trick, then lists the legal moves with numbers. The person types cards (``5D 5S``), a
move number, or ``pass``; bad input gets a message and the prompt again. With ``--hints AGENT``
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
        if text.isascii() and text.isdigit():  # '²'.isdigit() is true, and int() refuses it
            k = int(text)
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
