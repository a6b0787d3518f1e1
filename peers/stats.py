#!/usr/bin/env python3
"""The one statistics helper of the peers/ scripts: medians, per-pair ratios, the
interquartile range and a bootstrap interval of a median, computed as scalescope
computes them (crates/stats: the median averages the two middle values of an even
sample; quantiles are Hyndman and Fan's type 7, as R and NumPy). Imported by the
scripts' Python parts (PYTHONPATH=peers) and run by their shell parts:

    python3 peers/stats.py median 3 1 2        -> 2
    python3 peers/stats.py ratio 10 5          -> 2
    python3 peers/stats.py ratios "1 2" "2 4"  -> 0.5 0.5 (pair by pair)
    python3 peers/stats.py iqr 1 2 3 4 10      -> 2
"""

import random
import sys


def median(values):
    v = sorted(float(x) for x in values)
    if not v:
        raise ValueError("median of no values")
    n = len(v)
    return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2


def quantile(values, q):
    v = sorted(float(x) for x in values)
    if not v:
        raise ValueError("quantile of no values")
    h = (len(v) - 1) * min(max(q, 0.0), 1.0)
    lo = int(h)
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (h - lo) * (v[hi] - v[lo])


def iqr(values):
    return quantile(values, 0.75) - quantile(values, 0.25)


def ratios(a, b):
    """a[i] / b[i] for each pair (the runs of a pair measured side by side)."""
    if len(a) != len(b):
        raise ValueError(f"{len(a)} values against {len(b)}: not pairs")
    return [float(x) / float(y) for x, y in zip(a, b)]


def bootstrap_median_ci(values, draws=2000, seed=1):
    """95% percentile interval of the median, values resampled with replacement."""
    rng = random.Random(seed)
    v = list(values)
    meds = sorted(median([rng.choice(v) for _ in v]) for _ in range(draws))
    return meds[int(0.025 * (draws - 1))], meds[int(0.975 * (draws - 1))]


def _main(argv):
    if len(argv) < 2:
        sys.exit(__doc__)
    what, args = argv[1], argv[2:]
    if what == "median":
        print(median(args))
    elif what == "iqr":
        print(iqr(args))
    elif what == "ratio":
        print(float(args[0]) / float(args[1]))
    elif what == "ratios":
        print(" ".join(f"{r:.6g}" for r in ratios(args[0].split(), args[1].split())))
    else:
        sys.exit(f"unknown: {what}\n{__doc__}")


if __name__ == "__main__":
    _main(sys.argv)
