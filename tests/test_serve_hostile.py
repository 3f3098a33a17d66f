"""climbrl serve against a careless or hostile client (issue 51, findings 2 to 6 and 11).

Each test names the finding it checks. The server is driven through its HTTP interface: the
in-process client for most, the real ``climbrl serve`` (a subprocess, a raw socket) where the
finding is about the process itself (a body streamed past the bound, a stop with an agent
computing). The fuzz at the end sends Hypothesis-drawn JSON to the routes that take a body.
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from climbrl.serve.app import create_app
from tests.test_serve import JSON, LOCAL, _match_record, replay_match


@pytest.fixture()
def client(tmp_path):
    return TestClient(create_app(tmp_path, record_dir=tmp_path / "played"), base_url=LOCAL,
                      raise_server_exceptions=False)


def _error(r, status: int | tuple[int, ...]) -> str:
    """The JSON error of a refused request, after checking its status."""
    assert r.status_code in ((status,) if isinstance(status, int) else status), (r.status_code, r.text)
    assert r.headers["content-type"].startswith("application/json"), r.text
    return r.json()["error"]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """``climbrl serve --port 0`` on an empty project: yields ``(process, port)``."""
    root = tmp_path_factory.mktemp("served")
    proc = _start_server(root)
    try:
        yield proc, _port(proc)
    finally:
        proc.kill()
        proc.wait(30)


def _start_server(root: Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "climbrl.cli", "serve", "--port", "0", "--root", str(root)],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def _port(proc: subprocess.Popen) -> int:
    line = proc.stdout.readline()
    m = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
    assert m, f"climbrl serve printed {line!r}"
    return int(m.group(1))


def _raw(port: int, request: bytes, timeout: float = 20) -> bytes:
    """What the server answers to ``request`` sent as is on a socket."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall(request)
        return s.recv(65536)


# --- finding 2: one request could hold the server ----------------------------------------------
def test_f2_a_search_past_its_bounds_is_refused_naming_the_bound(client) -> None:
    for spec, words in (("search:S=100000000,K=1000000", "S must be at most 4096"),
                        ("search:belief=99999999", "belief must be at most 16"),
                        ("search:S=16,K=1000", "K must be at most 64")):
        started = time.monotonic()
        error = _error(client.post("/api/games", json={"game": "big2", "opponents": [spec]}), 400)
        assert words in error and "the bound on" in error and time.monotonic() - started < 10
    error = _error(client.post("/api/games", json={"game": "doudizhu", "opponents": ["search:rollouts=5000"]}), 400)
    assert "rollouts must be at most 4096" in error


def test_f2_a_decision_past_the_time_limit_is_stopped_and_the_game_is_unchanged(tmp_path) -> None:
    client = TestClient(create_app(tmp_path, decision_seconds=1), base_url=LOCAL, raise_server_exceptions=False)
    try:
        started = time.monotonic()
        r = client.post("/api/games", json={"game": "big2", "seat": 3, "opponents": ["search:S=4096,K=64"]})
        assert "after 1 s" in _error(r, 503) and time.monotonic() - started < 60
        # a person's move whose agents then run out of time is taken back: the game is as it was
        game = client.post("/api/games", json={"game": "big2", "seat": 0, "seed": 2,
                                               "opponents": ["random", "random", "search:S=4096,K=64"]})
        if game.status_code == 201:  # the search had not yet had to decide
            view = game.json()
            r = client.post(f"/api/games/{view['id']}/move", json={"turn": view["turn"],
                                                                   "index": view["legal"][-1]["index"]})
            if r.status_code == 503:
                assert client.get(f"/api/games/{view['id']}").json() == view
    finally:
        client.app.state.close()


