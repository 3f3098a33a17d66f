"""Read numpy arrays out of a (joblib) pickle without ever running code from it.

A pickle can name any importable callable and call it: loading an untrusted one with ``pickle``
or ``joblib.load`` runs whatever it says. :class:`ArrayOnlyUnpickler` admits only the globals
that rebuild plain numeric numpy arrays (``numpy.ndarray``, ``numpy.dtype``, numpy's
``_reconstruct``, ``_codecs.encode`` for latin1 array bytes, and joblib's
``NumpyArrayWrapper`` record, which is replaced by our own inert class) and refuses every
other global with :class:`UnsafePickleError` before anything is called. joblib stores each
array's raw bytes right after its wrapper record in the stream; they are read here with
``numpy.frombuffer``.

What an array may be, checked before its memory is allocated (a pickle names a shape in a few
bytes, so a tiny file could otherwise ask for any amount of memory):

- a numeric dtype only (:data:`NUMERIC_KINDS`: bool, signed and unsigned integers, floats,
  complex numbers): object arrays (which would need pickle again, and hold whatever the pickle
  built), strings, bytes, void/structured records, datetimes and the like are refused;
- at most :data:`MAX_ARRAY_ELEMENTS` elements per array (2**22 = 4,194,304) and at most
  :data:`MAX_TOTAL_BYTES` (64 MiB) for all the arrays one pickle builds. The public Big 2 agent's
  released file (``modelParameters136500``) holds 10 float32 arrays, the largest ``pi_w``
  (256 x 1695 = 433,920 elements, 1.7 MB), 909,984 elements and 3,639,936 bytes in all: the
  bounds are about 10x the largest array and 18x the whole file.

Every refusal is an :class:`UnsafePickleError` that names the array's dtype or size and the bound.
"""

from __future__ import annotations

import io
import pickle
from pathlib import Path
from typing import Any

import numpy as np

NUMERIC_KINDS = "biufc"  # numpy dtype kinds: bool, int, uint, float, complex
MAX_ARRAY_ELEMENTS = 1 << 22  # per array; the public agent's largest: 433,920
MAX_TOTAL_BYTES = 64 << 20  # all arrays of one pickle; the public agent's: 3,639,936 bytes


class UnsafePickleError(pickle.UnpicklingError):
    """The pickle names something other than numpy's array-reconstruction globals, or an array
    that is not numeric or exceeds the size bounds."""


def check_dtype(dtype: Any) -> np.dtype:
    """``dtype`` if it is a plain numeric numpy dtype, else :class:`UnsafePickleError`."""
    if not isinstance(dtype, np.dtype):
        raise UnsafePickleError(f"refusing an array without a numpy dtype ({type(dtype).__name__})")
    if dtype.hasobject or dtype.kind not in NUMERIC_KINDS or dtype.fields is not None or dtype.subdtype:
        what = "objects" if dtype.hasobject else f"dtype {dtype.str!r} (kind {dtype.kind!r})"
        raise UnsafePickleError(f"refusing an array of {what}: only numeric dtypes (bool, integer, float, "
                                "complex) are allowed")
    return dtype


def check_shape(shape: Any, dtype: np.dtype) -> int:
    """The element count of ``shape`` (a tuple of non-negative ints) if within
    :data:`MAX_ARRAY_ELEMENTS`, else :class:`UnsafePickleError`; counted in Python integers (no
    overflow)."""
    if isinstance(shape, int):
        shape = (shape,)
    if not isinstance(shape, tuple) or not all(isinstance(n, int) and not isinstance(n, bool) and n >= 0
                                               for n in shape):
        raise UnsafePickleError(f"malformed array shape {shape!r}")
    count = 1
    for n in shape:
        count *= n
    if count > MAX_ARRAY_ELEMENTS:
        raise UnsafePickleError(f"refusing an array of shape {shape} ({count:,} elements of {dtype.str}): "
                                f"the bound is {MAX_ARRAY_ELEMENTS:,} elements per array")
    return count


class _JoblibArrayRecord:
    """Inert stand-in for ``joblib.numpy_pickle.NumpyArrayWrapper``: holds only its state."""

    def __setstate__(self, state: dict[str, Any]) -> None:
        if not isinstance(state, dict):
            raise UnsafePickleError("malformed joblib array record")
        self.state = state


