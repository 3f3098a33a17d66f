"""The options of a search agent's spec, shared by both games' searches
(``search:checkpoint:PATH,S=48,K=10,...``): the base policy it names and its ``key=value`` options."""

from __future__ import annotations


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
                raise ValueError(f"agent {spec!r}: {key} must be an integer, got {value!r}") from None
    return kw


__all__ = ["split_base", "parse_options"]