def test_f2_decisions_in_workers_play_as_they_would_here(tmp_path) -> None:
    """The worker processes change nothing in the game: the same seed and agents, the same moves
    and reasoning as a table whose agents decide in its own process."""
    from climbrl.serve.table import Table

    client = TestClient(create_app(tmp_path), base_url=LOCAL)
    try:
        for game, specs in (("doudizhu", ["search:S=4,K=3", "heuristic"]), ("big2", ["search:S=4,K=3"])):
            body = {"game": game, "opponents": specs, "seat": 1, "seed": 5, "open_hands": True}
            remote = client.post("/api/games", json=body).json()
            here = Table(game, None, specs, seat=1, seed=5, open_hands=True)
            for _ in range(4):
                if remote["over"]:
                    break
                index = remote["legal"][-1]["index"]
                remote = client.post(f"/api/games/{remote['id']}/move", json={"turn": remote["turn"],
                                                                              "index": index}).json()
                here.move(here.turn, index=index)
            assert remote["events"] == here.view()["events"]
    finally:
        client.app.state.close()


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_f2_the_first_signal_stops_the_server_even_with_an_agent_computing(tmp_path, sig) -> None:
    proc = _start_server(tmp_path)
    try:
        port = _port(proc)
        body = json.dumps({"game": "big2", "seat": 3, "opponents": ["search:S=4096,K=64"]}).encode()
        request = (b"POST /api/games HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Type: application/json\r\n"
                   b"Content-Length: %d\r\n\r\n%s" % (port, len(body), body))
        holder = threading.Thread(target=lambda: _raw(port, request, timeout=120), daemon=True)
        holder.start()
        deadline = time.monotonic() + 90
        while not _grandchildren(proc.pid):  # the search's worker (forked by the fork server) is computing
            assert time.monotonic() < deadline and proc.poll() is None, "no worker started"
            time.sleep(0.5)
        time.sleep(1)
        proc.send_signal(sig)
        proc.wait(20)  # raises TimeoutExpired if it is still running
    finally:
        proc.kill()
        proc.wait(10)


def _grandchildren(pid: int) -> list[int]:
    """The processes whose parent is a child of ``pid`` (Linux: read from /proc)."""
    parents = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rpartition(")")[2].split()
        except OSError:
            continue
        parents[int(stat.parent.name)] = int(fields[1])
    children = {p for p, parent in parents.items() if parent == pid}
    return [p for p, parent in parents.items() if parent in children]


# --- finding 3: /api/replay took any content type and read the whole body ----------------------
def test_f3_a_post_must_be_json(client) -> None:
    for path in ("/api/replay", "/api/games"):
        r = client.post(path, content=b'{"game": "big2"}', headers={"Content-Type": "text/plain"})
        assert "application/json" in _error(r, 415)


def test_f3_a_body_past_the_bound_is_refused_before_it_is_all_sent(server) -> None:
    _, port = server
    with socket.create_connection(("127.0.0.1", port), timeout=20) as s:
        s.sendall(b"POST /api/replay HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Type: application/json\r\n"
                  b"Transfer-Encoding: chunked\r\n\r\n" % port)
        chunk = b"x" * 65536
        try:
            for _ in range(20):  # 1.25 MiB, and the body never ends
                s.sendall(b"%x\r\n%s\r\n" % (len(chunk), chunk))
        except OSError:
            pass  # the server already answered and closed
        answer = _response(s)
    assert answer.startswith(b"HTTP/1.1 413") and b"bound of 1048576 bytes" in answer


def _response(s: socket.socket) -> bytes:
    """One whole HTTP response from ``s``: its head, then its body by its Content-Length (the
    server may send them in two packets, which one ``recv`` would split)."""
    data = b""
    while b"\r\n\r\n" not in data:
        more = s.recv(65536)
        if not more:
            return data
        data += more
    head, _, body = data.partition(b"\r\n\r\n")
    m = re.search(rb"content-length: *(\d+)", head, flags=re.I)
    while m and len(body) < int(m.group(1)):
        more = s.recv(65536)
        if not more:
            break
        body += more
    return head + b"\r\n\r\n" + body


def test_f3_record_length_and_redeals_are_bounded(client) -> None:
    from climbrl.games.registry import make_game

    state = make_game("doudizhu:standard").new_game(seed=1)
    rec = json.loads(state.to_json())
    rec["rules"]["max_redeals"] = 10 ** 9
    assert "max_redeals: must be at most 100" in _error(client.post("/api/replay", json=rec), 400)
    rec["rules"]["max_redeals"] = 3
    rec["moves"] = ["pass"] * 130_988
    assert "at most 1000" in _error(client.post("/api/replay", json=rec), (400, 413))
    rec["moves"] = ["pass"] * 1001
    assert "at most 1000" in _error(client.post("/api/replay", json=rec), 400)


