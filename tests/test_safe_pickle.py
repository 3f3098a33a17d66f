"""The array-only unpickler refuses non-numeric arrays and arrays beyond its size bounds (issue 29,
section 5), and the public agent's weights converter refuses any dtype but floating point: crafted
files, each read by ``load_arrays`` / ``convert_joblib`` as ``climbrl convert-charlesworth`` would."""

from __future__ import annotations

import pickle

import joblib
import numpy as np
import pytest

from climbrl.agents.external.charlesworth import WEIGHT_KEYS, WEIGHT_SHAPES, WeightsError, convert_joblib
from climbrl.agents.external.safe_pickle import (
    MAX_ARRAY_ELEMENTS,
    MAX_TOTAL_BYTES,
    UnsafePickleError,
    load_arrays,
)
from tests.reference import released_weights


class _Allocate:
    """Pickles as numpy's own ``_reconstruct(ndarray, shape, dtype)`` with no contents after it:
    a pickle of a few dozen bytes that asks for ``shape`` elements of memory."""

    def __init__(self, shape: tuple[int, ...], dtype: str = "f8") -> None:
        self.shape, self.dtype = shape, np.dtype(dtype)

    def __reduce__(self):
        return (np._core.multiarray._reconstruct, (np.ndarray, self.shape, self.dtype))


def _pickle(tmp_path, obj, name: str = "crafted.pkl"):
    path = tmp_path / name
    path.write_bytes(pickle.dumps(obj, protocol=2))
    return path


def _joblib(tmp_path, obj, name: str = "crafted.joblib"):
    path = tmp_path / name
    joblib.dump(obj, path)
    return path


def test_object_arrays_are_refused(tmp_path) -> None:
    # numpy's own pickle of an object array: its contents are a list of whatever the pickle built
    plain = _pickle(tmp_path, [np.zeros(3, np.float32), np.array([1, "two", {"three": 3}], dtype=object)])
    with pytest.raises(UnsafePickleError, match="objects: only numeric dtypes"):
        load_arrays(plain)
    stored = _joblib(tmp_path, [np.array([None, 1.5], dtype=object)])  # joblib pickles it inline
    with pytest.raises(UnsafePickleError, match="objects"):
        load_arrays(stored)


@pytest.mark.parametrize("array", [
    np.array(["ab", "cd"]),                                      # unicode strings
    np.array([b"ab", b"cd"]),                                    # bytes
    np.array([(1, 2.0)], dtype=[("a", "i4"), ("b", "f8")]),      # structured records
    np.zeros(2, dtype="V8"),                                     # raw void
    np.array(["2024-01-01"], dtype="datetime64[D]"),             # datetimes
    np.array([1], dtype="timedelta64[s]"),
], ids=["unicode", "bytes", "record", "void", "datetime", "timedelta"])
@pytest.mark.parametrize("writer", [_pickle, _joblib], ids=["pickle", "joblib"])
def test_non_numeric_arrays_are_refused(tmp_path, writer, array) -> None:
    path = writer(tmp_path, [np.ones(2, np.float32), array])
    with pytest.raises(UnsafePickleError, match=r"only numeric dtypes \(bool, integer, float, complex\)"):
        load_arrays(path)


@pytest.mark.parametrize("dtype", ["?", "i1", "u2", "<i8", ">f4", "f8", "c16"])
def test_numeric_arrays_are_admitted(tmp_path, dtype) -> None:
    array = np.arange(12).reshape(3, 4).astype(dtype)
    for writer in (_pickle, _joblib):
        (got,) = load_arrays(writer(tmp_path, [array]))
        assert (got.dtype.kind, got.dtype.itemsize) == (array.dtype.kind, array.dtype.itemsize)  # joblib: native order
        assert np.array_equal(got, array)


def test_an_array_above_the_bound_is_refused(tmp_path) -> None:
    at_bound = np.ones(MAX_ARRAY_ELEMENTS, dtype=np.uint8)
    (got,) = load_arrays(_joblib(tmp_path, [at_bound], "at.joblib"))
    assert got.size == MAX_ARRAY_ELEMENTS
    above = np.ones(MAX_ARRAY_ELEMENTS + 1, dtype=np.uint8)
    for path in (_joblib(tmp_path, [above], "above.joblib"), _pickle(tmp_path, [above], "above.pkl")):
        with pytest.raises(UnsafePickleError, match=f"{MAX_ARRAY_ELEMENTS + 1:,} elements.*bound is "
                                                    f"{MAX_ARRAY_ELEMENTS:,} elements per array"):
            load_arrays(path)


