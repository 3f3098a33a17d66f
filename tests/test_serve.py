"""climbrl serve (issue 27): the application's routes, played through its HTTP interface.

Whole games in both games (the Dou Dizhu auction included), the person's hidden information
(checked on the responses themselves), tampered and stale requests (a clear message, the game
unchanged, the server still serving), several games at once, replays of finished and uploaded
records, and the terminal game of Dou Dizhu that shares the table.
"""

from __future__ import annotations

import json
import re
import time

import pytest
from fastapi.testclient import TestClient

from climbrl.serve.app import create_app
from climbrl.serve.server import check_host

LOCAL = "http://127.0.0.1"  # the server refuses any other Host (issue 51)
JSON = {"Content-Type": "application/json"}


@pytest.fixture()
def client(tmp_path):
    return TestClient(create_app(tmp_path, record_dir=tmp_path / "played"), base_url=LOCAL)


def new(client, **body):
    r = client.post("/api/games", json=body)
    assert r.status_code == 201, r.text
    return r.json()


def play_out(client, view, pick=lambda v: v["legal"][-1]["index"], check=None):
    """Play the person's turns until the game ends (``pick``: the legal move's index)."""
    while not view["over"]:
        assert view["your_turn"] and view["legal"]
        r = client.post(f"/api/games/{view['id']}/move", json={"turn": view["turn"], "index": pick(view)})
        assert r.status_code == 200, r.text
        view = r.json()
        if check:
            check(view)
    return view


@pytest.mark.parametrize(("game", "preset"), [("doudizhu", "standard"), ("doudizhu", "online"), ("big2", "paper"),
                                              ("doudizhu", "douzero"), ("big2", "charlesworth")])
def test_a_whole_game_to_the_end(client, game, preset) -> None:
    view = new(client, game=game, preset=preset, opponents=["heuristic"], seat=1, seed=7)
    if preset in ("standard", "online"):  # the auction comes first, the person bids in it
        first_turns = [e for e in view["events"] if e["phase"] == "play"]
        assert not first_turns and view["phase"] == "bid" and view["your_turn"]
        assert {m["label"] for m in view["legal"]} >= {"pass"}
    end = play_out(client, view)
    n = 4 if game == "big2" else 3
    assert end["result"]["winners"] and len(end["result"]["returns"]) == n and len(end["hands"]) == n
    assert end["record_file"].endswith(".json")
    names = [r["name"] for r in client.get("/api/records").json()]
    assert end["record_file"] in names
    # the record replays through the engine to the same end, every hand visible at every step
    rep = client.get(f"/api/games/{end['id']}/replay").json()
    assert rep["result"]["winners"] == end["result"]["winners"]
    assert len(rep["frames"]) == end["turn"] + 1
    assert all(len(f["hands"]) == n for f in rep["frames"])
    first = rep["frames"][0]  # the deal (after Big 2's automatic first play, under rules that make one)
    kitty = len(first["kitty"]) if first.get("landlord", 0) < 0 else 0  # not yet in the landlord's hand
    auto = sum(len(e["cards"]) for e in end["events"] if e["note"] == "played automatically")
    assert sum(len(h) for h in first["hands"]) + kitty + auto == (52 if game == "big2" else 54)


def test_the_record_download_is_what_the_engine_replays(client) -> None:
    from climbrl.games.doudizhu.state import load_game

    end = play_out(client, new(client, game="doudizhu", seed=3))
    r = client.get(f"/api/games/{end['id']}/record")
    assert r.status_code == 200 and "attachment" in r.headers["content-disposition"]
    state = load_game(r.text)
    assert state.is_terminal() and list(state.result().winners) == end["result"]["winners"]
    assert client.post("/api/replay", content=r.text, headers=JSON).json()["result"]["winners"] == \
        end["result"]["winners"]


def _cards_outside_public_fields(view) -> str:
    """The response's text without the fields that may show cards, and without the table's id:
    a random URL-safe token, which may spell a card id by chance (``...Sc9D...``)."""
    public = {"hand", "events", "to_beat", "trick", "kitty", "legal", "must_include", "id"}
    return json.dumps({k: v for k, v in view.items() if k not in public})


