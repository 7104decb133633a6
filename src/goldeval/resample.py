"""Bootstrap resampling of a mean: the means of many resamples, drawn with replacement, seeded, fast at 10⁵ cases.

A paired bootstrap of 10,000 resamples over 100,000 cases draws 10⁹ case indices. NumPy's ``Generator.integers``
plus a gather and a mean cost ~3.5 s there (``goldeval compare`` of two 100k runs, issue 31). This module draws the
same *distribution* (every case index equally likely, independently, with replacement) from a counter-based
stream, so that any range of resamples can be computed on its own: the C kernel (``goldeval._fast.resample_means``)
runs disjoint ranges on threads, and the NumPy definition here (:func:`resample_means_numpy`) gives the same bits
where the extension is missing. The result depends only on the values, the seed and the number of resamples —
never on the number of threads.

The stream (the definition; ``_fast.c`` follows it to the bit):

* ``key, key_retry = numpy.random.SeedSequence(seed).generate_state(2, numpy.uint64)``;
* draw ``p`` (``p = r·n + j`` for case ``j`` of resample ``r``) takes the low (``p`` even) or high (``p`` odd) 32
  bits ``x`` of ``splitmix64(key + γ·(p // 2 + 1))`` — the ``p // 2``-th output of SplitMix64 seeded with ``key``
  (Steele, Lea & Flood 2014; ``γ = 0x9E3779B97F4A7C15``);
* the case index is Lemire's ``(x · n) >> 32``, unbiased by rejection: while the low 32 bits of ``x · n`` fall below
  ``2³² mod n``, ``x`` is drawn again as the low 32 bits of ``splitmix64(key_retry + γ·(64 p + a + 1))``, ``a = 1, 2, …``
  (Lemire, "Fast random integer generation in an interval", ACM TOMACS 29 (2019));
* a resample's sum adds its draws in four lanes (draw ``j`` into lane ``j mod 4``, in order), then
  ``(l₀ + l₁) + (l₂ + l₃)``; the mean is that sum over ``n``.

The C kernel comes in two builds of the same definition, chosen when it runs (``_fast.resample_kernels()``): an
AVX-512 one on x86-64 CPUs that have AVX-512 F and DQ (sixteen draws a step in vector registers, the four lanes added
in one register: ~0.4× the CPU of the portable one at 100,000 values) and the portable scalar C; both give the
NumPy definition's bits (tests/unit/test_resample.py holds every kernel to it).

The draws differ from those of ``numpy.random.default_rng(seed).integers`` (which this replaces in
:func:`goldeval.runs.compare.paired_bootstrap`), so an interval moves within its Monte Carlo error; for a given
seed it is fixed.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from goldeval.errors import InputError

try:  # the optional C extension; the NumPy definition below gives the same bits
    from goldeval._fast import resample_means as _fast_resample_means
except ImportError:  # pragma: no cover - depends on the build
    _fast_resample_means = None

__all__ = ["resample_means", "resample_means_numpy", "stream_keys", "MAX_CASES"]

#: Most values a resample is drawn from: the 32-bit multiply-shift draws indices below 2**31.
MAX_CASES = (1 << 31) - 1

_GAMMA = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_LOW = np.uint64(0xFFFFFFFF)
#: Draws per block of the NumPy definition (its arrays are a few times 8 bytes a draw).
_BLOCK_DRAWS = 1 << 16  # cache-sized: twice as fast as 1 << 20 at 100,000 values
#: Draws per thread task of the C kernel; below ``2 * _TASK_DRAWS`` draws in all, one thread.
_TASK_DRAWS = 1 << 23


def stream_keys(seed: int) -> tuple[int, int]:
    """The two 64-bit stream keys of *seed* (``SeedSequence(seed).generate_state(2, uint64)``).

    Raises:
        InputError: *seed* is not an int ≥ 0.

    Example:
        >>> stream_keys(0) == stream_keys(0) != stream_keys(1)
        True
    """
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise InputError(f"bootstrap seed must be an integer ≥ 0, got {seed!r}.")
    key, retry = np.random.SeedSequence(int(seed)).generate_state(2, np.uint64)
    return int(key), int(retry)


def _mix(z: np.ndarray) -> np.ndarray:
    """SplitMix64's output function, elementwise on uint64 (wrapping arithmetic), in place."""
    z ^= z >> np.uint64(30)
    z *= _M1
    z ^= z >> np.uint64(27)
    z *= _M2
    z ^= z >> np.uint64(31)
    return z