# --- finding 4: Host not checked (DNS rebinding), checkpoint: probed the disk ----------------------
def test_f4_a_foreign_host_or_origin_is_refused(client, server) -> None:
    for host in ("evil.example.com", "evil.example.com:8765", "127.0.0.1.nip.io"):
        assert "not to this server's address" in _error(client.get("/api/records", headers={"Host": host}), 403)
    r = client.post("/api/games", json={}, headers={"Origin": "http://evil.example.com"})
    assert "another site" in _error(r, 403)
    assert client.post("/api/games", json={}, headers={"Origin": LOCAL}).status_code == 201
    # the real server: its own port only, as curl -H 'Host: evil.example.com' sends it
    _, port = server
    for host, status in ((b"evil.example.com", b"403"), (b"127.0.0.1:1", b"403"), (b"127.0.0.1:%d" % port, b"200"),
                         (b"localhost:%d" % port, b"200")):
        answer = _raw(port, b"GET /api/records HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n" % host)
        assert answer.startswith(b"HTTP/1.1 " + status), (host, answer[:200])
        assert b"application/json" in answer


def test_f4_checkpoints_are_regular_files_under_runs_and_models_only(tmp_path) -> None:
    client = TestClient(create_app(tmp_path), base_url=LOCAL, raise_server_exceptions=False)
    (tmp_path / "runs").mkdir()
    fifo = tmp_path / "runs" / "fifo.pt"
    os.mkfifo(fifo)
    (tmp_path / "runs" / "out.pt").symlink_to("/etc/passwd")
    errors = {}
    for path in ("/etc/shadow", "/x", "/etc/passwd", "../../etc/passwd", str(fifo), "runs/fifo.pt", "runs/out.pt",
                 "runs/nothing.pt"):
        done = []
        t = threading.Thread(target=lambda p=path, out=done: out.append(
            client.post("/api/games", json={"opponents": [f"checkpoint:{p}"]})), daemon=True)
        t.start()
        t.join(20)
        if t.is_alive():  # the fix's absence: unblock the reader, then fail
            with open(fifo, "w"):
                pass
            pytest.fail(f"checkpoint:{path} blocked the request")
        errors[path] = _error(done[0], 400).replace(path, "PATH")
    assert len(set(errors.values())) == 1, errors  # one text: nothing tells which files exist
    assert "checkpoint not found" in errors["/x"]


# --- finding 5: plain-text 500s ------------------------------------------------------------------
@pytest.mark.parametrize("body", [b"[" * 100_000, b'{"game": "big2", "rules": {}, "moves": [' + b"9" * 5000 + b"]}"])
def test_f5_unreadable_records_get_a_json_400(client, body) -> None:
    assert _error(client.post("/api/replay", content=body, headers=JSON), 400)


def test_f5_a_dou_dizhu_record_with_a_broken_deal_gets_a_json_400(client) -> None:
    from climbrl.games.registry import make_game

    rec = json.loads(make_game("doudizhu:standard").new_game(seed=1).to_json())
    for deal in ({**rec["deal"], "hands": [1, 2, 3]}, {"hands": [1, 2, 3]}, [1, 2, 3], {**rec["deal"], "kitty": 7}):
        assert "cannot be replayed" in _error(client.post("/api/replay", json={**rec, "deal": deal}), 400)
    assert _error(client.post("/api/games", content=b"[" * 100_000, headers=JSON), (400, 422))


def test_f5_a_checkpoint_with_a_broken_network_gets_a_json_4xx(tmp_path) -> None:
    import torch

    from climbrl.encoders import make_encoder
    from climbrl.learn.checkpoint import network_payload
    from climbrl.learn.network import make_net

    enc = make_encoder("big2", "")
    net = make_net(state_dim=enc.state_dim, move_dim=enc.move_dim, hidden=8, generator=torch.Generator())
    (tmp_path / "runs").mkdir()
    payload = network_payload(net, "ppo", 1, enc)
    payload["net_config"] = {**payload["net_config"], "hidden": -5}
    torch.save(payload, tmp_path / "runs" / "bad.pt")
    client = TestClient(create_app(tmp_path), base_url=LOCAL, raise_server_exceptions=False)
    assert _error(client.post("/api/games", json={"opponents": ["checkpoint:runs/bad.pt"]}), 400)