@pytest.mark.parametrize("game", ["big2", "doudizhu"])
def test_no_response_shows_another_seats_cards(client, game) -> None:
    """Every response of a closed game: no other seat's hand, no agent's reasoning (its legal
    moves would show its cards), no kitty before the landlord takes it; Big 2's card ids are
    unique, so no card another seat holds appears anywhere in the response."""
    seen = []

    def check(view):
        if view["over"]:
            return
        seen.append(view)
        assert "hands" not in view
        assert all(e["reasoning"] is None for e in view["events"])
        if view.get("phase") == "bid":
            assert view["kitty"] == []
        card = r"c\d+" if game == "big2" else r"[0-9TJQKA2BR]#\d"
        assert not re.search(card, _cards_outside_public_fields(view))

    view = new(client, game=game, opponents=["heuristic"], seat=0, seed=11)
    check(view)
    end = play_out(client, view, pick=lambda v: v["legal"][0]["index"], check=check)
    assert len(seen) > 3 and "hands" in end  # once over, every hand is shown


def test_big2_responses_hold_no_card_of_another_hand(client, monkeypatch) -> None:
    """On the engine's state itself: each response's text against the other seats' live hands."""
    from climbrl.serve import table as table_module

    tables = []
    real = table_module.Table.__init__

    def spy(self, *a, **k):
        real(self, *a, **k)
        tables.append(self)

    monkeypatch.setattr(table_module.Table, "__init__", spy)
    view = new(client, game="big2", opponents=["random"], seat=2, seed=5)
    t = tables[0]
    while not view["over"]:
        text = json.dumps(view)
        for s in range(4):
            if s != 2:
                for c in range(52):
                    if t.state.hands[s] >> c & 1:
                        assert f'"c{c}"' not in text, (s, c)
        view = client.post(f"/api/games/{view['id']}/move",
                           json={"turn": view["turn"], "index": view["legal"][-1]["index"]}).json()


def test_an_illegal_selection_is_refused_with_its_reason_and_changes_nothing(client) -> None:
    view = new(client, game="big2", preset="paper", opponents=["heuristic"], seat=0, seed=1)
    gid, before = view["id"], view
    hand = [c["id"] for c in view["hand"]]
    bad = [
        ({"turn": view["turn"], "cards": hand[:2] if hand[0][1:] != hand[1][1:] else hand[:3]}, 400, None),
        ({"turn": view["turn"], "cards": ["c99"]}, 400, "unknown card"),
        ({"turn": view["turn"], "cards": [f"c{c}" for c in range(52) if f"c{c}" not in hand][:1]}, 400, "do not hold"),
        ({"turn": view["turn"] + 5, "cards": []}, 409, "stale"),
        ({"turn": view["turn"], "index": 10_000}, 400, "no legal move"),
        ({"turn": view["turn"]}, 400, "either its cards or its index"),
        ({"turn": "x", "cards": []}, 422, "malformed"),
        ({"turn": view["turn"], "cards": [], "evil": 1}, 422, "malformed"),
    ]
    for body, status, words in bad:
        r = client.post(f"/api/games/{gid}/move", json=body)
        assert r.status_code == status, (body, r.text)
        assert r.json()["error"] and (words is None or words in r.json()["error"]), r.json()
    r = client.post(f"/api/games/{gid}/move", content=b"{not json", headers={"Content-Type": "application/json"})
    assert r.status_code == 422 and "malformed" in r.json()["error"]
    assert client.get(f"/api/games/{gid}").json() == before  # nothing changed


def _facing_a_play(game, seed, lead):
    """The first decision of deal ``seed`` where the seat to act faces a play of type ``lead``
    and may answer it (a leader plays its lowest move of that type when it has one)."""
    from climbrl.agents import Decision

    state = game.new_game(seed=seed)
    while not state.is_terminal():
        d = Decision.from_state(state)
        if d.observation.to_beat and d.observation.to_beat_type == lead and len(d.moves) > 1:
            return d
        if d.observation.leading and lead in d.types:
            state.apply(d.moves[d.types.index(lead)])
        else:
            state.apply(d.moves[1] if len(d.moves) > 1 else d.moves[0])
    return None
    raise AssertionError("no such decision")


