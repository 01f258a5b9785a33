"""EM's E-step split over blocks of words (``strgm train --blocks N [--scheduler]``,
:mod:`strgm.models.em_blocks`) against the unsplit E-step, on textbook paradigms and a
synthetic one.

For each paradigm, ``--em-iters`` EM iterations with the default pruned-BP E-step are run
three ways in this process: unsplit; in ``--blocks`` blocks serially; in the same blocks
on a LocalCluster of ``--workers`` worker processes. Measured: wall seconds, this
process's CPU seconds, the workers' CPU seconds (their rusage, read before and after),
the bytes the blocks exchanged (machines scattered once, messages sent to and received
from the blocks), whether the cluster run equals the serial block run exactly (θ, trace),
and how far the block schedule's final objective is from the unsplit one's.

    python benchmarks/distributed_blocks.py [--files F...] [--synthetic 300] [--blocks 2]

Writes benchmarks/results/distributed_blocks.{json,md,png}. The machine's 2 cores may be
shared with other jobs: the load average at the start is recorded.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
DATA = ROOT.parent / "shared" / "data" / "phonology"
OUT = ROOT / "benchmarks" / "results"
DEFAULT_FILES = ["Odden_2.1_Hungarian.tsv", "Odden_3.5_Catalan.tsv"]


def _worker_cpu(pool) -> float:
    import resource

    def cpu():
        r = resource.getrusage(resource.RUSAGE_SELF)
        return r.ru_utime + r.ru_stime

    return sum(pool.client.run(cpu).values())


def _timed(fn) -> tuple:
    t, c = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - t, time.process_time() - c


def bench(path: str, blocks: int, workers: int, em_iters: int) -> dict:
    from strgm.datasets.paradigm import read_paradigm
    from strgm.distributed.cluster import open_pool, parse_scheduler
    from strgm.models.em import train_phonology
    from strgm.models.em_blocks import block_e_step

    para = read_paradigm(path)
    bytes_seen: list = []

    def run(n=None, pool=None):
        if n is None:
            return train_phonology(para, em_iters=em_iters)
        with block_e_step(n, pool):
            r = train_phonology(para, em_iters=em_iters)
        bytes_seen.append(r.result.extra)
        return r

    unsplit, w0, c0 = _timed(run)
    serial, w1, c1 = _timed(lambda: run(blocks))
    with open_pool(parse_scheduler(f"local:{workers}")) as pool:
        before = _worker_cpu(pool)
        dist, w2, c2 = _timed(lambda: run(blocks, pool))
        wc = _worker_cpu(pool) - before
    extra = bytes_seen[-1]
    return {"file": os.path.basename(path), "words": len(para.observed), "blocks": blocks,
            "workers": workers, "em_iters": em_iters,
            "unsplit": {"wall": w0, "cpu": c0, "objective": unsplit.trace[-1]["objective"]},
            "serial_blocks": {"wall": w1, "cpu": c1,
                              "objective": serial.trace[-1]["objective"]},
            "cluster_blocks": {"wall": w2, "client_cpu": c2, "worker_cpu": wc,
                               "objective": dist.trace[-1]["objective"]},
            "identical": bool(np.array_equal(dist.model.theta, serial.model.theta)
                              and dist.trace == serial.trace),
            "bytes_last_e_step": {k: extra.get(k) for k in
                                  ("bytes_scattered", "bytes_sent", "bytes_received")}}


def markdown(rows: list, meta: dict) -> str:
    out = ["# E-step split over blocks of words, against the unsplit E-step", "",
           f"What was run: `python benchmarks/distributed_blocks.py {meta['argv']}` "
           f"(load average {meta['load']:.2f} at the start, {os.cpu_count()} cores). "
           "Each run is EM with the default pruned-BP E-step; wall and CPU seconds of one "
           "run each. `identical`: the cluster run's θ and trace equal the serial block "
           "run's exactly. MB: the last E-step's transfers (machines scattered once; "
           "messages and caches sent to and received from the blocks).", "",
           "| paradigm | words | blocks | unsplit wall s | serial blocks wall s | "
           "cluster wall s | speed-up | client + worker CPU s | identical | "
           "Δ objective (blocks − unsplit) | MB scattered / sent / received |",
           "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        u, s, d, b = r["unsplit"], r["serial_blocks"], r["cluster_blocks"], \
            r["bytes_last_e_step"]
        mb = " / ".join(f"{(b[k] or 0) / 1e6:.0f}" for k in
                        ("bytes_scattered", "bytes_sent", "bytes_received"))
        out.append(f"| {r['file']} | {r['words']} | {r['blocks']} | {u['wall']:.1f} | "
                   f"{s['wall']:.1f} | {d['wall']:.1f} | {u['wall'] / d['wall']:.2f}× | "
                   f"{d['client_cpu']:.1f} + {d['worker_cpu']:.1f} | {r['identical']} | "
                   f"{s['objective'] - u['objective']:+.2e} | {mb} |")
    return "\n".join(out) + "\n"


def plot(rows: list, path: Path) -> None:
    """Wall seconds of the three runs per paradigm (bars)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    fig, ax = plt.subplots(figsize=(7, 3.5))
    x = np.arange(len(rows))
    for i, (key, label) in enumerate([("unsplit", "unsplit"), ("serial_blocks",
                                                                "blocks, serially"),
                                      ("cluster_blocks", "blocks, local cluster")]):
        ax.bar(x + (i - 1) * 0.27, [r[key]["wall"] for r in rows], 0.27, label=label)
    ax.set_xticks(x, [r["file"].replace(".tsv", "") for r in rows], fontsize=8)
    ax.set_ylabel("wall seconds (EM)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", nargs="*", default=[str(DATA / f) for f in DEFAULT_FILES])
    ap.add_argument("--synthetic", type=int, default=300, help="words (0: none)")
    ap.add_argument("--blocks", type=int, default=2)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--em-iters", type=int, default=1)
    args = ap.parse_args(argv)
    files = list(args.files)
    tmp = tempfile.mkdtemp()
    if args.synthetic:
        from phonology_train_speed import synthetic_file

        files.append(synthetic_file(args.synthetic, tmp))
    meta = {"argv": " ".join(sys.argv[1:] if argv is None else argv),
            "load": os.getloadavg()[0]}
    rows = []
    for f in files:
        rows.append(bench(f, args.blocks, args.workers, args.em_iters))
        print(json.dumps(rows[-1]), flush=True)
    from strgm.safe_io import atomic_write_json, atomic_write_text

    OUT.mkdir(exist_ok=True)
    atomic_write_json(str(OUT / "distributed_blocks.json"), {"meta": meta, "rows": rows})
    atomic_write_text(str(OUT / "distributed_blocks.md"), markdown(rows, meta))
    plot(rows, OUT / "distributed_blocks.png")
    print(markdown(rows, meta))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
