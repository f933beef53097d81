"""scripts/fit.py: the bisection finds a decreasing function's target and refuses a bracket that
does not hold it; distances outside the paper's ranges are measured in points."""
import pytest

import fit


def test_bisection_finds_the_target_of_a_decreasing_function():
    f = lambda x: 5000.0 / x  # noqa: E731  (throughput falls as a cost rises)
    x = fit.bisect(f, 2000.0, 1.0, 5.0, steps=20)
    assert f(x) == pytest.approx(2000.0, rel=1e-4)


def test_a_bracket_without_the_target_is_refused():
    with pytest.raises(ValueError, match="not between"):
        fit.bisect(lambda x: 5000.0 / x, 10_000.0, 1.0, 5.0, steps=5)


def test_range_error_is_zero_inside_and_the_largest_distance_outside():
    assert fit.range_error([7.0, 15.0, 10.0], 7, 15) == 0
    assert fit.range_error([6.7, 8.6], 7, 15) == pytest.approx(0.3)
    assert fit.range_error([47.0, 24.6, 14.0], 5, 23) == pytest.approx(24.0)