def test_a_big2_selection_that_does_not_beat_the_table_says_so() -> None:
    from climbrl.cards import mask_to_cards
    from climbrl.games.big2.combos import PAIR, SINGLE, classify
    from climbrl.games.registry import make_game
    from climbrl.serve.presenters import Big2Presenter, Refused

    game = make_game("big2:paper")
    p = Big2Presenter(game)
    checked = set()
    for seed in range(40):
        d = _facing_a_play(game, seed, PAIR if seed % 2 else SINGLE)
        if d is None:
            continue
        typ = classify(d.observation.to_beat, game.rules)[0]
        hand = mask_to_cards(d.hand)
        if typ == SINGLE:  # a lower single does not beat it
            low = [c for c in hand if (1 << c) not in d.moves]
            if low:
                with pytest.raises(Refused, match="does not beat the single"):
                    p.select(d, [f"c{low[0]}"])
                checked.add("lower")
        elif typ == PAIR:  # a single cannot answer a pair
            with pytest.raises(Refused, match="a single cannot answer the pair"):
                p.select(d, [f"c{hand[0]}"])
            checked.add("kind")
        if checked == {"lower", "kind"}:
            break
    assert checked == {"lower", "kind"}


def test_ddz_refusals_and_several_readings_of_one_selection(client) -> None:
    from climbrl.agents import Decision
    from climbrl.games.registry import make_game
    from climbrl.serve.presenters import DdzPresenter, Refused

    game = make_game("doudizhu:douzero")
    p = DdzPresenter(game)
    state = game.new_game(seed=0)
    d = Decision.from_state(state)
    hand = p.hand_tokens(d.hand)
    with pytest.raises(Refused, match="cannot pass"):
        p.select(d, [])
    missing = next(r for r in "3456789TJQKA2" if f"{r}#3" not in {t["id"] for t in hand})
    with pytest.raises(Refused, match="do not hold"):
        p.select(d, [f"{missing}#0", f"{missing}#1", f"{missing}#2", f"{missing}#3"])
    with pytest.raises(Refused, match="unknown card"):
        p.select(d, ["Z#0"])
    # under OpenSpiel's rules (wings next to the plane) 333444555666 is a chain of four trios, and
    # also a plane of three with three single wings on either side: the person chooses
    osp = make_game("doudizhu:openspiel")
    hands = ["333444555666789TJ", "3456777888999TTTB", "JJJQQQQKKKKAAAA2R"]
    state = osp.new_game(seed=0, hands=hands, kitty="222", first_bidder=0)
    while state.current_player != 0 or state.phase != 1:
        state.apply(3 if 3 in state.legal_moves() else 0)
    d = Decision.from_state(state)
    readings = DdzPresenter(osp).select(d, [f"{r}#{k}" for r in "3456" for k in range(3)])
    assert len(readings) == 3


def test_unknown_agents_games_and_bad_settings_are_refused(client) -> None:
    cases = [
        ({"game": "chess"}, "unknown game"),
        ({"game": "big2", "preset": "nope"}, "unknown big2 preset"),
        ({"game": "big2", "opponents": ["nobody"]}, "unknown agent"),
        ({"game": "big2", "opponents": ["checkpoint:/no/such/file.pt"]}, "not found"),
        ({"game": "big2", "seat": 7}, "seat must be"),
        ({"game": "doudizhu", "opponents": ["heuristic"] * 3}, "name 1 or 2 opponents"),
        ({"game": "doudizhu", "preset": "standard", "opponents": ["search:S=0,K=2"]}, "S >= 1"),
        ({"game": "big2", "seed": -1}, "seed"),
    ]
    for body, words in cases:
        r = client.post("/api/games", json=body)
        assert r.status_code == 400 and words in r.json()["error"], (body, r.text)
    assert client.get("/api/games/nope").status_code == 404
    assert "no such game" in client.get("/api/games/nope").json()["error"]
    assert client.get("/api/catalog").status_code == 200  # still serving


def test_separate_games_do_not_interfere(client) -> None:
    a = new(client, game="big2", seed=1, opponents=["random"])
    b = new(client, game="doudizhu", seed=1, opponents=["random"])
    b_before = client.get(f"/api/games/{b['id']}").json()
    # a's move sent to b's address is stale or illegal there, and changes nothing in either
    r = client.post(f"/api/games/{b['id']}/move", json={"turn": a["turn"], "cards": [a["hand"][0]["id"]]})
    assert r.status_code in (400, 409)
    assert client.get(f"/api/games/{b['id']}").json() == b_before
    play_out(client, a)
    assert client.get(f"/api/games/{b['id']}").json() == b_before


