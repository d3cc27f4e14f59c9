import statistics

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dsp.detect.orderstats import median, median_of, nanmedian_columns, percentile_along_1


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.integers(0, 40), min_size=1, max_size=3), st.integers(0, 2**32 - 1),
    st.sampled_from(["normal", "counts", "ties", "nan"]), st.integers(-1, 2),
)
def test_median_is_numpys_to_the_bit(
    shape: list[int], seed: int, kind: str, axis_pick: int
) -> None:
    rng = np.random.default_rng(seed)
    values = rng.normal(0.0, 10.0 ** rng.uniform(-3, 6), shape)
    if kind == "counts":
        values = np.round(values).astype(np.int64)  # HX711 readings are whole counts
    elif kind == "ties":
        values = np.round(values / np.max(np.abs(values), initial=1.0) * 3)
    elif kind == "nan" and values.size:
        values.flat[rng.integers(values.size)] = np.nan
    axis = None if axis_pick < 0 or axis_pick >= len(shape) else axis_pick
    if values.size == 0 or (axis is not None and values.shape[axis] == 0):
        return  # numpy warns and gives NaN: not asked for by the detector
    assert np.array_equal(median(values, axis=axis), np.median(values, axis=axis), equal_nan=True)


@settings(max_examples=100, deadline=None)
@given(
    st.integers(1, 300), st.integers(1, 6), st.floats(0.0, 100.0), st.integers(0, 2**32 - 1),
    st.booleans(),
)
def test_percentile_is_numpys_to_the_bit(
    n: int, windows: int, percentile: float, seed: int, with_nan: bool
) -> None:
    rng = np.random.default_rng(seed)
    env = rng.lognormal(0.0, 2.0, (windows, n, 8))
    if with_nan:
        env[0, rng.integers(n), rng.integers(8)] = np.nan
    expected = np.percentile(env, percentile, axis=1)
    assert np.array_equal(percentile_along_1(env, percentile), expected, equal_nan=True)


def test_neither_imports_numpy_masked_arrays() -> None:
    import subprocess
    import sys

    code = (
        "import sys, numpy as np\n"
        "from dsp.detect.orderstats import median, percentile_along_1\n"
        "median(np.arange(10.0)); median(np.ones((4, 3)), axis=0)\n"
        "percentile_along_1(np.ones((2, 5, 3)), 20.0)\n"
        "print('numpy.ma' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


@settings(max_examples=150, deadline=None)
@given(
    st.one_of(
        st.lists(st.floats(allow_nan=False, allow_infinity=False, width=64), min_size=1,
                 max_size=12),
        st.lists(st.integers(-10**6, 10**6), min_size=1, max_size=12),
    )
)
def test_median_of_is_statistics_median_to_the_bit(values: list[float]) -> None:
    expected = statistics.median(values)
    got = median_of(values)
    assert got == expected and type(got) is type(expected)
    assert median_of(iter(values)) == expected  # any iterable, read once


def test_median_of_numpy_scalars_and_no_values() -> None:
    values = [np.float64(0.1), np.float64(0.7), np.float64(0.3), np.float64(0.2)]
    assert median_of(values) == statistics.median(values)
    with pytest.raises(ValueError, match="no median"):
        median_of([])


def test_the_detect_command_imports_no_statistics() -> None:
    import subprocess
    import sys

    code = "import sys, hostapp.cli.detect\nprint('statistics' in sys.modules)\n"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


@settings(max_examples=60, deadline=None)
@given(
    st.integers(min_value=1, max_value=12),
    st.integers(min_value=1, max_value=8),
    st.integers(min_value=0, max_value=2**32 - 1),
)
def test_nanmedian_columns_is_numpys_nanmedian(rows: int, cols: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    values = rng.normal(size=(rows, cols)).round(1)  # ties too
    values[rng.random((rows, cols)) < 0.3] = np.nan
    values[:, 0] = np.nan  # a column with nothing in it
    with np.errstate(invalid="ignore"), pytest.warns(RuntimeWarning):
        expected = np.nanmedian(values, axis=0)
    np.testing.assert_array_equal(nanmedian_columns(values), expected)
