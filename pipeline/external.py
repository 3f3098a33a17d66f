"""Which agent specs need data from outside the repository (``../shared/external``), for the
pipelines that record a match as not run where that data is missing (``make champion``,
``make strong``) instead of failing on a clone without it."""

from __future__ import annotations


def needs_external(spec: str) -> bool:
    """Whether an agent spec plays the public agent's weights: the agent itself, or a search whose
    rollouts or own moves play its network."""
    name, _, arg = spec.partition(":")
    knobs = {k.strip(): v.strip() for k, _, v in (p.partition("=") for p in arg.split(","))}
    return name.strip() == "charlesworth" or (name.strip() == "search" and "charlesworth" in (
        knobs.get("rollout"), knobs.get("own")))


def external_missing(spec: str) -> str | None:
    """Why an agent spec cannot be built here for want of outside data (:func:`needs_external`),
    or None."""
    from climbrl.paths import public_agent_missing

    return public_agent_missing() if needs_external(spec) else None