def test_a_game_is_the_same_after_a_reload_and_replays_the_same_from_its_seed(client) -> None:
    a = new(client, game="doudizhu", seed=9, opponents=["heuristic"])
    assert client.get(f"/api/games/{a['id']}").json() == a
    b = new(client, game="doudizhu", seed=9, opponents=["heuristic"])
    assert [e["label"] for e in a["events"]] == [e["label"] for e in b["events"]] and a["hand"] == b["hand"]


def test_reasoning_of_learned_and_search_agents(tmp_path) -> None:
    """Open cards: a policy's probabilities sum to 1 over its legal moves; a search shows each
    candidate's win share and visits."""
    from climbrl.serve.table import Table

    t = Table("big2", "paper", ["search:S=6,K=3", "random", "random"], seat=0, seed=4, open_hands=True)
    v = t.view()
    while not v["over"] and not any(e["reasoning"] and e["reasoning"]["kind"] == "search" for e in v["events"]):
        t.move(v["turn"], index=v["legal"][-1]["index"])
        v = t.view()
    search = [e["reasoning"] for e in v["events"] if e["reasoning"] and e["reasoning"]["kind"] == "search"]
    assert search, "the search never searched"
    r = search[0]
    assert 2 <= len(r["rows"]) <= 3 and all(row["visits"] == 6 and 0 <= row["value"] <= 1 for row in r["rows"])
    assert sum(row["chosen"] for row in r["rows"]) == 1 and "hands" in v


def test_reasoning_of_the_dou_dizhu_search(tmp_path) -> None:
    """Dou Dizhu's search shows each candidate's win share and mean points, best points first,
    its choice among them; its bids are no search."""
    from climbrl.serve.table import Table

    t = Table("doudizhu", "standard", ["search:S=4,K=3", "heuristic"], seat=0, seed=2, open_hands=True)
    v = t.view()
    while not v["over"] and not any(e["reasoning"] and e["reasoning"]["kind"] == "search" for e in v["events"]):
        t.move(v["turn"], index=v["legal"][-1]["index"])
        v = t.view()
    search = [e["reasoning"] for e in v["events"] if e["reasoning"] and e["reasoning"]["kind"] == "search"]
    assert search, "the search never searched"
    r = search[0]
    assert 2 <= len(r["rows"]) <= 3 and all(row["visits"] == 4 and 0 <= row["value"] <= 1 for row in r["rows"])
    points = [row["points"] for row in r["rows"]]
    assert points == sorted(points, reverse=True) and r["rows"][0]["chosen"]
    bids = [e["reasoning"] for e in v["events"] if e.get("phase") == "bid" and e["reasoning"]]
    assert all(b["kind"] != "search" for b in bids)


def test_policy_reasoning_and_the_advisor(tmp_path) -> None:
    import torch

    from climbrl.encoders import make_encoder
    from climbrl.learn.checkpoint import network_payload, save_atomic
    from climbrl.learn.network import make_net
    from climbrl.serve.table import Table

    enc = make_encoder("doudizhu", "")
    net = make_net(state_dim=enc.state_dim, move_dim=enc.move_dim, hidden=16,
                   generator=torch.Generator().manual_seed(0))
    path = tmp_path / "policy.pt"
    save_atomic(network_payload(net, "ppo", 1, enc), path)
    spec = f"checkpoint:{path}"
    t = Table("doudizhu", "douzero", [spec], seat=1, seed=2, open_hands=True, advisor=spec)
    events = [e for e in t.view()["events"] if e["reasoning"]]
    assert events and events[0]["reasoning"]["kind"] in ("policy", "forced")
    full = [e["reasoning"] for e in events if e["reasoning"]["kind"] == "policy" and
            e["reasoning"]["n_legal"] <= 12]
    for r in full:
        assert abs(sum(row["value"] for row in r["rows"]) - 1) < 1e-6
    advice = t.advice(t.turn)
    assert advice["agent"] == spec and advice["rows"] and advice["n_legal"] == len(t.view()["legal"])
    before = t.view()
    t.advice(t.turn)  # asking twice changes nothing in the game
    assert t.view() == before


