"""YAML as the project reads its own files: PyYAML's safe loader, with a duplicate key refused.

PyYAML keeps the last of two equal keys in a mapping without a word, so a ``params.yaml`` or a
``--config`` that names ``lr`` twice would train with whichever comes last. :func:`load_yaml`
raises :class:`YamlError` naming the key and both lines instead.
"""

from __future__ import annotations

import re
from typing import Any

import yaml


class YamlError(ValueError):
    """Text that is not valid YAML, or a mapping with a key given twice."""


class _UniqueKeyLoader(yaml.SafeLoader):
    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: dict[Any, int] = {}
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":  # ``<<: *anchor`` merges; it may override
                continue
            key = self.construct_object(key_node, deep=True)
            line = key_node.start_mark.line + 1
            try:
                if key in seen:
                    raise YamlError(f"key {key!r} is given twice (lines {seen[key]} and {line})")
                seen[key] = line
            except TypeError:  # an unhashable key: the base class says so
                break
        return super().construct_mapping(node, deep=deep)


# YAML 1.2's floats: PyYAML follows YAML 1.1, where ``3e-5`` (no dot) is a string, so
# ``--set lr=3e-5`` or ``lr: 1e-4`` in a params file would be refused as "not a number".
_UniqueKeyLoader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"^[-+]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)[eE][-+]?[0-9]+$"),
    list("-+0123456789."))


def load_yaml(text: str) -> Any:
    """The document in ``text`` (``None`` when empty), loaded safely; invalid YAML and duplicate
    keys raise :class:`YamlError` with PyYAML's position."""
    try:
        return yaml.load(text, Loader=_UniqueKeyLoader)  # noqa: S506 - a SafeLoader subclass
    except yaml.YAMLError as e:
        raise YamlError(f"not valid YAML: {e}") from None
