"""goldeval.resample: the seeded counter-based bootstrap stream, its C kernel against its NumPy definition, and the
distribution of the resampled means against what the bootstrap of a mean must give."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from goldeval import resample
from goldeval.errors import InputError
from goldeval.resample import resample_means, resample_means_numpy, stream_keys

MASK = (1 << 64) - 1
GAMMA = 0x9E3779B97F4A7C15


def _splitmix(z: int) -> int:
    # SplitMix64's output function (Steele, Lea & Flood 2014; the constants of Vigna's splitmix64.c)
    z &= MASK
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return z ^ (z >> 31)


def _draw_by_hand(n: int, key: int, retry: int, p: int) -> int:
    """Draw p of the stream, written from the module docstring one scalar at a time (independent of _draws)."""
    word = _splitmix(key + GAMMA * (p // 2 + 1))
    x = (word >> 32) if p % 2 else (word & 0xFFFFFFFF)
    t = (1 << 32) % n
    a = 1
    while (x * n) & 0xFFFFFFFF < t:
        x = _splitmix(retry + GAMMA * (64 * p + a + 1)) & 0xFFFFFFFF
        a += 1
    return (x * n) >> 32


@pytest.mark.parametrize("n", [3, 1000, 99_991, 1_073_741_825])
def test_draws_follow_the_stated_stream(n):
    # n = 1,073,741,825: 2**32 mod n = 1,073,741,821, so a quarter of the draws are rejected and drawn again;
    # n = 99,991 rejects one draw in ~43,000 (none in 2,000: the plain multiply-shift), n = 1000 and 3 almost never
    key, retry = stream_keys(11)
    for p0 in (0, 7):  # an odd first draw starts on a word's high half
        got = resample._draws(n, key, retry, p0, 2_000).tolist()
        assert got == [_draw_by_hand(n, key, retry, p0 + i) for i in range(2_000)]
        assert all(0 <= g < n for g in got)


def test_draws_are_uniform_over_the_cases():
    # 200,000 draws over n = 37 cases: Pearson's chi-square against equal counts (36 df) is not extreme
    # (scipy.stats.chisquare; p > 1e-4, which a uniform stream fails once in 10,000 seeds)
    key, retry = stream_keys(0)
    counts = np.bincount(resample._draws(37, key, retry, 0, 200_000), minlength=37)
    assert counts.sum() == 200_000 and counts.size == 37
    assert stats.chisquare(counts).pvalue > 1e-4


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 7, 1_001, 99_991])
def test_c_kernel_gives_the_numpy_definitions_bits(n):
    if resample._fast_resample_means is None:
        pytest.skip("goldeval._fast is not built")
    d = np.random.default_rng(n).normal(size=n)
    want = resample_means_numpy(d, 23, seed=5)
    assert resample_means(d, 23, 5, threads=1).tobytes() == want.tobytes()
    assert resample_means(d, 23, 5, threads=3).tobytes() == want.tobytes()  # threads never change a bit
    # any range of resamples on its own: the stream is counter-based
    assert resample_means_numpy(d, 10, seed=5, first=13).tobytes() == want[13:].tobytes()


def test_many_threads_split_a_large_run_into_the_same_means():
    if resample._fast_resample_means is None:
        pytest.skip("goldeval._fast is not built")
    d = np.random.default_rng(0).random(50_000)
    # 400 resamples of 50,000 = 2e7 draws: more than one task of 2**23 draws, so the threads really split them
    one = resample_means(d, 400, 9, threads=1)
    assert resample_means(d, 400, 9, threads=4).tobytes() == one.tobytes()
    assert resample_means_numpy(d, 400, 9).tobytes() == one.tobytes()


def test_means_of_two_values_by_hand():
    # values {0, 1}, two draws a resample: the mean is 0, 0.5 or 1 with probabilities 1/4, 1/2, 1/4.
    # 20,000 resamples: each share within 5 sd (sd of a share p: sqrt(p(1-p)/20,000) ≤ 0.0036)
    m = resample_means(np.array([0.0, 1.0]), 20_000, seed=0)
    assert set(np.unique(m).tolist()) == {0.0, 0.5, 1.0}
    for value, p in ((0.0, 0.25), (0.5, 0.5), (1.0, 0.25)):
        assert abs(np.mean(m == value) - p) < 5 * 0.0036


def test_bootstrap_variance_of_the_mean():
    # Efron & Tibshirani (1993) §5.2: the bootstrap distribution of a mean has mean x̄ and variance σ̂²/n, σ̂² the
    # plug-in variance (divisor n). For x = 0..n-1: x̄ = (n-1)/2, σ̂² = (n²-1)/12. With R = 20,000 resamples
    # the sample variance is within 5% (relative sd sqrt(2/R) = 1%), and the sample mean within 5 sd.
    n = 1_001
    m = resample_means(np.arange(n, dtype=float), 20_000, seed=1)
    want_var = (n * n - 1) / 12 / n
    assert abs(m.var(ddof=1) / want_var - 1) < 0.05
    assert abs(m.mean() - (n - 1) / 2) < 5 * np.sqrt(want_var / 20_000)


def test_same_seed_same_means_other_seed_other_means():
    d = np.linspace(0, 1, 300) ** 2
    assert resample_means(d, 200, 4).tobytes() == resample_means(d, 200, 4).tobytes()
    assert resample_means(d, 200, 4).tobytes() != resample_means(d, 200, 5).tobytes()


def test_bad_arguments_are_refused():
    with pytest.raises(InputError, match="1 to"):
        resample_means(np.array([]), 10, 0)
    with pytest.raises(InputError, match="1-d"):
        resample_means(np.zeros((2, 2)), 10, 0)
    with pytest.raises(InputError, match="n_resamples must be ≥ 0"):
        resample_means(np.zeros(3), -1, 0)
    with pytest.raises(InputError, match="seed must be an integer ≥ 0, got -1"):
        resample_means(np.zeros(3), 10, -1)
    with pytest.raises(InputError, match="got True"):
        stream_keys(True)
    assert resample_means(np.zeros(3), 0, 0).shape == (0,)


def _kernels() -> tuple[str, ...]:
    fast = pytest.importorskip("goldeval._fast")
    return tuple(fast.resample_kernels())


def _order_sensitive(n: int) -> np.ndarray:
    """Values whose sums change in the last bits when added in another order (1e16 beside ±1 and thirds), with a
    -0.0, subnormals, and the largest doubles (a sum overflows to ±inf in some resamples)."""
    rng = np.random.default_rng(n)
    d = rng.normal(size=n) / 3.0
    d[::5] = 1e16
    d[1::7] = -1e16
    d[2::11] = -0.0
    d[3::13] = 5e-324
    if n > 50:
        d[17] = np.finfo(float).max
        d[31] = np.finfo(float).max
    return d


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 1_023, 1_024, 1_025, 2_047, 2_049, 99_991, 100_000])
def test_every_c_kernel_gives_the_numpy_definitions_bits(n):
    # the AVX-512 kernel makes sixteen draws at a time, as pairs of 32-bit indices in 64-bit words, and adds four
    # lanes in one register: every shape of batch (a resample starting on a word's high half: odd n and first,
    # a batch of 1,024 draws and a few over, a tail of 1-3 draws) and values whose sums depend on the order of the
    # additions give the definition's bits. n = 100,000 rejects one draw in ~64,000 (2**32 mod n = 67,296), so
    # some of the 7 resamples redraw one.
    d = _order_sensitive(n)
    key, retry = stream_keys(8)
    for first in (0, 3):
        want = resample_means_numpy(d, 7, seed=8, first=first)
        for kernel in _kernels():
            got = np.empty(7)
            resample._fast_resample_means(d, key, retry, first, got, kernel)
            assert got.tobytes() == want.tobytes(), (kernel, n, first)


def test_every_c_kernel_redraws_rejected_draws_as_the_definition():
    # n = 3,000,001: 2**32 mod n = 1,965,865, so ~1 draw in 2,185 is rejected and drawn again (~2,700 of these 6e6)
    n = 3_000_001
    assert (1 << 32) % n == 1_965_865
    d = np.random.default_rng(1).random(n)
    key, retry = stream_keys(2)
    want = resample_means_numpy(d, 2, seed=2)
    for kernel in _kernels():
        got = np.empty(2)
        resample._fast_resample_means(d, key, retry, 0, got, kernel)
        assert got.tobytes() == want.tobytes(), kernel


def test_kernel_names_are_checked():
    fast = pytest.importorskip("goldeval._fast")
    kernels = _kernels()
    assert kernels[-1] == "scalar" and set(kernels) <= {"avx512", "scalar"}
    out = np.empty(2)
    with pytest.raises(ValueError, match="unknown kernel sse9"):
        fast.resample_means(np.ones(3), 1, 2, 0, out, "sse9")
    if "avx512" not in kernels:
        with pytest.raises(ValueError, match="no avx512 kernel"):
            fast.resample_means(np.ones(3), 1, 2, 0, out, "avx512")
    key, retry = stream_keys(0)
    want = resample_means_numpy(np.arange(5.0), 2, seed=0)
    for kernel in ("auto", *kernels):  # a healthy call: every kernel, and the default, give the definition's means
        out[:] = -1.0
        fast.resample_means(np.arange(5.0), key, retry, 0, out, kernel)
        assert out.tobytes() == want.tobytes(), kernel