def test_a_tampered_record_is_refused(client) -> None:
    end = play_out(client, new(client, game="big2", seed=4))
    rec = json.loads(client.get(f"/api/games/{end['id']}/record").text)
    rec["moves"][3] = ["2S", "2H", "2D", "2C"]
    r = client.post("/api/replay", json=rec)
    assert r.status_code == 400 and "move 3" in r.json()["error"]
    for junk in (b"[]", b"not json", b'{"game": "chess"}'):
        assert client.post("/api/replay", content=junk, headers=JSON).status_code == 400
    assert client.get("/api/records/..%2Fsecret.json").status_code in (400, 404)


def test_the_record_waits_for_the_end(client) -> None:
    view = new(client, game="big2", seed=3)
    for path in ("record", "replay"):
        r = client.get(f"/api/games/{view['id']}/{path}")
        assert r.status_code == 400 and "once the game is over" in r.json()["error"]


def test_the_page_and_its_assets_are_served_here(client) -> None:
    page = client.get("/").text
    assert "<script src=\"/static/app.js\">" in page and "http" not in page.replace("http-equiv", "")
    for asset in ("app.js", "app.css"):
        r = client.get(f"/static/{asset}")
        assert r.status_code == 200 and "://" not in r.text  # no CDN, nothing from elsewhere


def test_the_server_binds_this_machine_only() -> None:
    for ok in ("127.0.0.1", "::1", "localhost"):
        check_host(ok)
    for bad in ("0.0.0.0", "192.168.1.4", "example.org", "::"):
        with pytest.raises(ValueError, match="SSH tunnel"):
            check_host(bad)


def test_catalog_lists_trained_policies(tmp_path) -> None:
    import torch

    from climbrl.encoders import make_encoder
    from climbrl.learn.checkpoint import network_payload, save_atomic
    from climbrl.learn.network import make_net
    from climbrl.serve.catalog import catalog

    enc = make_encoder("big2", "")
    net = make_net(state_dim=enc.state_dim, move_dim=enc.move_dim, hidden=8, generator=torch.Generator())
    (tmp_path / "runs" / "x").mkdir(parents=True)
    save_atomic(network_payload(net, "dqn", 1, enc), tmp_path / "runs" / "x" / "policy.pt")
    (tmp_path / "runs" / "y").mkdir()
    (tmp_path / "runs" / "y" / "policy.pt").write_bytes(b"garbage")
    c = catalog(tmp_path)
    specs = [a["spec"] for a in c["big2"]["agents"]]
    assert "checkpoint:runs/x/policy.pt" in specs and "checkpoint:runs/y/policy.pt" not in specs
    assert not any(a["spec"].startswith("checkpoint:") for a in c["doudizhu"]["agents"])
    assert c["doudizhu"]["presets"][0] == "standard" and c["big2"]["seats"] == 4


def test_terminal_dou_dizhu_with_the_auction() -> None:
    from climbrl.play import play_doudizhu

    said = []
    answers = iter(["bid 9", "bid 3"] + ["zz", "#0"] * 200)
    returns = play_doudizhu("standard", ("heuristic", "heuristic"), seat=0, seed=4, ask=lambda _: next(answers),
                            out=said.append)
    text = "\n".join(said)
    assert returns is not None and len(returns) == 3
    assert "landlord" in text and "game over" in text and "not understood" in text


def test_cli_serve_refuses_a_public_address(capsys) -> None:
    from climbrl.cli import main

    assert main(["serve", "--host", "0.0.0.0", "--port", "0"]) == 2
    assert "SSH tunnel" in capsys.readouterr().err


def _match_record(root, deals=12, agent="heuristic", opponent="random"):
    """A real match (the champion's record format) over a versioned deal set under ``root``."""
    from climbrl.agents.runner import deal_seeds
    from climbrl.evaluate.match import deal_wins

    seeds = deal_seeds(8, deals)
    (root / "data").mkdir(exist_ok=True)
    (root / "data" / "seeds.json").write_text(json.dumps({"deals": seeds}))
    wins = deal_wins(agent, [opponent], rules="paper", games=4 * deals, seed=2, seeds=seeds)
    rec = {"match": "m", "agent": agent, "opponent": opponent, "rules": "paper", "deal_set": "data/seeds.json",
           "deals": deals, "seat_seed": 2, "games": 4 * deals, "wins": sum(wins),
           "deal_wins": "".join(map(str, wins))}
    (root / "reports" / "matches").mkdir(parents=True, exist_ok=True)
    (root / "reports" / "matches" / "m.json").write_text(json.dumps(rec))
    return rec


