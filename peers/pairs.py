"""Interleaved pairs of a peer and scalescope, timed and weighed alike.

Every process of both sides is started here under GNU time (`/usr/bin/time -f %M`,
which reaps it with wait4), so each run's peak resident set (ru_maxrss, the kernel's
high-water mark of the process's RSS) is measured the same way on both sides. A row is a list of pairs whose order alternates
(peer first in even pairs); its summary gives, per side, the median time, the spread
(IQR / median over the pairs) and the median peak RSS, and the median of the pairs'
ratios (peer time / scalescope time: above 1, scalescope is faster; scalescope RSS /
peer RSS: at or below 1, it needs no more memory).
"""
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.environ.get('PEERS_DIR', os.path.dirname(__file__)))
import stats  # noqa: E402  peers/stats.py: the peers' one statistics helper

TIME = os.environ.get('GNU_TIME', '/usr/bin/time')


def run(argv, env=None, ok=(0,)):
    """Runs argv under GNU time; returns (stdout, peak RSS in bytes). Exits on a
    failed run (an exit status not in `ok`). GNU time reaps the process with wait4 and prints its ru_maxrss;
    the figure has a floor of time's own RSS (about 2 MB: Linux carries the
    high-water mark across fork and exec), the same on both sides."""
    with tempfile.NamedTemporaryFile(mode='w+') as rss, tempfile.TemporaryFile(mode='w+') as err:
        # stderr to a file, so reading stdout to its end cannot stall on a full pipe.
        p = subprocess.run([TIME, '-f', '%M', '-o', rss.name, *argv], env=env,
                           stdout=subprocess.PIPE, stderr=err, text=True)
        if p.returncode not in ok:
            err.seek(0)
            sys.exit(f"{' '.join(argv)}: exit {p.returncode}: {err.read().strip()[-500:]}")
        kb = int(rss.read().split()[-1])
    return p.stdout, kb * 1024


def pairs(n, peer, ours):
    """n pairs of (peer(), ours()), order alternating; each returns (seconds, rss, extra)."""
    cells = []
    for i in range(n):
        if i % 2 == 0:
            p = peer()
            o = ours()
        else:
            o = ours()
            p = peer()
        cells.append((p, o))
    return cells


def spread(values):
    m = stats.median(values)
    return stats.iqr(values) / m if m else float('nan')


def summary(cells):
    """(peer median s, peer spread, ours median s, ours spread, median time ratio,
    peer median RSS MB, ours median RSS MB, median RSS ratio, per-pair time ratios)."""
    ps = [p[0] for p, _ in cells]
    os_ = [o[0] for _, o in cells]
    pr = [p[1] for p, _ in cells]
    orss = [o[1] for _, o in cells]
    ratios = [a / b for a, b in zip(ps, os_)]
    mem = [b / a for a, b in zip(pr, orss)]
    return dict(peer=stats.median(ps), peer_spread=spread(ps), ours=stats.median(os_),
                ours_spread=spread(os_), ratio=stats.median(ratios),
                peer_mb=stats.median(pr) / 1e6, ours_mb=stats.median(orss) / 1e6,
                mem_ratio=stats.median(mem), ratios=ratios)


HEADER = ("| size | threads | kernel | timing | peer s (IQR/med) | scalescope s (IQR/med) "
          "| time ratio | peer MB | scalescope MB | RSS ratio | per-pair time ratios |\n"
          "|---|---:|---|---|---:|---:|---:|---:|---:|---:|---|")


def line(size, threads, kernel, timing, s):
    pairs_text = " ".join(f"{r:.2f}" for r in s["ratios"])
    return (f"| {size} | {threads} | {kernel} | {timing} | {s['peer']:.4g} ({s['peer_spread']:.2f}) "
            f"| {s['ours']:.4g} ({s['ours_spread']:.2f}) | **{s['ratio']:.2f}x** | {s['peer_mb']:.0f} "
            f"| {s['ours_mb']:.0f} | {s['mem_ratio']:.2f} | {pairs_text} |")

def print_ab(s):
    """One line for an A/B of two binaries from `summary`: A in the peer's
    columns, B in ours, the median pair ratio A/B and every pair's."""
    print(f"A {s['peer']*1e3:.2f} ms (IQR/median {s['peer_spread']:.2f}, {s['peer_mb']:.0f} MB), "
          f"B {s['ours']*1e3:.2f} ms (IQR/median {s['ours_spread']:.2f}, {s['ours_mb']:.0f} MB), "
          f"median ratio A/B {s['ratio']:.3f}, pairs {' '.join(f'{r:.2f}' for r in s['ratios'])}")
