"""q's moments by DFA size: the compiled dense kernel (:mod:`strgm.features.q_kernel`)
against the numpy/scipy route (dense LU, then BiCGSTAB above ``q_solves._DENSE_MAX``
states) that :func:`strgm.features.moments.q_moments` takes above
``q_solves.COMPILED_MAX``.

θ: every unigram (log weight −log 2N) and random bigrams and trigrams (normal, σ = 0.3)
over N = 33 labels (the English data's alphabet), added until ENCODE(θ)'s DFA has about
k states — the shape of PEP's beliefs, whose DFAs reach a few hundred states on 1,000
English words. For each k, the median over ``--reps`` batches of the CPU time of one
``q_moments`` call by each route, BLAS on one thread as during PEP
(``EPSide.blas_threads``). ``COMPILED_MAX`` is the largest k up to which the compiled
kernel was faster at every size.

    python -m benchmarks.pep.q_route_speed          # results/q_route_speed.{json,md,png}
"""

from __future__ import annotations

import time

import numpy as np

from benchmarks import harness
from benchmarks.ep.common import size_plot, size_sweep
from strgm.features import moments, q_solves
from strgm.features.theta import FeatureSet, Theta

N = 33
SIZES = (100, 130, 160, 200, 250, 300, 350, 400, 500, 600)


def theta_of_size(k: int, seed: int = 0) -> Theta:
    """A normalisable θ whose DFA has about ``k`` states (module docstring)."""
    rng = np.random.default_rng(seed)
    feats = {(a,) for a in range(1, N + 1)}
    while True:
        w = tuple(int(x) for x in rng.integers(1, N + 1, size=2))
        feats.add(w[:1])
        feats.add(w)
        if rng.random() < 0.5:
            feats.add(w + (int(rng.integers(1, N + 1)),))
        fs = FeatureSet(sorted(feats), N)
        if fs.dfa.num_states >= k:
            break
    vals = rng.normal(size=len(fs)) * 0.3
    vals[fs.lengths == 1] = -np.log(2 * N)
    return Theta(fs, vals)


def per_call(th: Theta, compiled: bool, reps: int) -> float:
    """Median over ``reps`` batches of the CPU seconds of one q_moments call."""
    saved = moments.FAST_Q, q_solves.COMPILED_MAX
    moments.FAST_Q, q_solves.COMPILED_MAX = compiled, 10 ** 9
    try:
        moments.q_moments(th)  # compiled and cached before timing
        calls = max(3, int(2e6 / th.features.dfa.num_states ** 2))
        out = []
        for _ in range(reps):
            t = time.process_time()
            for _ in range(calls):
                moments.q_moments(th)
            out.append((time.process_time() - t) / calls)
    finally:
        moments.FAST_Q, q_solves.COMPILED_MAX = saved
    return float(np.median(out))


def one_size(k: int, reps: int) -> dict:
    th = theta_of_size(k)
    a, b = moments.q_moments(th), None
    saved = moments.FAST_Q
    moments.FAST_Q = False
    try:
        b = moments.q_moments(th)
    finally:
        moments.FAST_Q = saved
    assert abs(a.log_z - b.log_z) < 1e-9 and np.allclose(a.expectations, b.expectations,
                                                         rtol=1e-8, atol=1e-12)
    comp, ref = per_call(th, True, reps), per_call(th, False, reps)
    return {"k": int(th.features.dfa.num_states), "compiled_us": comp * 1e6,
            "reference_us": ref * 1e6, "reference_over_compiled": ref / comp}


def main() -> None:
    size_sweep(__doc__, SIZES, one_size, report)


def report(rows: list, reps: int) -> None:
    upto = None
    for r in rows:
        if r["reference_over_compiled"] <= 1.0:
            break
        upto = r["k"]
    text = harness.markdown(
        "q moments: compiled kernel against the numpy/scipy route",
        ["DFA states", "compiled µs", "reference µs", "reference / compiled"],
        [[r["k"], f"{r['compiled_us']:.0f}", f"{r['reference_us']:.0f}",
          f"{r['reference_over_compiled']:.2f}"] for r in rows],
        run=harness.run_line(__name__, f"--reps {reps}") + " Module docstring: the θs, "
            f"the timing. Median of {reps} batches per size, one process, BLAS on one "
            "thread, CPU µs per call. The library's threshold `COMPILED_MAX` is "
            f"{q_solves.COMPILED_MAX}; the reference route switches from a dense LU to "
            f"BiCGSTAB above {q_solves._DENSE_MAX} states.",
        notes=[f"The compiled kernel was faster at every size up to {upto} states."])
    harness.write_json("q_route_speed", {"reps": reps, "compiled_max": q_solves.COMPILED_MAX,
                                         "compiled_faster_upto": upto, "rows": rows})
    harness.write_markdown("q_route_speed", text)
    print(text)
    size_plot("q_route_speed", [r["k"] for r in rows],
              [("compiled kernel", [r["compiled_us"] for r in rows], "o"),
               ("numpy/scipy route", [r["reference_us"] for r in rows], "s")],
              (q_solves.COMPILED_MAX, "COMPILED_MAX"), "DFA states of ENCODE(θ)",
              "CPU µs per q_moments call", "q moments by route")


if __name__ == "__main__":
    main()