def replay_match(client, body, timeout=120):
    """A match's game, replayed as a job (issue 51): started, then followed until it is done."""
    r = client.post("/api/matches/replay", json=body)
    assert r.status_code == 202, r.text
    job = r.json()
    deadline = time.monotonic() + timeout
    while job["state"] == "running":
        assert time.monotonic() < deadline, job
        time.sleep(0.2)
        r = client.get(f"/api/jobs/{job['job']}")
        assert r.status_code == 200, r.text
        job = r.json()
    return job["result"]


def test_a_pipeline_match_game_is_replayed_and_checked_against_its_record(tmp_path) -> None:
    rec = _match_record(tmp_path)
    client = TestClient(create_app(tmp_path), base_url=LOCAL)
    listed = client.get("/api/matches").json()
    assert [m["file"] for m in listed] == ["reports/matches/m.json"]
    for deal in (0, 5, 11):
        out = replay_match(client, {"file": "reports/matches/m.json", "deal": deal, "seat": 1})
        assert out["check"]["same"] and out["check"]["replayed_wins"] == [int(c) for c in rec["deal_wins"]]
        assert out["names"][1] == "heuristic" and out["result"]["winners"]
    # a record whose result differs (played on other deals, or by other code) is not passed off as its game
    k = 4
    rec["deal_wins"] = rec["deal_wins"][:k] + str((int(rec["deal_wins"][k]) + 1) % 5) + rec["deal_wins"][k + 1:]
    (tmp_path / "reports" / "matches" / "m.json").write_text(json.dumps(rec))
    out = replay_match(client, {"file": "reports/matches/m.json", "deal": k, "seat": 0})
    assert not out["check"]["same"] and "not its game" in out["check"]["text"]
    for body, words in (({"file": "../m.json"}, "no match record"), ({"file": "reports/matches/m.json", "deal": 99},
                                                                   "deals 0..11"),
                        ({"file": "reports/matches/m.json", "seat": 4}, "seats 0..3")):
        r = client.post("/api/matches/replay", json=body)
        assert r.status_code == 400 and words in r.json()["error"], r.text


# --- issue 48: the page's pacing, hint, session and replays -------------------------------------
def test_step_mode_moves_one_agent_at_a_time_and_shows_no_hidden_card(client) -> None:
    """A game started with ``step``: each agent's move is its own request (the page shows each
    play as it comes); every response holds no other seat's card; a step out of turn or stale is
    refused and changes nothing."""
    view = new(client, game="big2", opponents=["random", "heuristic", "search:S=4,K=2"], seat=2, seed=5, step=True)
    gid = view["id"]
    card = re.compile(r"c\d+")
    steps = 0
    while not view["over"]:
        assert "hands" not in view and all(e["reasoning"] is None for e in view["events"])
        assert not card.search(_cards_outside_public_fields(view))
        moves = len([e for e in view["events"] if e["phase"] != "note"])
        if view["your_turn"]:
            r = client.post(f"/api/games/{gid}/step", json={"turn": view["turn"]})
            assert r.status_code == 400 and "your turn" in r.json()["error"]
            r = client.post(f"/api/games/{gid}/move", json={"turn": view["turn"], "index": view["legal"][-1]["index"]})
        else:
            stale = client.post(f"/api/games/{gid}/step", json={"turn": view["turn"] - 1})
            assert stale.status_code == 409 and client.get(f"/api/games/{gid}").json() == view
            r = client.post(f"/api/games/{gid}/step", json={"turn": view["turn"]})
            steps += 1
        assert r.status_code == 200, r.text
        after = r.json()
        assert after["turn"] == view["turn"] + 1
        assert len([e for e in after["events"] if e["phase"] != "note"]) == moves + 1  # one move, no more
        view = after
    assert steps > 10 and view["record_file"]
    r = client.post(f"/api/games/{gid}/step", json={"turn": view["turn"]})
    assert r.status_code == 400 and "over" in r.json()["error"]


