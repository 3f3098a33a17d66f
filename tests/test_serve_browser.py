"""climbrl serve in a real browser (issues 27 and 48): Debian's Chromium driven by Playwright
(``tests/conftest.py``), against the real server started as a user starts it (``climbrl serve``).

A whole game of each kind is played to the end at a desktop's size (1280 x 800) and a phone's
(390 x 844): Dou Dizhu with the auction, by clicks; Big 2 by clicks, then a second deal by the
keyboard alone. On every turn nothing overflows the viewport (no horizontal scroll, every card
inside its row). The agents' plays appear one at a time (the page's log of what it drew: one move
more each time, the pause apart); the session's score adds up over two deals and survives a
reload; Hint selects one legal move; an illegal selection is refused with its message; the
reasoning panel is opened; a replay steps through its table view and its move list; a reload
keeps the game; the default opponent is the strongest shipped model, named with its numbers.

The screenshots go to ``CLIMBRL_SCREENSHOTS`` when set (the README's come from there: desktop
``NAME.png``, phone ``NAME-phone.png``), else to the test's folder.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PAUSE_MS = 40  # the agents' pause in these tests (the page's default is 600 ms)
DESKTOP, PHONE = (1280, 800), (390, 844)
SHIPPED = "big2-long"  # the strongest shipped Big 2 model (copied into the served folder)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """``climbrl serve --port 0`` over a project folder holding one trained policy (a tiny network)
    and the strongest shipped Big 2 model with its manifest."""
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
    shutil.copytree(REPO / "models" / SHIPPED, root / "models" / SHIPPED)
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


def _shot(page, shots, name, size) -> None:
    page.screenshot(path=str(shots / f"{name}{'' if size == DESKTOP else '-phone'}.png"), full_page=True)


def _open(page, url, size) -> None:
    page.set_viewport_size({"width": size[0], "height": size[1]})
    page.goto(f"{url}?pause={PAUSE_MS}")
    page.wait_for_selector("#start")


def _start(page, url, game, opponents, seed, size=DESKTOP, advisor="", preset=None, open_hands=False):
    """A new game from the setup form (``opponents=None``: the page's default opponents)."""
    _open(page, url, size)
    page.select_option("#game", game)
    if preset:
        page.select_option("#preset", preset)
    for j, spec in enumerate(opponents or []):
        page.fill(f"#opp{j}", spec)
    page.fill("#seed", str(seed))
    if advisor:
        page.fill("#advisor", advisor)
    if open_hands:
        page.check("#open-hands")
    page.click("#start")
    page.wait_for_selector("#play:not([hidden])")
    _wait_for_person(page)


def _wait_for_person(page) -> None:
    """Until the agents have played (one at a time) and it is the person's turn or the game is over."""
    page.wait_for_function("view && (view.over || view.your_turn) && thinking === null", timeout=120_000)


def _legal(page):
    return page.evaluate("view.your_turn ? view.legal : []")


OVERFLOW = """() => {
  const bad = [];
  const root = document.documentElement;
  if (root.scrollWidth > window.innerWidth) bad.push(`the page is ${root.scrollWidth} px wide`);
  for (const face of document.querySelectorAll('.card .face')) {
    const r = face.getBoundingClientRect();
    if (!r.width) continue;  // a hidden section
    const row = face.closest('.cards').getBoundingClientRect();
    const id = face.parentElement.dataset.id || 'a card';
    if (r.left < row.left - 1 || r.right > row.right + 1 || r.top < row.top - 1 || r.bottom > row.bottom + 1)
      bad.push(`${id} lies outside its row`);
    if (r.left < -1 || r.right > window.innerWidth + 1) bad.push(`${id} lies outside the viewport`);
  }
  for (const box of document.querySelectorAll('.seat, .center, #hand, #actions button')) {
    const r = box.getBoundingClientRect();
    if (r.width && (r.left < -1 || r.right > window.innerWidth + 1)) bad.push(`${box.id || box.className} overflows`);
  }
  return bad;
}"""


def _no_overflow(page) -> None:
    bad = page.evaluate(OVERFLOW)
    assert not bad, bad[:10]


def _one_at_a_time(page) -> int:
    """The page drew the agents' moves one at a time: each table it drew (for one game) holds at
    most one move more than the one before, and agents' moves came at least the pause apart.
    Returns the number of agents' moves seen arriving."""
    log = page.evaluate("climbrlRenders")
    by_game: dict[str, list] = {}
    for entry in log:
        by_game.setdefault(entry["id"], []).append(entry)
    agent_moves = 0
    for entries in by_game.values():
        for a, b in zip(entries, entries[1:], strict=False):
            assert b["moves"] - a["moves"] <= 1, (a, b)
        arrivals = [b for a, b in zip(entries, entries[1:], strict=False)
                    if b["moves"] > a["moves"] and a["thinking"] is not None]
        agent_moves += len(arrivals)
        thought = [a for a in entries if a["thinking"] is not None]
        for arrival in arrivals:  # each agent's play came after its "thinking..." was shown for the pause
            started = max(t["at"] for t in thought if t["at"] < arrival["at"])
            assert arrival["at"] - started >= PAUSE_MS * 0.9, (arrival, started)
    return agent_moves


def _selected(page) -> list[str]:
    return sorted(page.evaluate("[...selected]"))


def _play_by_clicks(page, max_turns=200, check=None):
    """The person's turns until the game ends: bids by their buttons; plays by clicking the cards
    of the first legal move that plays cards (a long one through the hint's list of every legal
    move), or Pass. Each action waits for the agents' answers before the next."""
    for _ in range(max_turns):
        _wait_for_person(page)
        if check:
            check(page)
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
            elif moves:  # a long move: Hint, then its list of every legal move, which selects the cards
                page.click("#hint-btn")
                page.click("#all-moves-btn")
                exact = re.compile(f"^{re.escape(moves[0]['label'])}$")
                page.locator("#hints button.legal", has_text=exact).first.click()
                assert _selected(page) == sorted(c["id"] for c in moves[0]["cards"])
                page.click("#play-btn")
                page.wait_for_function(f"view.turn > {turn} || document.querySelector('#options button.option')")
                if page.evaluate(f"view.turn === {turn}"):  # cards that make several moves: the one meant
                    page.locator("#options button.option", has_text=exact).first.click()
            else:
                page.click("#pass-btn")
        page.wait_for_function(f"view.turn > {turn}")
    raise AssertionError("the game did not end")


KEYS = {"10": "t", "T": "t"}


def _play_by_keyboard(page, max_turns=200):
    """The person's turns by the keyboard alone: a move's ranks typed (each key selects the next
    card of its rank), Enter to play it, P to pass; a move is chosen that typing can select."""
    for _ in range(max_turns):
        _wait_for_person(page)
        _no_overflow(page)
        if page.evaluate("view.over"):
            return
        turn = page.evaluate("view.turn")
        hand = page.evaluate("view.hand")
        by_rank: dict[str, list[str]] = {}
        for c in hand:
            by_rank.setdefault(c["rank"], []).append(c["id"])
        typed = None
        for m in sorted((m for m in _legal(page) if not m["pass"]), key=lambda m: -len(m["cards"])):
            ranks: dict[str, list[str]] = {}
            for c in m["cards"]:
                ranks.setdefault(c["rank"], []).append(c["id"])
            if all(sorted(ids) == sorted(by_rank[r][:len(ids)]) for r, ids in ranks.items()):
                typed = m
                break
        if typed is None:
            page.keyboard.press("p")
        else:
            for c in typed["cards"]:
                page.keyboard.press(KEYS.get(c["rank"], c["rank"].lower()))
            assert _selected(page) == sorted(c["id"] for c in typed["cards"])
            page.keyboard.press("Enter")
        page.wait_for_function(f"view.turn > {turn}")
    raise AssertionError("the game did not end")


def _hint_selects_one_legal_move(page) -> None:
    """Hint selects the cards of one legal move (the advisor's best); the second click lists them all."""
    for _ in range(60):
        _wait_for_person(page)
        page.click("#hint-btn")
        page.wait_for_selector("#hint-move")
        if page.text_content("#hint-move") != "pass":
            break
        turn = page.evaluate("view.turn")
        page.click("#pass-btn")
        page.wait_for_function(f"view.turn > {turn}")
    chosen = _selected(page)
    matching = [m for m in _legal(page) if sorted(c["id"] for c in m["cards"]) == chosen]
    assert chosen and len(matching) == 1, (chosen, matching)
    assert matching[0]["label"] == page.text_content("#hint-move")
    page.click("#hint-btn")  # the second click: every legal move
    page.wait_for_selector("#hints .list button.legal")
    assert page.locator("#hints .list button.legal").count() == len(_legal(page))


def _session(page) -> tuple[int, dict[int, float]]:
    deals = int(page.get_attribute("#session-summary", "data-deals"))
    rows = page.locator("#session table.score tr[data-seat]")
    points = {int(rows.nth(i).get_attribute("data-seat")): float(rows.nth(i).get_attribute("data-points"))
              for i in range(rows.count())}
    return deals, points


def _replay_steps_through_the_table(page, n: int) -> None:
    page.wait_for_selector("#replay-view:not([hidden])")
    assert page.text_content("#replay-pos").startswith("move 0 of")
    assert page.locator("#replay-felt .seat").count() == n
    assert page.locator("#replay-felt .seat .open-hand").count() == n  # every hand, at its seat
    frames = page.evaluate("replay.frames")
    page.click("#replay-next")
    page.click("#replay-next")
    assert page.text_content("#replay-pos").startswith("move 2 of")
    page.click("#replay-prev")
    assert page.text_content("#replay-pos").startswith("move 1 of")
    # the move list jumps to any step; the table shows that step's trick
    k = next((i for i, f in enumerate(frames) if f.get("to_beat") and i > 2), len(frames) - 1)
    page.locator(f"#replay-moves li[data-step='{k}'] button").click()
    assert page.text_content("#replay-pos").startswith(f"move {k} of")
    assert page.locator("#replay-to-beat .card").count() == len(frames[k]["to_beat"]["cards"])
    assert [page.locator(f"#replay-felt .seat[data-seat='{s}'] .open-hand .card").count() for s in range(n)] == \
        [len(h) for h in frames[k]["hands"]]
    page.click("#replay-last")
    assert "Game over" in page.text_content("#replay-move")
    # an agent's move shows its reasoning, recorded when it played
    kinds = [(f.get("reasoning") or {}).get("kind") for f in frames]
    why = max(range(len(frames)), key=lambda i: (kinds[i] in ("policy", "search", "q"), kinds[i] == "rule", i))
    page.locator(f"#replay-moves li[data-step='{why}'] button").click()
    page.wait_for_selector("#replay-reasoning table.reasons tr.chosen")
    assert frames[why]["move"]["label"] in page.text_content("#replay-reasoning")
    _no_overflow(page)


@pytest.mark.parametrize("size", [DESKTOP, PHONE], ids=["desktop", "phone-open-cards"])
def test_dou_dizhu_with_the_auction_by_clicks(page, server, shots, size) -> None:
    url, _ = server
    opened = size == PHONE  # on the phone, with open cards: every hand at its seat, played the same way
    _start(page, url, "doudizhu", ["checkpoint:runs/tiny/policy.pt", "heuristic"], seed=5, size=size,
           advisor="search:S=4,K=3", open_hands=opened)
    assert page.locator("#felt .seat .open-hand").count() == (2 if opened else 0)
    assert "bid or pass" in page.text_content("#status")
    assert page.locator("#bids button.bid").count() >= 2
    assert page.locator("#kitty .card.back").count() == 3  # the kitty, face down in the middle
    _no_overflow(page)
    if size == DESKTOP:
        page.screenshot(path=str(shots / "doudizhu-auction.png"), full_page=True)
    page.locator("#bids button.bid").last.click()  # bid 3: the person is the landlord
    page.wait_for_function("view.phase === 'play' && view.your_turn")
    assert "landlord" in page.text_content("#history")
    assert "you are the landlord (stake 3) and take the kitty" in page.text_content("#history")
    assert page.locator("#kitty .card:not(.back)").count() == 3
    me = page.locator(f"#felt .seat[data-seat='{page.evaluate('view.seat')}']")
    assert "landlord" in me.text_content() and "bid 3" in me.text_content()  # the bid, at the seat
    assert page.locator("#felt .seat .tag.peasant").count() == 2
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
    _no_overflow(page)
    _shot(page, shots, "doudizhu-refused", size)
    page.click("#clear-btn")
    assert page.text_content("#message") == ""  # the refusal goes with the selection
    page.click("#play-btn")  # nothing selected: said so, not a silent pass
    assert "Select the cards" in page.text_content("#message") and page.evaluate("view.turn") == before
    if size == DESKTOP:
        page.click("#advice-btn")  # the advisor's view of the person's legal moves: the search's candidates
        page.wait_for_selector("#reasoning table.reasons")
        assert "mean points" in page.text_content("#reasoning") and "win share" in page.text_content("#reasoning")
        page.locator("#reasoning tr.pick").first.click()  # a row selects its move
        assert _selected(page)
        page.screenshot(path=str(shots / "doudizhu-advisor-search.png"), full_page=True)
    page.reload()  # a reload keeps the game
    page.wait_for_selector("#play:not([hidden])")
    assert page.evaluate("view.turn") == before and page.locator("#hand .card").count() == 20
    _play_by_clicks(page, check=_no_overflow)
    assert "Game over" in page.text_content("#status")
    assert _one_at_a_time(page) > 0
    page.locator("#history button.why").first.click()
    page.wait_for_selector("#reasoning table.reasons tr.chosen")
    assert "probability" in page.text_content("#reasoning") or "rule agent" in page.text_content("#reasoning")
    _no_overflow(page)
    _shot(page, shots, "doudizhu-over", size)
    # the replay: the table at every step, every hand visible, forwards and back, and its move list
    page.click("#replay-this")
    _replay_steps_through_the_table(page, 3)
    _shot(page, shots, "replay", size)


def test_big2_a_session_by_clicks_then_by_the_keyboard_and_a_second_tab(page, server, shots) -> None:
    url, root = server
    _start(page, url, "big2", ["heuristic", "random", "search:S=8,K=4"], seed=3)
    first = page.evaluate("view.id")
    names = page.evaluate("view.names")
    other = page.context.new_page()  # a second tab plays its own game
    _start(other, url, "big2", ["random"], seed=4)
    assert other.evaluate("view.id") != first
    page.bring_to_front()
    assert [page.locator(f"#felt .seat.pos-{p}").count() for p in ("bottom", "right", "top", "left")] == [1, 1, 1, 1]
    assert page.get_attribute("#felt .seat[data-seat='3']", "title") == "search:S=8,K=4"  # the full spec
    assert page.text_content("#felt .seat[data-seat='3'] .name") == "search"  # the short name
    _hint_selects_one_legal_move(page)
    _no_overflow(page)
    page.screenshot(path=str(shots / "big2.png"), full_page=True)
    turn = page.evaluate("view.turn")
    page.dblclick("#play-btn")  # a double click plays the hinted move once, and says nothing of another tab
    page.wait_for_function(f"view.turn > {turn}")
    _wait_for_person(page)
    assert "another tab" not in page.text_content("#message")
    played = [e for e in page.evaluate("view.events") if e["seat"] == 0 and e["phase"] == "play" and not e["pass"]]
    assert len(played) == 1
    _play_by_clicks(page, check=_no_overflow)
    assert "Game over" in page.text_content("#status")
    deal1 = page.evaluate("view.result.returns")
    assert _session(page) == (1, {s: pytest.approx(r) for s, r in enumerate(deal1)})
    # New deal: the same seats and agents, the next deal; played by the keyboard alone
    page.click("#again")
    page.wait_for_function(f"view.id !== '{first}'")
    _wait_for_person(page)
    assert page.evaluate("view.names") == names and page.evaluate("view.seed") == 4
    assert page.text_content("#message") == ""
    for _ in range(40):  # every card is reached with Tab, and read out by its label
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.classList.contains('card')"):
            break
    card = page.evaluate("[document.activeElement.dataset.id, document.activeElement.getAttribute('aria-label')]")
    assert card[0] and re.match(r"^(\d+|jack|queen|king|ace) of (clubs|diamonds|hearts|spades)$", card[1]), card
    page.keyboard.press(" ")
    assert _selected(page) == [card[0]]
    page.keyboard.press("Escape")
    assert _selected(page) == []
    _play_by_keyboard(page)
    assert "Game over" in page.text_content("#status")
    assert _one_at_a_time(page) > 10
    deal2 = page.evaluate("view.result.returns")
    total = {s: pytest.approx(a + b) for s, (a, b) in enumerate(zip(deal1, deal2, strict=True))}
    assert _session(page) == (2, total)
    page.reload()  # the session survives a reload
    page.wait_for_selector("#session-summary")
    assert _session(page) == (2, total)
    other.reload()
    other.wait_for_selector("#play:not([hidden])")
    assert other.evaluate("view.turn") <= 1 and not other.is_visible("#result")  # untouched by the first tab
    # the finished games are listed with the replays: date, game, seats, result
    page.click("#nav-replays")
    page.wait_for_selector("#records a.record")
    row = page.locator("#records tr").first.text_content()
    assert "Big 2 (paper)" in row and "search" in row and ("you won" in row or "you lost" in row)
    assert re.search(r"\d{4}-\d\d-\d\d \d\d:\d\d", row)
    page.locator("#records a.record").first.click()
    _replay_steps_through_the_table(page, 4)
    # a game of a pipeline match, played again and checked against the record
    page.fill("#match-deal", "3")
    page.fill("#match-seat", "2")
    page.click("#match-replay")
    page.wait_for_function("document.getElementById('replay-check').textContent.length > 0")
    assert "are the record's" in page.text_content("#replay-check")
    assert page.text_content("#match-progress") == ""  # no stale status line
    page.click("#replay-last")
    assert "Game over" in page.text_content("#replay-move")
    assert any(p.name.startswith("big2-paper-seed3") for p in (root / "runs" / "played").iterdir())


def test_big2_on_a_phone_against_the_strongest_shipped_model(page, server, shots) -> None:
    """The page's default opponent is the strongest shipped model, named with its manifest's
    headline numbers; a whole game at a phone's size."""
    url, _ = server
    manifest = json.loads((REPO / "models" / SHIPPED / "model.json").read_text())
    rate = manifest["final"]["matches"]["heuristic"]["all"]["win_rate"]
    _open(page, url, PHONE)
    assert page.input_value("#opp0") == f"checkpoint:models/{SHIPPED}/policy.pt"
    said = page.text_content("#default-opponent")
    assert SHIPPED in said and f"{100 * rate:.1f}%" in said and "heuristic" in said
    _no_overflow(page)
    page.screenshot(path=str(shots / "setup-phone.png"), full_page=True)
    _start(page, url, "big2", None, seed=8, size=PHONE)
    info = page.text_content("#opponent-info")
    assert SHIPPED in info and f"{100 * rate:.1f}%" in info
    assert page.text_content("#felt .seat[data-seat='1'] .name") == SHIPPED
    _no_overflow(page)
    page.screenshot(path=str(shots / "big2-phone.png"), full_page=True)
    _play_by_clicks(page, check=_no_overflow)
    assert "Game over" in page.text_content("#status")
    assert _one_at_a_time(page) > 10
    assert _session(page)[0] == 1