def test_a_tiny_pickle_cannot_ask_for_memory(tmp_path) -> None:
    # 10**12 float64 (8 TB) from a file of about 140 bytes: refused before numpy allocates
    huge = _pickle(tmp_path, [_Allocate((10**6, 10**6))], "huge.pkl")
    assert huge.stat().st_size < 200
    with pytest.raises(UnsafePickleError, match="1,000,000,000,000 elements"):
        load_arrays(huge)
    # a shape whose product overflows int64 is counted exactly, not wrapped to a small number
    with pytest.raises(UnsafePickleError, match="bound is"):
        load_arrays(_pickle(tmp_path, [_Allocate((2**32, 2**32, 2))], "wrap.pkl"))
    # arrays each within the bound, together beyond the pickle's total
    per = MAX_ARRAY_ELEMENTS * 8
    many = _pickle(tmp_path, [_Allocate((MAX_ARRAY_ELEMENTS,)) for _ in range(MAX_TOTAL_BYTES // per + 1)],
                   "many.pkl")
    assert many.stat().st_size < 5000
    with pytest.raises(UnsafePickleError, match=f"beyond {MAX_TOTAL_BYTES:,} bytes in all"):
        load_arrays(many)


def test_the_public_agent_file_is_within_the_bounds() -> None:
    """The bounds' documented reference: the released weights' largest array and their total."""
    arrays = load_arrays(released_weights())
    assert max(a.size for a in arrays) == 433_920 <= MAX_ARRAY_ELEMENTS // 9
    assert sum(a.nbytes for a in arrays) == 3_639_936 <= MAX_TOTAL_BYTES // 18
    assert {a.dtype for a in arrays} == {np.dtype(np.float32)}


def _weights(dtype) -> list[np.ndarray]:
    return [np.zeros(WEIGHT_SHAPES[k], dtype=dtype) for k in WEIGHT_KEYS]


@pytest.mark.parametrize("dtype", ["i4", "u1", "?", "c8"])
def test_convert_joblib_refuses_weights_that_are_not_floats(tmp_path, dtype) -> None:
    src = _joblib(tmp_path, _weights(dtype), "weights")
    with pytest.raises(WeightsError, match="array fc1_w has dtype .*expected floating point"):
        convert_joblib(src, tmp_path / "w.npz")
    assert not (tmp_path / "w.npz").exists()


def test_convert_joblib_refuses_string_and_object_weights(tmp_path) -> None:
    strings = _weights("<U3")
    with pytest.raises(UnsafePickleError, match="only numeric dtypes"):
        convert_joblib(_joblib(tmp_path, strings, "strings"), tmp_path / "w.npz")
    objects = [w.astype(object) for w in _weights("f4")]
    with pytest.raises(UnsafePickleError, match="objects"):
        convert_joblib(_joblib(tmp_path, objects, "objects"), tmp_path / "w.npz")
    assert not (tmp_path / "w.npz").exists()


def test_convert_joblib_takes_float_weights(tmp_path) -> None:
    src = _joblib(tmp_path, _weights("f8"), "weights")
    out = convert_joblib(src, tmp_path / "w.npz")
    with np.load(out, allow_pickle=False) as z:
        assert sorted(z.files) == sorted(WEIGHT_KEYS)


def test_load_weights_refuses_an_npz_of_other_dtypes(tmp_path) -> None:
    from climbrl.agents.external.charlesworth import load_weights

    arrays = {k: np.zeros(WEIGHT_SHAPES[k], np.float32) for k in WEIGHT_KEYS}
    np.savez(tmp_path / "ok.npz", **arrays)
    assert load_weights(tmp_path / "ok.npz")["pi_w"].shape == (256, 1695)
    np.savez(tmp_path / "text.npz", **{**arrays, "vf_b": np.array(["1.5"])})  # astype(float32) would parse it
    with pytest.raises(WeightsError, match="array vf_b has dtype '<U3'.*expected floating point"):
        load_weights(tmp_path / "text.npz")