def test_the_hint_is_one_legal_move_the_advisor_s_or_the_heuristic_s(client) -> None:
    view = new(client, game="doudizhu", preset="douzero", opponents=["heuristic"], seat=0, seed=3)
    assert view["your_turn"]
    h = client.get(f"/api/games/{view['id']}/hint", params={"turn": view["turn"]}).json()
    assert h["agent"] == "heuristic" and h["choice"]["index"] in [m["index"] for m in view["legal"]]
    legal = {m["index"]: m for m in view["legal"]}
    assert h["choice"]["cards"] == legal[h["choice"]["index"]]["cards"]
    assert all("index" in row for row in h["rows"])
    assert client.get(f"/api/games/{view['id']}").json() == view  # asking changes nothing
    assert client.get(f"/api/games/{view['id']}/advice", params={"turn": view["turn"]}).status_code == 400
    stale = client.get(f"/api/games/{view['id']}/hint", params={"turn": view["turn"] + 1})
    assert stale.status_code == 409
    advised = new(client, game="big2", opponents=["heuristic"], seat=0, seed=3, advisor="greedy")
    h = client.get(f"/api/games/{advised['id']}/hint", params={"turn": advised["turn"]}).json()
    assert h["agent"] == "greedy" and h["rows"][0]["index"] == h["choice"]["index"]


def _stepwise(client, view, pick=lambda v: v["legal"][-1]["index"], until=lambda v: v["over"]):
    """A game started with ``step``: the person's moves (``pick``) and the agents' steps until ``until``."""
    while not until(view):
        if view["your_turn"]:
            r = client.post(f"/api/games/{view['id']}/move", json={"turn": view["turn"], "index": pick(view)})
        else:
            r = client.post(f"/api/games/{view['id']}/step", json={"turn": view["turn"]})
        assert r.status_code == 200, r.text
        view = r.json()
    return view


def test_the_landlord_note_bids_and_saved_games_listed_with_their_seats(client) -> None:
    view = new(client, game="doudizhu", preset="standard", opponents=["heuristic"], seat=1, seed=7, step=True)
    view = _stepwise(client, view, until=lambda v: v["over"] or v["phase"] == "play")
    notes = [e["note"] for e in view["events"] if e["phase"] == "note" and "landlord" in e["note"]]
    assert notes and (notes[-1].endswith("and takes the kitty") or notes[-1].startswith("you are the landlord"))
    assert view["bids"] and all(set(b) == {"seat", "label"} for b in view["bids"])
    end = _stepwise(client, view)
    listed = client.get("/api/records").json()[0]
    assert listed["name"] == end["record_file"] and listed["game"] == "doudizhu" and listed["seat"] == 1
    assert listed["names"] == end["names"] and listed["result"]["winners"] == end["result"]["winners"]
    assert re.match(r"\d{4}-\d\d-\d\dT\d\d:\d\d", listed["date"])
    rep = client.get(f"/api/records/{listed['name']}").json()
    assert rep["names"] == end["names"] and rep["you"] == 1
    moved = rep["frames"][1:]
    assert any(f["reasoning"] for f in moved) and all(f["reasoning"] is None for f in moved if f["seat"] == 1)
    assert all("trick" in f and "to_beat" in f for f in rep["frames"])


def test_the_catalog_names_the_strongest_shipped_model_with_its_numbers(tmp_path) -> None:
    import shutil

    from climbrl.serve.catalog import catalog

    repo = __import__("pathlib").Path(__file__).resolve().parents[1]
    for name in ("big2", "big2-long"):
        shutil.copytree(repo / "models" / name, tmp_path / "models" / name)
    c = catalog(tmp_path)
    rates = {n: json.loads((repo / "models" / n / "model.json").read_text())["final"]["matches"]["heuristic"]["all"]
             ["win_rate"] for n in ("big2", "big2-long")}
    best = max(rates, key=rates.get)
    d = c["big2"]["default_opponent"]
    assert d["spec"] == f"checkpoint:models/{best}/policy.pt" and d["headline"]["heuristic"]["win_rate"] == rates[best]
    assert c["doudizhu"]["default_opponent"]["spec"] == "heuristic"  # no shipped model: the heuristic
    page = TestClient(create_app(tmp_path, pause=0.25), base_url=LOCAL).get("/api/catalog").json()
    assert page["pause_ms"] == 250 and page["big2"]["default_opponent"] == d