@pytest.mark.parametrize(("field", "value"), [("deals", "5"), ("opponent", ["random"]), ("agent", 5),
                                              ("deal_set", 5), ("deal_wins", "x" * 12), ("deals", 10 ** 9)])
def test_f5_a_tampered_match_record_is_refused_at_once(tmp_path, field, value) -> None:
    rec = _match_record(tmp_path)
    (tmp_path / "reports" / "matches" / "m.json").write_text(json.dumps({**rec, field: value}))
    client = TestClient(create_app(tmp_path), base_url=LOCAL, raise_server_exceptions=False)
    started = time.monotonic()
    r = client.post("/api/matches/replay", json={"file": "reports/matches/m.json", "deal": 0})
    assert "is not a match record" in _error(r, 400) and time.monotonic() - started < 10
    assert client.get("/api/matches").json() == []  # not listed either


def test_f5_any_failure_answers_json(client, monkeypatch) -> None:
    import climbrl.serve.app as app_module

    def broken(root):
        raise RuntimeError("boom")

    monkeypatch.setattr(app_module, "catalog", broken)
    app = create_app(Path("."))
    c = TestClient(app, base_url=LOCAL, raise_server_exceptions=False)
    assert "RuntimeError: boom" in _error(c.get("/api/catalog"), 500)


# --- finding 6: match replays read checkpoints from the working folder, with no progress ---------------
def test_f6_a_match_replay_reads_its_checkpoints_under_root(tmp_path, monkeypatch) -> None:
    import torch

    from climbrl.encoders import make_encoder
    from climbrl.learn.checkpoint import network_payload, save_atomic
    from climbrl.learn.network import make_net

    root = tmp_path / "project"
    (root / "models" / "tiny").mkdir(parents=True)
    enc = make_encoder("big2", "")
    net = make_net(state_dim=enc.state_dim, move_dim=enc.move_dim, hidden=8, generator=torch.Generator().manual_seed(0))
    save_atomic(network_payload(net, "ppo", 1, enc), root / "models" / "tiny" / "policy.pt")
    monkeypatch.chdir(root)  # the record is made as the pipeline makes it, in the project
    _match_record(root, deals=4, agent="checkpoint:models/tiny/policy.pt", opponent="random")
    monkeypatch.chdir(tmp_path)  # the server is started elsewhere
    client = TestClient(create_app(root), base_url=LOCAL, raise_server_exceptions=False)
    out = replay_match(client, {"file": "reports/matches/m.json", "deal": 1, "seat": 2})
    assert out["check"]["same"] and out["names"][2] == "checkpoint:models/tiny/policy.pt"


def test_f6_a_match_replay_shows_progress_and_can_be_cancelled(tmp_path) -> None:
    _match_record(tmp_path, deals=4)
    rec = json.loads((tmp_path / "reports" / "matches" / "m.json").read_text())
    rec["agent"] = "search:S=4096,K=64"
    (tmp_path / "reports" / "matches" / "m.json").write_text(json.dumps(rec))
    client = TestClient(create_app(tmp_path), base_url=LOCAL, raise_server_exceptions=False)
    try:
        r = client.post("/api/matches/replay", json={"file": "reports/matches/m.json", "deal": 0})
        job = r.json()
        assert r.status_code == 202 and job["state"] == "running" and job["limit"] > 0
        time.sleep(1.5)
        job = client.get(f"/api/jobs/{job['job']}").json()
        assert job["state"] == "running" and job["seconds"] >= 1
        client.delete(f"/api/jobs/{job['job']}")
        deadline = time.monotonic() + 20
        while (r := client.get(f"/api/jobs/{job['job']}")).json().get("state") == "running":
            assert time.monotonic() < deadline
            time.sleep(0.2)
        assert "cancelled" in _error(r, 409)
    finally:
        client.app.state.close()