def _draws(n: int, key: int, retry: int, p0: int, size: int) -> np.ndarray:
    """Case indices (int64) of draws ``p0 .. p0 + size - 1`` of the stream (module docstring)."""
    c0, c1 = p0 >> 1, (p0 + size - 1) >> 1
    with np.errstate(over="ignore"):
        words = _mix(np.uint64(key) + _GAMMA * (np.arange(c0, c1 + 1, dtype=np.uint64) + np.uint64(1)))
    halves = np.empty(2 * words.size, dtype=np.uint64)
    halves[0::2] = words & _LOW
    halves[1::2] = words >> np.uint64(32)
    x = halves[p0 & 1 : (p0 & 1) + size]
    m = x * np.uint64(n)
    t = (1 << 32) % n
    if t:
        for i in np.flatnonzero((m & _LOW) < np.uint64(t)).tolist():  # rare: probability < n / 2**32 a draw
            p, a, mi = p0 + i, 1, int(m[i])
            while mi & 0xFFFFFFFF < t:
                z = (retry + 0x9E3779B97F4A7C15 * (p * 64 + a + 1)) & 0xFFFFFFFFFFFFFFFF
                z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & 0xFFFFFFFFFFFFFFFF
                z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & 0xFFFFFFFFFFFFFFFF
                mi = ((z ^ (z >> 31)) & 0xFFFFFFFF) * n
                a += 1
            m[i] = mi
    return (m >> np.uint64(32)).astype(np.int64)


def resample_means_numpy(values: np.ndarray, n_resamples: int, seed: int, *, first: int = 0) -> np.ndarray:
    """The definition of :func:`resample_means` in NumPy (the C kernel gives the same bits), resamples
    ``first .. first + n_resamples - 1``; see :func:`resample_means` for the arguments."""
    d = _checked(values, n_resamples)
    key, retry = stream_keys(seed)
    n = d.size
    n4 = -(-n // 4) * 4
    out = np.empty(n_resamples)
    per_block = max(1, _BLOCK_DRAWS // n)
    for start in range(0, n_resamples, per_block):
        k = min(per_block, n_resamples - start)
        gathered = np.zeros((k, n4))
        gathered[:, :n] = d[_draws(n, key, retry, (first + start) * n, k * n)].reshape(k, n)
        lanes = np.cumsum(gathered.reshape(k, n4 // 4, 4), axis=1)[:, -1, :]  # each lane added in order
        out[start : start + k] = ((lanes[:, 0] + lanes[:, 1]) + (lanes[:, 2] + lanes[:, 3])) / n
    return out


def _checked(values: np.ndarray, n_resamples: int) -> np.ndarray:
    d = np.ascontiguousarray(values, dtype=np.float64)
    if d.ndim != 1 or not 1 <= d.size <= MAX_CASES:
        raise InputError(f"resample_means: values must be 1-d with 1 to {MAX_CASES:,} items, got shape {d.shape}.")
    if n_resamples < 0:
        raise InputError(f"resample_means: n_resamples must be ≥ 0, got {n_resamples}.")
    return d


def resample_means(values: np.ndarray, n_resamples: int, seed: int, *, threads: int | None = None) -> np.ndarray:
    """Means of *n_resamples* bootstrap resamples of *values* (each the mean of ``len(values)`` draws with
    replacement), from the seeded counter-based stream of the module docstring.

    Args:
        values: Shape ``(n,)``, float64 (converted), ``1 ≤ n ≤ MAX_CASES``.
        n_resamples: How many resamples (≥ 0).
        seed: Integer ≥ 0; the same values and seed give the same means, bit for bit, with or without the C
            extension and at any thread count.
        threads: Threads the C kernel runs on (default: the CPUs this process may use, at most 4; one thread below
            ~16M draws). Ignored by the NumPy definition.

    Returns:
        float64 array of shape ``(n_resamples,)``: resample ``r``'s mean at ``[r]``.

    Raises:
        InputError: *values* not 1-d or empty or longer than ``MAX_CASES``; *n_resamples* < 0; a bad *seed*.

    Source: Efron & Tibshirani, *An Introduction to the Bootstrap* (1993) ch. 6 (resampling with replacement);
    SplitMix64 (Steele, Lea & Flood, OOPSLA 2014); Lemire, ACM TOMACS 29 (2019) (unbiased bounded integers).

    Example:
        >>> m = resample_means(np.array([0.0, 1.0]), 1000, seed=0)
        >>> m.shape, bool(((m == 0) | (m == 0.5) | (m == 1)).all()), bool(0.4 < m.mean() < 0.6)
        ((1000,), True, True)
    """
    if _fast_resample_means is None:
        return resample_means_numpy(values, n_resamples, seed)
    d = _checked(values, n_resamples)
    key, retry = stream_keys(seed)
    out = np.empty(n_resamples)
    per_task = max(1, _TASK_DRAWS // d.size)
    tasks = [(s, min(s + per_task, n_resamples)) for s in range(0, n_resamples, per_task)]
    if threads is None:
        threads = min(4, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1))
    fast = _fast_resample_means

    def run(task: tuple[int, int]) -> None:
        fast(d, key, retry, task[0], out[task[0] : task[1]])

    if threads <= 1 or len(tasks) < 2:
        for task in tasks:
            run(task)
    else:
        with ThreadPoolExecutor(max_workers=min(threads, len(tasks)), thread_name_prefix="goldeval-resample") as pool:
            list(pool.map(run, tasks))
    return out
