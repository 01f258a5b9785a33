"""The dense LU of the q and p̂ kernels: the compiled loop against LAPACK's getrf
(:mod:`strgm.features.dense_lu`), on the systems I − P those kernels solve.

For each size k, the median over ``--reps`` batches of the CPU time (all threads) one
factorisation takes
(a fresh copy of the matrix each time, the copy included in both routes, so the
difference is the factorisation's), and the ratio. The threshold
``strgm.features.dense_lu.LAPACK_FROM`` is the smallest size from which LAPACK is
faster here. Matrices: I − P with P ≥ 0, a quarter of its entries nonzero, rows summing
to 0.9 (like the cyclic components of p̂'s products). BLAS runs on one thread, as during
EP and PEP (``EPSide.blas_threads``): OpenBLAS's threaded getrf (from k = 100) costs
more CPU at these sizes.

    python -m benchmarks.pep.dense_lu_speed          # results/dense_lu_speed.{json,md,png}
"""

from __future__ import annotations

import time

import numpy as np

from benchmarks import harness
from benchmarks.ep.common import size_plot, size_sweep
from strgm.features import dense_lu

SIZES = (4, 8, 16, 24, 28, 32, 36, 40, 44, 48, 64, 100, 150, 200, 300, 400)


def system(k: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    p = rng.random((k, k)) * (rng.random((k, k)) < 0.25)
    p *= 0.9 / np.maximum(p.sum(axis=1, keepdims=True), 1e-300)
    return np.eye(k) - p


def per_call(fn, m: np.ndarray, reps: int) -> float:
    """Median over ``reps`` batches of the seconds one call takes."""
    piv = np.empty(m.shape[0], np.int64)
    fn(m.copy(), piv)  # compiled before timing
    calls = max(1, int(3e5 / m.shape[0] ** 2))
    out = []
    for _ in range(reps):
        t = time.process_time()
        for _ in range(calls):
            fn(m.copy(), piv)
        out.append((time.process_time() - t) / calls)
    return float(np.median(out))


def main() -> None:
    size_sweep(__doc__, SIZES, one_size, report)


def one_size(k: int, reps: int) -> dict:
    m = system(k)
    loop = per_call(dense_lu._lu_loop, m, reps)
    lapack = per_call(dense_lu._lu_lapack, m, reps)
    return {"k": k, "loop_us": loop * 1e6, "lapack_us": lapack * 1e6,
            "loop_over_lapack": loop / lapack}


def report(rows: list, reps: int) -> None:
    faster = [r["k"] for r in rows if r["loop_over_lapack"] > 1.0]
    # the smallest size from which LAPACK was faster at every larger size
    from_k = next((r["k"] for i, r in enumerate(rows)
                   if all(q["loop_over_lapack"] > 1.0 for q in rows[i:])), None)
    text = harness.markdown(
        "Dense LU: compiled loop against LAPACK getrf",
        ["k", "loop µs", "LAPACK µs", "loop / LAPACK"],
        [[r["k"], f"{r['loop_us']:.1f}", f"{r['lapack_us']:.1f}",
          f"{r['loop_over_lapack']:.2f}"] for r in rows],
        run=harness.run_line(__name__, f"--reps {reps}") + " Module docstring: the "
            f"systems, the timing. Median of {reps} batches per size, one process, BLAS on "
            "one thread, CPU time per factorisation including the matrix copy. The "
            f"library's threshold `LAPACK_FROM` is {dense_lu.LAPACK_FROM}.",
        notes=["LAPACK was faster at k = " + ", ".join(map(str, faster))
               + f"; at every size from k = {from_k} on."])
    harness.write_json("dense_lu_speed", {"reps": reps, "lapack_from": dense_lu.LAPACK_FROM,
                                          "lapack_faster_from": from_k, "rows": rows})
    harness.write_markdown("dense_lu_speed", text)
    print(text)
    size_plot("dense_lu_speed", [r["k"] for r in rows],
              [("compiled loop", [r["loop_us"] for r in rows], "o"),
               ("LAPACK getrf", [r["lapack_us"] for r in rows], "s")],
              (dense_lu.LAPACK_FROM, "LAPACK_FROM"), "states k", "µs per factorisation",
              "Dense LU of I − P", logx=True)


if __name__ == "__main__":
    main()