def test_f6_a_missing_deal_set_names_the_command_that_makes_it(tmp_path) -> None:
    _match_record(tmp_path)
    (tmp_path / "data" / "seeds.json").unlink()
    client = TestClient(create_app(tmp_path), base_url=LOCAL)
    error = _error(client.post("/api/matches/replay", json={"file": "reports/matches/m.json"}), 400)
    assert "data/seeds.json is missing: make it with `dvc repro seeds`" in error and "\n" not in error


# --- finding 11: any client could evict every game -------------------------------------------------
def test_f11_a_browser_that_starts_many_games_closes_only_its_own(tmp_path) -> None:
    app = create_app(tmp_path, max_games=30, per_client=5)
    alice, mallory = (TestClient(app, base_url=LOCAL) for _ in range(2))
    for c in (alice, mallory):
        c.get("/")  # the page gives each browser its cookie
    mine = alice.post("/api/games", json={"opponents": ["random"]}).json()["id"]
    flood = [mallory.post("/api/games", json={"opponents": ["random"]}).json()["id"] for _ in range(40)]
    assert alice.get(f"/api/games/{mine}").status_code == 200
    gone = mallory.get(f"/api/games/{flood[0]}")
    error = _error(gone, 404)
    assert "restarted" not in error and "more than 5 games" in error
    assert mallory.get(f"/api/games/{flood[-1]}").status_code == 200


# --- the fuzz: any JSON, a JSON answer, never a 500 --------------------------------------------------
KEYS = ["game", "preset", "opponents", "seat", "seed", "open_hands", "advisor", "turn", "cards", "index", "moves",
        "rules", "file", "deal"]
SPECS = ["heuristic", "random", "search:S=2,K=2", "search:S=99999999", "checkpoint:/etc/passwd", "nobody", "",
         "search:belief=1", "charlesworth:x"]
WORDS = [*SPECS, "big2", "doudizhu", "c0", "3#0", "pass"]
scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.integers(min_value=-(10 ** 30), max_value=10 ** 30),
                    st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=20), st.sampled_from(WORDS))
values = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                       st.dictionaries(st.sampled_from(KEYS) | st.text(max_size=5),
                                                                       inner, max_size=5)), max_leaves=12)
bodies = st.one_of(values, st.dictionaries(st.sampled_from(KEYS), values, max_size=6))


@pytest.fixture(scope="module")
def fuzzed(tmp_path_factory):
    app = create_app(tmp_path_factory.mktemp("fuzz"), decision_seconds=5)
    client = TestClient(app, base_url=LOCAL, raise_server_exceptions=False)
    game = client.post("/api/games", json={"game": "doudizhu", "opponents": ["random"]}).json()
    yield client, game["id"]
    app.state.close()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                 HealthCheck.too_slow])
@given(path=st.sampled_from(["/api/games", "/api/games/{gid}/move", "/api/replay"]), body=bodies)
def test_fuzz_any_json_gets_a_json_answer_never_a_500(fuzzed, path, body) -> None:
    client, gid = fuzzed
    started = time.monotonic()
    r = client.post(path.format(gid=gid), json=body)
    assert r.status_code < 500, (path, body, r.text)
    assert r.headers["content-type"].startswith("application/json") and isinstance(r.json(), (dict, list))
    assert time.monotonic() - started < 30, (path, body)


@pytest.mark.parametrize("body, path", [
    ({"seed": True}, "games"), ({"seed": "3"}, "games"), ({"seed": 1.5}, "games"), ({"seat": True}, "games"),
    ({"turn": "3", "index": 0}, "move"), ({"turn": True, "index": 0}, "move"), ({"turn": 0, "index": "1"}, "move"),
])
def test_f8_a_value_of_the_wrong_type_is_refused_not_coerced(client, body: dict, path: str) -> None:
    """``"seed": true`` was taken as 1 and ``"turn": "3"`` as 3: a request's numbers are numbers."""
    if path == "games":
        r = client.post("/api/games", json={"game": "big2", **body})
    else:
        game = client.post("/api/games", json={"game": "big2"}).json()
        r = client.post(f"/api/games/{game['id']}/move", json=body)
    assert r.status_code == 422 or r.status_code == 400, r.text
    assert "error" in r.json()
