"""The options of a search agent's spec, shared by both games' searches
(``search:checkpoint:PATH,S=48,K=10,...``): the base policy it names and its ``key=value`` options."""

from __future__ import annotations

BOUNDS = {"samples": (4096, "sampled deals per decision"), "candidates": (64, "candidate moves per decision"),
          "belief": (16, "deals drawn per kept deal")}
"""The largest value of each sized option, whoever asks (a command, a params file, a request to
``climbrl serve``): ``S`` sampled deals per decision (the studies use up to 1024), ``K``
candidate moves (they use 20), ``belief`` deals drawn per kept deal (they use up to 8). A
search's work grows as ``S x K`` rollouts and its memory as ``S x belief`` deals; without a
bound one spec asked for 143 GiB, or held a core for ever."""


def split_base(spec: str) -> tuple[str, str]:
    """``(base, rest)`` of a search spec: ``search:checkpoint:P,S=64`` -> ``("checkpoint:P",
    "search:S=64")``; ``("", spec)`` when it names no base policy."""
    _, _, arg = spec.partition(":")
    parts = arg.split(",")
    bases = [p for p in parts if p.strip().startswith("checkpoint:")]
    if not bases:
        return "", spec
    if len(bases) > 1:
        raise ValueError(f"agent {spec!r}: one base policy at most")
    return bases[0].strip(), "search:" + ",".join(p for p in parts if p not in bases)


def parse_options(spec: str, names: dict[str, str], text: tuple[str, ...] = ()) -> dict[str, int | str]:
    """The keyword arguments of ``spec``'s ``key=value`` options (its base policy left out):
    ``names`` maps each key to its argument (two keys may name one argument), ``text`` lists the
    keys whose value is a word; the others are integers. A ``ValueError`` naming the spec on an
    unknown key, a key given twice or a value that is not an integer."""
    _, rest = split_base(spec)
    _, _, arg = rest.partition(":")
    kw: dict[str, int | str] = {}
    for part in filter(None, arg.split(",")):
        key, eq, value = part.partition("=")
        key = key.strip()
        if not eq or key not in names:
            keys = ", ".join(f"{k}=" for k in names)
            raise ValueError(f"agent {spec!r}: search takes checkpoint:PATH, {keys} (got {part!r})")
        if names[key] in kw:
            raise ValueError(f"agent {spec!r}: {key} given twice")
        if key in text:
            kw[names[key]] = value.strip()
        else:
            try:
                kw[names[key]] = int(value)
            except ValueError:
                raise ValueError(f"agent {spec!r}: {key} must be an integer, got {value!r}"[:300]) from None
            _check_bound(spec, key, names[key], kw[names[key]])
    return kw


def _check_bound(spec: str, key: str, argument: str, value: int | str) -> None:
    if argument in BOUNDS and isinstance(value, int) and value > BOUNDS[argument][0]:
        top, what = BOUNDS[argument]
        raise ValueError(f"agent {spec!r}: {key} must be at most {top} (the bound on {what}), got {value}")


__all__ = ["BOUNDS", "split_base", "parse_options"]
