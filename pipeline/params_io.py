"""One params reader for the pipeline commands (issues 50 and 51): how a ``python -m pipeline.*``
command reads its params file, checks the values a file can size or name, and ends.

- :func:`read`: the YAML document of a params file, read with the project's
  :func:`climbrl.yamlfile.load_yaml` (a key given twice is refused; ``3e-5`` is a number). A missing
  or unreadable file, or text that is not YAML, is a :class:`ParamsError` naming the file.
- :class:`ParamsError`: a bad params file or value, naming the file and the key.
- :func:`integer` and :func:`name`: the checks every pipeline shares. An integer is a real one
  (YAML's ``true`` is not 1) within bounds, so that ``deals: -1`` or ``seed: [1]`` is refused
  rather than read as something else; a name that becomes a folder or file name is a plain
  identifier, so that no params file writes outside its run folder (``../../escaped``).
- :func:`command`: the ``main`` of a pipeline command. Bad params or input (``ValueError``,
  ``OSError``: a :class:`ParamsError`, a refused config or checkpoint, a missing file, a study that
  another process runs) end it with status 2 and one line on stderr; Ctrl-C ends it with status 130
  and one line. Anything else is a bug and keeps its traceback.
- :class:`ArgumentParser`: argparse whose refusal is one line too (status 2).
"""

from __future__ import annotations

import argparse
import functools
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

import climbrl.params
from climbrl.yamlfile import YamlError, load_yaml

SEED_MAX = 2**32 - 1
"""The largest seed a params file may give (NumPy's legacy seeds stop there)."""
DEALS_MAX = 1_000_000
"""The most deals (or games) a params file may ask of one match: beyond it a typo, not a study."""
WORKERS_MAX = 256
"""The most worker processes a params file may ask for."""
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")


class ParamsError(climbrl.params.ParamsError):
    """A bad params file or value: ``file`` and ``key`` (either may be empty) say where, the
    message says what. A :class:`ValueError` (through :class:`climbrl.params.ParamsError`), so the
    callers that catch the project's params errors catch it too."""

    def __init__(self, message: str, file: str | Path | None = None, key: str = "") -> None:
        self.message, self.file, self.key = message, "" if file is None else str(file), key
        where = ": ".join(p for p in (self.file, key) if p)
        super().__init__(f"{where}: {message}" if where else message)

    def __reduce__(self) -> tuple[Any, ...]:  # crosses a process pool with its file and key
        return type(self), (self.message, self.file, self.key)


def read(path: str | Path) -> Any:
    """The document in the params file ``path``; :class:`ParamsError` naming the file when it is
    missing, unreadable, not text or not YAML (a key given twice included)."""
    try:
        return load_yaml(Path(path).read_text())
    except (OSError, UnicodeDecodeError, YamlError) as e:
        raise ParamsError(f"cannot read it: {e}", path) from None


def mapping(value: Any, file: str | Path, key: str, what: str) -> dict[Any, Any]:
    """``value`` when it is a mapping, else :class:`ParamsError` saying it must be ``what``."""
    if not isinstance(value, dict):
        raise ParamsError(f"must be {what}, got {value!r}", file, key)
    return value


def integer(value: Any, file: str | Path, key: str, low: int = 0, high: int | None = None) -> int:
    """``value`` when it is an integer (not a boolean) in ``[low, high]``, else :class:`ParamsError`."""
    if isinstance(value, bool) or not isinstance(value, int) or value < low or (high is not None and value > high):
        bound = f">= {low}" if high is None else f">= {low} and <= {high:,}"
        raise ParamsError(f"must be an integer {bound}, got {value!r}", file, key)
    return value


def name(value: Any, file: str | Path, key: str) -> str:
    """``value`` when it is a plain identifier (letters, digits and ``_.-``, not starting with
    ``.``, ``_`` or ``-``): a name that becomes a folder or a file stays inside its folder."""
    if not isinstance(value, str) or not _NAME.fullmatch(value) or ".." in value:
        raise ParamsError(f"{value!r} is not a plain name (letters, digits, '_', '.', '-'; not '..'): it names a "
                          "folder or file", file, key)
    return value


def workers(value: Any, flag: str = "--workers") -> Any:
    """A command's worker count: None (the params' own), else :func:`integer` within
    ``[1, WORKERS_MAX]``."""
    return value if value is None else integer(value, flag, "", 1, WORKERS_MAX)


def one_line(e: BaseException) -> str:
    """The error's message on one line (an OSError names its file)."""
    return " ".join(str(e).split()) or type(e).__name__


class ArgumentParser(argparse.ArgumentParser):
    """argparse whose refusal is one line on stderr (``prog: error: ...``), status 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {' '.join(message.split())}\n")


def command(prog: str) -> Callable[[Callable[..., int | None]], Callable[..., int]]:
    """Decorate a command's ``main(argv)``: its status, 2 with one line for bad params or input,
    130 for Ctrl-C (a run that checkpoints continues when the command runs again)."""

    def wrap(main: Callable[..., int | None]) -> Callable[..., int]:
        @functools.wraps(main)
        def run(argv: list[str] | None = None) -> int:
            try:
                return main(argv) or 0
            except KeyboardInterrupt:
                print(f"{prog}: interrupted", file=sys.stderr)
                return 130
            except (ValueError, OSError) as e:
                print(f"{prog}: error: {one_line(e)}", file=sys.stderr)
                return 2

        return run

    return wrap


__all__ = ["ParamsError", "read", "mapping", "integer", "name", "workers", "one_line", "ArgumentParser", "command",
           "SEED_MAX", "DEALS_MAX", "WORKERS_MAX"]