def _latin1_bytes(text: Any, encoding: Any = "latin1") -> bytes:
    """Protocol-2 pickles spell raw bytes as ``_codecs.encode(str, 'latin1')``."""
    if not isinstance(text, str) or encoding != "latin1":
        raise UnsafePickleError("_codecs.encode is admitted only for latin1 array bytes")
    return text.encode("latin1")


_ALLOWED = {
    ("_codecs", "encode"): _latin1_bytes,
    ("numpy", "ndarray"): np.ndarray,
    ("numpy", "dtype"): np.dtype,
    ("numpy.core.multiarray", "_reconstruct"): "_reconstruct",  # a method of the unpickler (it counts bytes)
    ("numpy._core.multiarray", "_reconstruct"): "_reconstruct",
    ("joblib.numpy_pickle", "NumpyArrayWrapper"): _JoblibArrayRecord,
}


class ArrayOnlyUnpickler(pickle._Unpickler):  # the Python unpickler: we read array bytes inline
    def __init__(self, file: io.BufferedIOBase) -> None:
        super().__init__(file)
        self._file = file
        self._bytes = 0  # memory of the arrays built so far
        self.dispatch = dict(pickle._Unpickler.dispatch)
        self.dispatch[pickle.BUILD[0]] = ArrayOnlyUnpickler._load_build

    def find_class(self, module: str, name: str) -> Any:
        try:
            found = _ALLOWED[(module, name)]
        except KeyError:
            raise UnsafePickleError(
                f"refusing to load global {module}.{name}: only numpy array data is allowed"
            ) from None
        return getattr(self, found) if isinstance(found, str) else found

    def _admit(self, shape: Any, dtype: Any) -> int:
        """Check an array about to be allocated (dtype, size, the pickle's total); its element count."""
        dtype = check_dtype(dtype)
        count = check_shape(shape, dtype)
        self._bytes += count * dtype.itemsize
        if self._bytes > MAX_TOTAL_BYTES:
            raise UnsafePickleError(f"refusing the pickle's arrays beyond {MAX_TOTAL_BYTES:,} bytes in all "
                                    f"(the bound on one file's arrays)")
        return count

    def _reconstruct(self, subtype: Any, shape: Any, dtype: Any) -> np.ndarray:
        """numpy's ``_reconstruct`` (the first step of unpickling an array; BUILD sets its contents)."""
        if subtype is not np.ndarray:
            raise UnsafePickleError("only plain numpy arrays may be reconstructed")
        if isinstance(dtype, (str, bytes)):  # numpy pickles ``_reconstruct(ndarray, (0,), b'b')``
            if dtype not in (b"b", "b"):
                raise UnsafePickleError(f"refusing an array of dtype code {dtype!r}")
            dtype = np.dtype("b")
        self._admit(shape, dtype)
        return np.ndarray.__new__(np.ndarray, shape, dtype)

    def _load_build(self) -> None:
        # ndarray.__setstate__(state): checked before numpy reads it
        if len(self.stack) >= 2 and isinstance(self.stack[-2], np.ndarray):
            self._check_array_state(self.stack[-1])
        pickle._Unpickler.load_build(self)
        top = self.stack[-1]
        if isinstance(top, _JoblibArrayRecord):
            self.stack[-1] = self._read_joblib_array(top.state)

    def _check_array_state(self, state: Any) -> None:
        """``(version, shape, dtype, is_fortran, rawdata)``: a numeric dtype, a bounded shape, and
        the raw bytes of exactly that many elements (an object array's state is a list instead)."""
        if not isinstance(state, tuple) or len(state) not in (4, 5):
            raise UnsafePickleError("malformed numpy array state")
        shape, dtype, _, raw = state[-4:]
        count = self._admit(shape, dtype)
        if not isinstance(raw, (bytes, bytearray)) or len(raw) != count * dtype.itemsize:
            raise UnsafePickleError(f"refusing array data of {type(raw).__name__} for {count} elements of "
                                    f"{dtype.str}: only their raw bytes are allowed")

    def _read_joblib_array(self, state: dict[str, Any]) -> np.ndarray:
        dtype = state.get("dtype")
        shape = state.get("shape")
        order = state.get("order", "C")
        if state.get("subclass", np.ndarray) is not np.ndarray:
            raise UnsafePickleError("only plain numpy arrays may be reconstructed")
        count = self._admit(shape, dtype)  # before reading: the file's bytes are not read for a refused array
        if "numpy_array_alignment_bytes" in state:
            pad = self._file.read(1)
            self._file.read(pad[0] if pad else 0)
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
