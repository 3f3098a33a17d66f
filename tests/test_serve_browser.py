"""climbrl serve in a real browser (issue 27): Debian's Chromium driven by Playwright
(``tests/conftest.py``), against the real server started as a user starts it (``climbrl serve``).

A whole Dou Dizhu game with the auction and a whole Big 2 game are played by clicks to the end;
an illegal selection is refused with its message; the reasoning panel is opened; a replay is
stepped through; a reload keeps the game. The screenshots go to ``CLIMBRL_SCREENSHOTS`` when set
(the README's come from there), else to the test's folder.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """``climbrl serve --port 0`` over a project folder holding one trained policy (a tiny network)."""
    import torch

    from climbrl.encoders import make_encoder
    from climbrl.learn.checkpoint import network_payload, save_atomic
    from climbrl.learn.network import make_net

    root = tmp_path_factory.mktemp("project")
    enc = make_encoder("doudizhu", "")
    net = make_net(state_dim=enc.state_dim, move_dim=enc.move_dim, hidden=16,
                   generator=torch.Generator().manual_seed(0))
    (root / "runs" / "tiny").mkdir(parents=True)
    save_atomic(network_payload(net, "ppo", 1, enc), root / "runs" / "tiny" / "policy.pt")
    from tests.test_serve import _match_record

    _match_record(root)
    proc = subprocess.Popen([sys.executable, "-m", "climbrl.cli", "serve", "--port", "0", "--root", str(root)],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        line = proc.stdout.readline()
        m = re.search(r"http://127\.0\.0\.1:\d+/", line)
        assert m, f"climbrl serve printed {line!r}"
        yield m.group(0), root
    finally:
        proc.terminate()
        proc.wait(timeout=30)


@pytest.fixture()
def shots(tmp_path):
    folder = Path(os.environ.get("CLIMBRL_SCREENSHOTS") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _start(page, url, game, opponents, seed, advisor="", preset=None):
    page.goto(url)
    page.wait_for_selector("#start")
    page.select_option("#game", game)
    if preset:
        page.select_option("#preset", preset)
    for j, spec in enumerate(opponents):
        page.fill(f"#opp{j}", spec)
    page.fill("#seed", str(seed))
    if advisor:
        page.fill("#advisor", advisor)
    page.click("#start")
    page.wait_for_selector("#play:not([hidden])")


def _legal(page):
    return page.evaluate("view.your_turn ? view.legal : []")


def _play_by_clicks(page, max_turns=200):
    """The person's turns until the game ends: bids by their buttons; plays by clicking the cards
    of the first legal move that plays cards (a long one through the hint list), or Pass. Each
    action waits for the server's answer before the next."""
    for _ in range(max_turns):
        if page.evaluate("view.over"):
            page.wait_for_selector("#result:not([hidden])")
            return
        turn = page.evaluate("view.turn")
        if page.evaluate("view.phase") == "bid":
            page.locator("#bids button.bid").last.click()  # the highest bid
        else:
            moves = [m for m in _legal(page) if not m["pass"]]
            if moves and len(moves[0]["cards"]) <= 4:
                for c in moves[0]["cards"]:
                    page.click(f"#hand .card[data-id='{c['id']}']")
                assert page.locator("#hand .card.selected").count() == len(moves[0]["cards"])
                page.click("#play-btn")
            elif moves:  # a long move: pick it in the hint list, which selects its cards
                page.click("#hint-btn")
                page.locator("#hints button.legal").first.click()
                page.click("#play-btn")
            else:
                page.click("#pass-btn")
        page.wait_for_function(f"view.turn > {turn}")
    raise AssertionError("the game did not end")


