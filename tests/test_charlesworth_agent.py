"""The public agent's adapter against its own engine's reference games, and the safe loader."""

from __future__ import annotations

import io
import json
import os
import pickle
import random

import numpy as np
import pytest

from climbrl.agents import Decision
from climbrl.agents.external.charlesworth import (
    N_ACTIONS,
    PASS_ACTION,
    WEIGHT_KEYS,
    CharlesworthAgent,
    WeightsError,
    action_positions,
    convert_joblib,
    encode,
    load_weights,
)
from climbrl.agents.external.safe_pickle import ArrayOnlyUnpickler, UnsafePickleError, load_arrays
from climbrl.games.big2 import Big2Game
from climbrl.learn.specs import make_agent
from climbrl.paths import charlesworth_dir
from tests.reference import (
    cw_mask,
    iter_reference_games,
    public_agent_weights,
    reference_games_path,
    released_weights,
    require_external,
)
from tests.test_charlesworth_reference import _documented_fault


@pytest.fixture(scope="module")
def agent() -> CharlesworthAgent:
    public_agent_weights()
    return CharlesworthAgent()


def test_observations_legal_actions_and_logits_match_every_reference_decision(agent) -> None:
    reference_games_path()
    game = Big2Game("charlesworth")
    decisions = 0
    max_diff = 0.0
    for ref in iter_reference_games():
        state = game.new_game(hands=[cw_mask(ref["deal"][str(s)]) for s in range(1, 5)])
        for k, d in enumerate(ref["decisions"]):
            where = f"game {ref['game']} decision {k}"
            dec = Decision.from_state(state)
            nonzero = np.flatnonzero(encode(dec)).tolist()
            assert nonzero == sorted(d["obs_nonzero"]), where
            logits, actions = agent.logits([dec])
            ours = dict(zip(actions[0], logits[0][actions[0]], strict=True))
            theirs = set(d["legal"])
            assert theirs <= set(ours), f"{where}: missing actions {theirs - set(ours)}"
            for extra in set(ours) - theirs:
                i = actions[0].index(extra)
                assert _documented_fault(dec.moves[i], dec.types[i], dec.hand, state.last_type), where
            for a, want in zip(d["legal"], d["logits"], strict=True):
                max_diff = max(max_diff, abs(float(ours[a]) - want))
            assert (PASS_ACTION in ours) == (state.last_mask != 0)
            state.apply(cw_mask(d["cards"]))
            decisions += 1
    # every decision of the reference file was checked (counted from the file, whichever file it is)
    assert decisions == sum(len(ref["decisions"]) for ref in iter_reference_games()) > 0
    assert max_diff < 5e-5, max_diff  # measured 3.4e-5 (float32 sums); the README says "within 3.4e-5"


def test_agent_plays_legal_moves_and_is_reproducible(agent) -> None:
    game = Big2Game("charlesworth")

    def play(seed: int) -> str:
        s = game.new_game(seed=seed)
        rng = random.Random(seed)
        greedy = make_agent("charlesworth:greedy")
        while not s.is_terminal():
            d = Decision.from_state(s)
            who = agent if s.current_player % 2 == 0 else greedy
            s.apply(d.moves[who.act(d, rng)])
        return s.to_json()

    assert play(5) == play(5)


def test_refuses_other_rules(agent) -> None:
    d = Decision.from_state(Big2Game("paper").new_game(seed=1))
    with pytest.raises(ValueError, match="charlesworth"):
        agent.act(d, random.Random(0))


def test_conversion_matches_the_npz(tmp_path) -> None:
    out = convert_joblib(released_weights(), tmp_path / "w.npz")
    ours, theirs = load_weights(out), load_weights(public_agent_weights())
    for k in WEIGHT_KEYS:
        assert np.array_equal(ours[k], theirs[k]), k


def test_action_space_blocks() -> None:
    acts = action_positions()
    assert len(acts) == len(set(acts)) == N_ACTIONS and acts[PASS_ACTION] == ()
    sizes = [sum(len(a) == n for a in acts) for n in range(1, 6)]
    assert sizes == [13, 33, 31, 330, 1287]  # the blocks of that agent's action space
    assert all(list(a) == sorted(a) for a in acts)
    assert all(a[-1] - a[0] <= 3 for a in acts if len(a) in (2, 3))  # one rank: at most 4 cards


def test_action_space_equals_the_shared_action_index() -> None:
    path = require_external(charlesworth_dir() / "action_index.json",
                            "the public agent's action index (shared/external/charlesworth-big2/README.md)")
    positions = [tuple(p) for p in json.loads(path.read_text())["positions"]]
    assert action_positions() == positions


class _Boom:
    def __reduce__(self):
        return (os.system, ("echo pwned > /tmp/climbrl_pwned",))


def test_malicious_pickle_is_refused_without_running(tmp_path) -> None:
    marker = "/tmp/climbrl_pwned"
    if os.path.exists(marker):
        os.remove(marker)
    bad = tmp_path / "evil.pkl"
    bad.write_bytes(pickle.dumps([np.zeros(3, dtype=np.float32), _Boom()], protocol=3))
    with pytest.raises(UnsafePickleError, match="refusing to load global posix.system|refusing"):
        load_arrays(bad)
    assert not os.path.exists(marker)
    with pytest.raises(UnsafePickleError, match="builtins.eval"):
        ArrayOnlyUnpickler(io.BytesIO(b"cbuiltins\neval\n(S'1'\ntR.")).load()


def test_plain_numpy_pickle_is_admitted(tmp_path) -> None:
    p = tmp_path / "ok.pkl"
    arrays = [np.arange(6, dtype=np.float32).reshape(2, 3), np.ones(4)]
    p.write_bytes(pickle.dumps(arrays, protocol=2))
    got = load_arrays(p)
    assert all(np.array_equal(a, b) for a, b in zip(got, arrays, strict=True))


def test_missing_public_agent_says_how_to_get_it(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("CLIMBRL_EXTERNAL", str(tmp_path))
    with pytest.raises(WeightsError, match="charlesworth_ppo_136500.npz.*big2_PPOalgorithm.*convert-charlesworth"):
        make_agent("charlesworth")


def test_bad_weights_files(tmp_path) -> None:
    with pytest.raises(WeightsError, match="not found"):
        load_weights(tmp_path / "none.npz")
    corrupt = tmp_path / "corrupt.npz"
    corrupt.write_bytes(b"not a zip")
    with pytest.raises(WeightsError, match="cannot read"):
        load_weights(corrupt)
    partial = tmp_path / "partial.npz"
    np.savez(partial, fc1_w=np.zeros((412, 512), dtype=np.float32))
    with pytest.raises(WeightsError, match="missing array 'fc1_b'"):
        load_weights(partial)
