"""``climbrl play`` driven end to end with scripted input."""

from __future__ import annotations

import itertools
import subprocess
import sys

from climbrl.play import play
from tests.reference import public_agent_weights


def scripted(lines):
    it = iter(lines)

    def ask(prompt: str) -> str:
        try:
            return next(it)
        except StopIteration:
            raise EOFError from None

    return ask


def test_a_whole_game_with_bad_input_along_the_way() -> None:
    out: list[str] = []
    answers = itertools.chain(["XX", "99", "3D 3D", "2S 2H 2D 2C 3S"], itertools.repeat("0"))
    returns = play("paper", ("greedy", "heuristic", "random"), seat=2, seed=5, ask=scripted(answers),
                   out=out.append)
    assert returns is not None and abs(sum(returns)) < 1e-9
    text = "\n".join(out)
    assert "not understood: invalid card 'XX'" in text
    assert "no move number 99" in text
    assert "duplicate card '3D'" in text
    assert "you do not hold" in text or "is not a legal move here" in text
    assert "game over:" in text and "your hand:" in text and "to beat:" in text


def test_typed_cards_and_pass_are_moves() -> None:
    out: list[str] = []
    # deal 4: seat 0 holds 3C and leads, so "pass" is refused; then "3C" is typed as cards
    answers = itertools.chain(["pass", "3C"], itertools.repeat("0"))
    play("paper", ("heuristic",) * 3, seat=0, seed=4, ask=scripted(answers), out=out.append)
    text = "\n".join(out)
    assert "you lead this trick: you cannot pass" in text
    assert "trick: you: 3C" in text
    assert "game over" in text


def test_hints_show_probabilities_and_quit_leaves() -> None:
    public_agent_weights()  # the hints come from the public agent
    out: list[str] = []
    assert play("charlesworth", ("random",) * 3, seat=1, seed=2, hints="charlesworth",
                ask=scripted(["quit"]), out=out.append) is None
    assert any(line.rstrip().endswith("%") for line in out)
    assert out[-1] == "you left the game"


def test_cli_play_reads_stdin() -> None:
    proc = subprocess.run([sys.executable, "-m", "climbrl.cli", "play", "--seed", "4", "--opponents", "greedy"],
                          input="0\n" * 200, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and "game over" in proc.stdout


# --- Dou Dizhu in the terminal (issue 51, finding 11): cards are cards, #N is a move --------------

def _recorded_moves(monkeypatch) -> list[tuple]:
    """Every ``Table.move`` the terminal game makes, as ``(cards, index)``."""
    from climbrl.serve.table import Table

    calls: list[tuple] = []
    real = Table.move

    def move(self, turn, cards=None, index=None):
        calls.append((cards, index))
        return real(self, turn, cards=cards, index=index)

    monkeypatch.setattr(Table, "move", move)
    return calls


def test_dou_dizhu_reads_a_digit_as_a_card_and_a_hash_number_as_a_move(monkeypatch) -> None:
    from climbrl.play import play_doudizhu

    calls = _recorded_moves(monkeypatch)
    out: list[str] = []
    # douzero deal 0: seat 0 is the landlord and leads, holding 3 3 3; its listed move #3 is the solo 6
    play_doudizhu("douzero", seat=0, seed=0, ask=scripted(["3"]), out=out.append)
    cards, index = calls[0]
    assert index is None and len(cards) == 1 and cards[0].startswith("3#"), calls[0]  # the card 3, not move #3
    assert any(line.strip().startswith("#3 ") and "6 (solo)" in line for line in out), out  # how the list names it
    calls.clear()
    play_doudizhu("douzero", seat=0, seed=0, ask=scripted(["#3"]), out=out.append)
    assert calls[0] == (None, 3)


def test_the_auction_prompt_names_what_a_terminal_user_types() -> None:
    from climbrl.play import play_doudizhu

    prompts: list[str] = []
    out: list[str] = []
    answers = iter(["33", "3 4", "#9"])

    def ask(prompt: str) -> str:
        prompts.append(prompt)
        try:
            return next(answers)
        except StopIteration:
            raise EOFError from None

    # standard deal 0: seat 0 opens the auction
    assert play_doudizhu("standard", seat=0, seed=0, ask=ask, out=out.append) is None
    text = "\n".join(out)
    assert prompts[0] == "your bid (bid 1, bid 2 or bid 3, or pass): ", prompts
    assert "buttons" not in text
    assert text.count("the auction is on: type bid 1, bid 2 or bid 3, or pass") == 2, text  # 33 and 3 4 are cards
    assert "no legal move number 9" in text
