"""The registered best policy is a weights-only checkpoint (review issue 10, item 6): it loads back
through climbrl's own code, and a tampered artifact is refused without running any of its code."""

from __future__ import annotations

import os
import shlex
from pathlib import Path

import pytest
import torch

from climbrl import track
from climbrl.encoders.big2 import Big2Encoder
from climbrl.learn.checkpoint import CheckpointError, network_payload, save_atomic
from climbrl.learn.network import ActionInNet


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    """A temporary sqlite tracking store, its artifacts under it; no network. Creating the
    database takes MLflow ~20 s, so the module shares one; every test registers its own model."""
    root = tmp_path_factory.mktemp("registry")
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(root)
        mp.delenv("MLFLOW_TRACKING_URI", raising=False)
        track.configure(f"sqlite:///{root / 'mlflow.db'}", "registry-test")
        yield root


@pytest.fixture()
def registry(store, tmp_path, request):
    """A PPO network registered under a model name of this test's own: (name, network, version)."""
    torch.manual_seed(0)
    net = ActionInNet(Big2Encoder.state_dim, Big2Encoder.move_dim, hidden=16)
    save_atomic(network_payload(net, "ppo", 3, Big2Encoder()), tmp_path / "policy.pt")
    name = request.node.name
    return name, net, track.register_policy(tmp_path / "policy.pt", name, "ppo", {"win_rate/random": 0.5})


def _scores(net: torch.nn.Module) -> torch.Tensor:
    from climbrl.agents.base import Decision
    from climbrl.encoders.big2 import encode_decisions
    from climbrl.games.big2 import Big2Game

    game = Big2Game("paper")
    decisions = [Decision.from_state(game.new_game(seed=s)) for s in range(5)]
    states, moves, offsets = encode_decisions(decisions)
    seg = torch.repeat_interleave(torch.arange(len(decisions)), torch.from_numpy(offsets[1:] - offsets[:-1]))
    with torch.no_grad():
        return net(torch.from_numpy(states), torch.from_numpy(moves), seg)


def _artifact(name: str, version: str) -> Path:
    """The registered file in the store (a local artifact root)."""
    import mlflow

    return Path(mlflow.tracking.MlflowClient().get_model_version(name, version).source) / "policy.pt"


class _RunsCode:
    """Pickles to a call of os.system: whoever unpickles it runs ``touch MARKER``."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return os.system, (f"touch {shlex.quote(str(self.marker))}",)


def test_the_registered_policy_loads_back_with_identical_outputs(registry) -> None:
    import mlflow

    name, net, version = registry
    mv = mlflow.tracking.MlflowClient().get_model_version(name, version)
    assert mv.tags["loader"] == "climbrl.track.load_registered_policy"
    assert "weights_only=True" in mv.tags["format"] and len(mv.tags["sha256"]) == 64
    # a plain checkpoint file, loadable with weights_only=True (no pickled model)
    assert torch.load(_artifact(name, version), weights_only=True)["format"] == "climbrl-checkpoint"
    for agent in (track.load_registered_policy(name, version=version),
                  track.load_registered_policy(name, alias="best")):
        assert torch.equal(_scores(agent.net), _scores(net))
        assert agent.scores_are_logits  # a PPO network: its scores are the policy's logits
    with pytest.raises(ValueError, match="exactly one of version and alias"):
        track.load_registered_policy(name)


def test_a_tampered_artifact_is_refused_without_running_it(registry, tmp_path) -> None:
    import mlflow

    name, _, version = registry
    marker = tmp_path / "MARKER"
    artifact = _artifact(name, version)
    torch.save({"format": "climbrl-checkpoint", "version": 1, "net": _RunsCode(marker)}, artifact)
    # the file alone was swapped: its hash no longer matches the registered one
    with pytest.raises(CheckpointError, match="SHA-256 .* does not match"):
        track.load_registered_policy(name, version=version)
    assert not marker.exists()
    # an attacker who can also rewrite the version's tags: torch.load(weights_only=True) refuses it
    mlflow.tracking.MlflowClient().set_model_version_tag(name, version, "sha256", track.sha256_file(artifact))
    with pytest.raises(CheckpointError, match="corrupt or unreadable checkpoint"):
        track.load_registered_policy(name, alias="best")
    assert not marker.exists()
    # the payload is live: an unsafe load (what a pickled model's loader does) runs it
    torch.load(artifact, weights_only=False)
    assert marker.exists()


def test_a_model_version_not_registered_by_climbrl_is_refused(registry) -> None:
    import mlflow

    name, _, version = registry
    mlflow.tracking.MlflowClient().delete_model_version_tag(name, version, "loader")
    with pytest.raises(CheckpointError, match="not registered as a climbrl weights-only policy"):
        track.load_registered_policy(name, version=version)
