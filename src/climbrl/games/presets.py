"""What every game's rule set shares: a frozen dataclass of knobs built from a named preset plus
overrides, every bad name or value a :class:`RulesError` naming the field (``rules.<field>: ...``).

A game's ``rules.py`` declares its ``Rules`` dataclass, its ``PRESETS`` (preset name -> the fields
that differ from the dataclass defaults) and its own validation; building, overriding and
serializing a rule set work the same way for every game, here.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import Any


class RulesError(ValueError):
    """An invalid rule set: unknown preset, unknown field or bad value."""


def fail(field_name: str, msg: str) -> None:
    raise RulesError(f"rules.{field_name}: {msg}")


def from_preset(cls: type, presets: Mapping[str, Mapping[str, Any]], preset: str, overrides: Mapping[str, Any],
                normalize: Callable[[str, Any], Any] | None = None) -> Any:
    """``cls`` built from ``presets[preset]`` with ``overrides`` (each passed through ``normalize``)."""
    if preset not in presets:
        raise RulesError(f"unknown rules preset {preset!r} (presets: {', '.join(presets)})")
    known = {f.name for f in dataclasses.fields(cls)} - {"name"}
    for k in overrides:
        if k not in known:
            raise RulesError(f"rules.{k}: unknown rules field (fields: {', '.join(sorted(known))})")
    if normalize is not None:
        overrides = {k: normalize(k, v) for k, v in overrides.items()}
    return cls(name=preset, **{**presets[preset], **overrides})


def overrides_of(rules: Any, presets: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """The fields of ``rules`` that differ from its preset (what ``replace`` and ``to_dict`` keep)."""
    base = presets[rules.name]
    return {
        f.name: getattr(rules, f.name)
        for f in dataclasses.fields(rules)
        if f.name != "name" and getattr(rules, f.name) != base.get(f.name, f.default)
    }