def test_dou_dizhu_with_the_auction_by_clicks(page, server, shots) -> None:
    url, _ = server
    _start(page, url, "doudizhu", ["checkpoint:runs/tiny/policy.pt", "heuristic"], seed=5, advisor="search:S=4,K=3")
    assert "bid or pass" in page.text_content("#status")
    assert page.locator("#bids button.bid").count() >= 2
    page.screenshot(path=str(shots / "doudizhu-auction.png"), full_page=True)
    page.locator("#bids button.bid").last.click()  # bid 3: the person is the landlord
    page.wait_for_function("view.phase === 'play' && view.your_turn")
    assert "landlord" in page.text_content("#history")
    assert page.locator("#kitty .card").count() == 3
    # an illegal selection: two cards of different ranks are no combination
    hand = page.evaluate("view.hand")
    pair = [hand[0]["id"], next(c["id"] for c in hand if c["rank"] != hand[0]["rank"])]
    before = page.evaluate("view.turn")
    for c in pair:
        page.click(f"#hand .card[data-id='{c}']")
    page.click("#play-btn")
    page.wait_for_function("document.getElementById('message').textContent.length > 0")
    assert "not a combination" in page.text_content("#message")
    assert page.evaluate("view.turn") == before and page.locator("#hand .card").count() == 20
    page.screenshot(path=str(shots / "doudizhu-refused.png"), full_page=True)
    page.click("#clear-btn")
    page.click("#advice-btn")  # the advisor's view of the person's legal moves: the search's candidates
    page.wait_for_selector("#reasoning table.reasons")
    assert "mean points" in page.text_content("#reasoning") and "win share" in page.text_content("#reasoning")
    page.screenshot(path=str(shots / "doudizhu-advisor-search.png"), full_page=True)
    page.reload()  # a reload keeps the game
    page.wait_for_selector("#play:not([hidden])")
    assert page.evaluate("view.turn") == before and page.locator("#hand .card").count() == 20
    _play_by_clicks(page)
    assert "Game over" in page.text_content("#status")
    page.locator("#history button.why").first.click()
    page.wait_for_selector("#reasoning table.reasons tr.chosen")
    assert "probability" in page.text_content("#reasoning") or "rule agent" in page.text_content("#reasoning")
    page.screenshot(path=str(shots / "doudizhu-over.png"), full_page=True)
    # the replay, every hand visible, forwards and back
    page.click("#replay-this")
    page.wait_for_selector("#replay-view:not([hidden])")
    assert page.text_content("#replay-pos").startswith("move 0 of")
    assert page.locator("#replay-hands .replay-seat").count() == 3
    page.click("#replay-next")
    page.click("#replay-next")
    assert page.text_content("#replay-pos").startswith("move 2 of")
    page.click("#replay-prev")
    assert page.text_content("#replay-pos").startswith("move 1 of")
    page.click("#replay-last")
    assert "Game over" in page.text_content("#replay-move")
    page.screenshot(path=str(shots / "replay.png"), full_page=True)


def test_big2_by_clicks_and_a_second_tab(page, server, shots) -> None:
    url, root = server
    _start(page, url, "big2", ["heuristic", "random", "search:S=8,K=4"], seed=3)
    first = page.evaluate("view.id")
    other = page.context.new_page()  # a second tab plays its own game
    _start(other, url, "big2", ["random"], seed=4)
    assert other.evaluate("view.id") != first
    page.bring_to_front()
    page.screenshot(path=str(shots / "big2.png"), full_page=True)
    _play_by_clicks(page)
    assert "Game over" in page.text_content("#status")
    other.reload()
    other.wait_for_selector("#play:not([hidden])")
    assert other.evaluate("view.turn") <= 1 and not other.is_visible("#result")  # untouched by the first tab
    # the finished game is listed with the replays
    page.click("#nav-replays")
    page.wait_for_selector("#records a.record")
    page.locator("#records a.record").first.click()
    page.wait_for_selector("#replay-view:not([hidden])")
    assert page.locator("#replay-hands .replay-seat").count() == 4
    # a game of a pipeline match, played again and checked against the record
    page.fill("#match-deal", "3")
    page.fill("#match-seat", "2")
    page.click("#match-replay")
    page.wait_for_function("document.getElementById('replay-check').textContent.length > 0")
    assert "are the record's" in page.text_content("#replay-check")
    page.click("#replay-last")
    assert "Game over" in page.text_content("#replay-move")
    assert any(p.name.startswith("big2-paper-seed3") for p in (root / "runs" / "played").iterdir())
