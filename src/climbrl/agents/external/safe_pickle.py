"""Read numpy arrays out of a (joblib) pickle without ever running code from it.

A pickle can name any importable callable and call it: loading an untrusted one with ``pickle``
or ``joblib.load`` runs whatever it says. :class:`ArrayOnlyUnpickler` admits only the globals
that rebuild plain numeric numpy arrays (``numpy.ndarray``, ``numpy.dtype``, numpy's
``_reconstruct``, ``_codecs.encode`` for latin1 array bytes, and joblib's
``NumpyArrayWrapper`` record, which is replaced by our own inert class) and refuses every
other global with :class:`UnsafePickleError` before anything is called. joblib stores each
array's raw bytes right after its wrapper record in the stream; they are read here with
``numpy.frombuffer`` (object arrays, which would need pickle again, are refused).
"""

from __future__ import annotations

import io
import pickle
from pathlib import Path
from typing import Any

import numpy as np


class UnsafePickleError(pickle.UnpicklingError):
    """The pickle names something other than numpy's array-reconstruction globals."""


class _JoblibArrayRecord:
    """Inert stand-in for ``joblib.numpy_pickle.NumpyArrayWrapper``: holds only its state."""

    def __setstate__(self, state: dict[str, Any]) -> None:
        if not isinstance(state, dict):
            raise UnsafePickleError("malformed joblib array record")
        self.state = state


def _reconstruct(subtype: Any, shape: Any, dtype: Any) -> np.ndarray:
    if subtype is not np.ndarray:
        raise UnsafePickleError("only plain numpy arrays may be reconstructed")
    return np.ndarray.__new__(np.ndarray, shape, dtype)


def _latin1_bytes(text: Any, encoding: Any = "latin1") -> bytes:
    """Protocol-2 pickles spell raw bytes as ``_codecs.encode(str, 'latin1')``."""
    if not isinstance(text, str) or encoding != "latin1":
        raise UnsafePickleError("_codecs.encode is admitted only for latin1 array bytes")
    return text.encode("latin1")


_ALLOWED = {
    ("_codecs", "encode"): _latin1_bytes,
    ("numpy", "ndarray"): np.ndarray,
    ("numpy", "dtype"): np.dtype,
    ("numpy.core.multiarray", "_reconstruct"): _reconstruct,
    ("numpy._core.multiarray", "_reconstruct"): _reconstruct,
    ("joblib.numpy_pickle", "NumpyArrayWrapper"): _JoblibArrayRecord,
}


class ArrayOnlyUnpickler(pickle._Unpickler):  # the Python unpickler: we read array bytes inline
    def __init__(self, file: io.BufferedIOBase) -> None:
        super().__init__(file)
        self._file = file
        self.dispatch = dict(pickle._Unpickler.dispatch)
        self.dispatch[pickle.BUILD[0]] = ArrayOnlyUnpickler._load_build

    def find_class(self, module: str, name: str) -> Any:
        try:
            return _ALLOWED[(module, name)]
        except KeyError:
            raise UnsafePickleError(
                f"refusing to load global {module}.{name}: only numpy array data is allowed"
            ) from None

    def _load_build(self) -> None:
        pickle._Unpickler.load_build(self)
        top = self.stack[-1]
        if isinstance(top, _JoblibArrayRecord):
            self.stack[-1] = self._read_joblib_array(top.state)

    def _read_joblib_array(self, state: dict[str, Any]) -> np.ndarray:
        dtype = state.get("dtype")
        shape = state.get("shape")
        order = state.get("order", "C")
        if not isinstance(dtype, np.dtype) or dtype.hasobject:
            raise UnsafePickleError("refusing a joblib array of objects or without a dtype")
        if state.get("subclass", np.ndarray) is not np.ndarray:
            raise UnsafePickleError("only plain numpy arrays may be reconstructed")
        if not isinstance(shape, tuple) or not all(isinstance(n, int) and n >= 0 for n in shape):
            raise UnsafePickleError(f"malformed array shape {shape!r}")
        if "numpy_array_alignment_bytes" in state:
            pad = self._file.read(1)
            self._file.read(pad[0] if pad else 0)
        count = int(np.prod(shape, dtype=np.int64))
        data = self._file.read(count * dtype.itemsize)
        if len(data) != count * dtype.itemsize:
            raise UnsafePickleError("truncated array data")
        arr = np.frombuffer(data, dtype=dtype, count=count).copy()
        return arr.reshape(shape, order="F" if order == "F" else "C")


def load_arrays(path: str | Path) -> list[np.ndarray]:
    """The list of arrays stored in a (joblib) pickle, loaded with :class:`ArrayOnlyUnpickler`."""
    with open(path, "rb") as f:
        try:
            obj = ArrayOnlyUnpickler(f).load()
        except UnsafePickleError:
            raise
        except Exception as e:  # a truncated or foreign file: any opcode error
            raise UnsafePickleError(
                f"{path}: not a readable pickle of numpy arrays ({type(e).__name__}: {e})"
            ) from None
    if not isinstance(obj, (list, tuple)) or not all(isinstance(a, np.ndarray) for a in obj):
        raise UnsafePickleError(f"{path}: expected a list of numpy arrays, got {type(obj).__name__}")
    return list(obj)
