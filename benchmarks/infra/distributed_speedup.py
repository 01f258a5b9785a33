"""Speed-up of ``--scheduler local:N`` over the serial run, and a scaling model to 16 and
64 workers, for the two kinds of distributed work (docs/architecture.md §1, the
distributed layer):

* many problem files: ``strgm infer DIR --json OUT --quiet`` over the shared textbook
  problems (one task per file), serially and with ``--scheduler local:N``;
* the PCFG E-step over sentence shards: ``--em-iters`` EM iterations of the relative-
  frequency WSJ-sample grammar (``treebank_pcfg``, Markov order 1) on the training
  sentences of at most ``--max-words`` words, serially
  (:func:`strgm.grammars.estimators.em`) and on a LocalCluster
  (:func:`strgm.distributed.pcfg_shards.fit_on_pool`); the θs are compared too.

Scaling model (from measured task times and transfer sizes, nothing fitted):

* files: a task is one file, so with P workers the run takes the longest-processing-time
  schedule (LPT) of the measured per-file seconds, plus the cluster start-up; the
  speed-up is capped by Σ t / max t;
* E-step: per iteration T(P) = W / P + S_P · o + (P · |θ| + S_P · |c|) / B + M, with W the
  serial shard compute seconds per E-step (measured shard by shard), S_P = 4P shards,
  o the scheduler's per-task overhead (measured with no-op tasks), |θ| and |c| the bytes
  of θ and of one shard's result, B an assumed network bandwidth (``--bandwidth``,
  default 1e8 B/s, a 1 Gbit link) and M the client's serial part (M-step and trace row,
  measured).  The shards' own tokens travel with their tasks (measured bytes, included).
  The predicted speed-up is e · (W + M) (the same shards run one after the other) over
  e · T(P) plus the grammar's one broadcast, for e E-steps; the speed-up over the serial
  E-step (batches of 64 sentences of one length, not shards) is reported beside it.

Both models assume idle cores; the CPU seconds measured beside the wall times (the
``strgm`` process with its reaped workers, and the workers' own rusage) show how many
cores the run really had.

    python -m benchmarks.infra.distributed_speedup [--workers 2] [--max-words 15] [--em-iters 2]

Writes benchmarks/results/distributed_speedup.{json,md,png}.  The machine's cores are
shared with other jobs: wall times are noisy, and the report says how many cores there
were and the load average at the start.
"""

from __future__ import annotations

import argparse
import heapq
import json
import os
import pickle
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from benchmarks import harness

DATA = harness.PHONOLOGY
NAME = "distributed_speedup"


def lpt_makespan(times, workers: int) -> float:
    """Longest-processing-time-first schedule of ``times`` on ``workers`` machines."""
    loads = [0.0] * workers
    for t in sorted(times, reverse=True):
        heapq.heappush(loads, heapq.heappop(loads) + t)
    return max(loads)


def _strgm(args: list) -> tuple:
    """(wall, CPU) seconds of one ``strgm`` process; the CPU time (its rusage from
    os.wait4) includes its worker processes once they are reaped."""
    t0 = time.perf_counter()
    exe = os.path.join(os.path.dirname(sys.executable), "strgm")  # the console script
    proc = subprocess.Popen([exe, *args], stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"strgm {' '.join(args)} failed")
    return time.perf_counter() - t0, usage.ru_utime + usage.ru_stime


def bench_files(workers: int, method: str, data: Path, reps: int = 3) -> dict:
    """``strgm infer DIR`` serial and with ``--scheduler local:workers``, alternately
    ``reps`` times (medians: the machine's speed drifts between runs)."""
    with tempfile.TemporaryDirectory() as tmp:
        serial_json, dist_json = os.path.join(tmp, "s.json"), os.path.join(tmp, "d.json")
        common = ["infer", str(data), "--method", method, "--quiet"]
        runs = []
        for _ in range(reps):
            runs.append(_strgm(common + ["--json", serial_json])
                        + _strgm(common + ["--json", dist_json, "--scheduler",
                                           f"local:{workers}"]))
        t_serial, c_serial, t_dist, c_dist = (float(np.median([r[i] for r in runs]))
                                              for i in range(4))
        t_one, _ = _strgm(common + ["--scheduler", "local:1"])  # overhead alone
        s, d = (json.loads(Path(p).read_text()) for p in (serial_json, dist_json))
    same = all(a["result"]["morphemes"] == b["result"]["morphemes"]
               for a, b in zip(s["files"], d["files"]))
    times = [f["seconds"] for f in s["files"]]
    record_bytes = [len(json.dumps(f["result"])) for f in s["files"]]
    return {"method": method, "files": [f["file"] for f in s["files"]],
            "task_seconds": times, "result_bytes": record_bytes,
            "serial_seconds": t_serial, "distributed_seconds": t_dist,
            "serial_cpu_seconds": c_serial, "distributed_cpu_seconds": c_dist,
            "one_worker_seconds": t_one, "reps": reps,
            "serial_seconds_all": [r[0] for r in runs],
            "distributed_seconds_all": [r[2] for r in runs],
            "speedup": t_serial / t_dist, "same_beliefs": same}


def _corpus(max_words: int):
    from benchmarks.grammars.treebank_pcfg import load
    from strgm.grammars.ptb import tree_leaves
    from strgm.grammars.unknown_words import grammar_known_words, map_sentence, \
        treebank_pcfg

    train = load(1, 159)
    g, _ = treebank_pcfg(train, horizontal=1)
    known, terms = grammar_known_words(g), frozenset(g.terminals)
    sents = [map_sentence(tree_leaves(t), known, terms) for t in train]
    return g, [s for s in sents if len(s) <= max_words]


def _worker_cpu(pool) -> float:
    """CPU seconds used so far by the cluster's worker processes."""
    return sum(pool.client.run(_cpu_seconds).values())


def _cpu_seconds() -> float:
    import resource

    u = resource.getrusage(resource.RUSAGE_SELF)
    return u.ru_utime + u.ru_stime


def _overhead(pool, n: int = 200) -> float:
    """Seconds per no-op task on the cluster (scheduler and messaging)."""
    t0 = time.perf_counter()
    pool.map(abs, list(range(n)))
    return (time.perf_counter() - t0) / n


def _shard_costs(g, sents, n_shards: int) -> dict:
    """Serial seconds and transfer bytes of each shard of one E-step."""
    import numpy as np

    from strgm.distributed.cluster import TaskPool
    from strgm.distributed.pcfg_shards import ShardedEStep, shard_estep

    step = ShardedEStep(TaskPool(None), _compiled(g), sents, n_shards)
    theta = g.probabilities()
    secs, out_bytes = [], []
    for shard in step.shards:
        t0 = time.perf_counter()
        res = shard_estep(shard, step.grammar, theta)
        secs.append(time.perf_counter() - t0)
        out_bytes.append(len(pickle.dumps(res)))
    return {"shard_seconds": secs, "shard_in_bytes": [len(pickle.dumps(s)) for s in
                                                      step.shards],
            "shard_out_bytes": out_bytes, "theta_bytes": int(np.asarray(theta).nbytes),
            "grammar_bytes": len(pickle.dumps(step.grammar))}


def _client_part(g, sents, theta) -> float:
    """Seconds of what the client does per EM iteration besides the E-step: the M-step
    and the trace row (−log P, bits/token, rules above 1e-7)."""
    import numpy as np

    from strgm.grammars.estimators import EMKernel

    k = EMKernel(g, sents)
    logz = np.zeros(len(sents))
    t0 = time.perf_counter()
    for _ in range(5):
        k.row(1, logz, k.mstep(theta * 100.0))
    return (time.perf_counter() - t0) / 5


def _compiled(g):
    from strgm.grammars.cfg import compile_grammar

    return compile_grammar(g)


def bench_em(workers: int, max_words: int, iters: int) -> dict:
    """EM serially and with the E-step on a LocalCluster of ``workers`` processes."""
    import numpy as np

    from strgm.distributed.cluster import open_pool, parse_scheduler
    from strgm.distributed.pcfg_shards import fit_on_pool
    from strgm.grammars.estimators import em

    g, sents = _corpus(max_words)
    t0, c0 = time.perf_counter(), time.process_time()
    ref = em(g, sents, iters=iters)
    t_serial, c_serial = time.perf_counter() - t0, time.process_time() - c0
    t0 = time.perf_counter()
    with open_pool(parse_scheduler(f"local:{workers}")) as pool:
        t_up = time.perf_counter() - t0
        t1, c1, w1 = time.perf_counter(), time.process_time(), _worker_cpu(pool)
        got = fit_on_pool(pool, "em", g, sents, iters=iters)
        t_fit = time.perf_counter() - t1
        c_fit = time.process_time() - c1 + _worker_cpu(pool) - w1
        overhead = _overhead(pool)
    t_dist = time.perf_counter() - t0
    costs = _shard_costs(g, sents, 4 * workers)
    return {"sentences": len(sents), "tokens": sum(map(len, sents)), "rules": len(g.rules),
            "em_iterations": iters, "e_steps": iters + 1, "serial_seconds": t_serial,
            "serial_cpu_seconds": c_serial, "distributed_fit_cpu_seconds": c_fit,
            "client_seconds_per_iteration": _client_part(g, sents, ref.theta),
            "distributed_seconds": t_dist, "cluster_startup_seconds": t_up,
            "distributed_fit_seconds": t_fit, "speedup": t_serial / t_dist,
            "speedup_without_startup": t_serial / t_fit, "task_overhead_seconds": overhead,
            "max_abs_theta_difference": float(np.max(np.abs(got.theta - ref.theta))),
            **costs}


def em_model(r: dict, workers: int, bandwidth: float) -> dict:
    """Predicted seconds of the E-steps (module docstring) on ``workers`` workers."""
    e = r["e_steps"]
    w = sum(r["shard_seconds"])
    client = r["client_seconds_per_iteration"]
    s = 4 * workers
    per_shard_in = sum(r["shard_in_bytes"]) / s
    out_b = sum(r["shard_out_bytes"]) / len(r["shard_out_bytes"])
    net = (workers * r["theta_bytes"] + s * (out_b + per_shard_in)) / bandwidth
    it = w / workers + s * r["task_overhead_seconds"] + net + client
    total = e * it + workers * r["grammar_bytes"] / bandwidth
    return {"workers": workers, "seconds": total, "speedup": e * (w + client) / total,
            "speedup_over_unsharded": r["serial_seconds"] / total}


def files_model(r: dict, workers: int, startup: float) -> dict:
    t = r["task_seconds"]
    span = lpt_makespan(t, workers)
    return {"workers": workers, "seconds": span + startup, "speedup": sum(t) / (span + startup),
            "cap": sum(t) / max(t)}


def markdown(res: dict) -> str:
    f, e, m = res["files"], res["em"], res["meta"]
    lines = [f"# `--scheduler local:{m['workers']}` against the serial run "
             f"(commit {m['commit']})", "",
             f"Machine: {m['cores']} cores, load average {m['load']} at the start, shared "
             "with other jobs: wall times are noisy.", "",
             f"## Many files: `strgm infer` over the {len(f['files'])} textbook problems "
             f"(--method {f['method']})", "",
             f"serial {f['serial_seconds']:.1f} s, local:{m['workers']} "
             f"{f['distributed_seconds']:.1f} s"
             + (f" (medians of {f['reps']} alternating runs: serial "
                + ", ".join(f"{t:.1f}" for t in f["serial_seconds_all"]) + f"; local:"
                f"{m['workers']} " + ", ".join(f"{t:.1f}" for t in f["distributed_seconds_all"])
                + ")" if f.get("reps", 1) > 1 else "")
             + f": speed-up **{f['speedup']:.2f}×**; same "
             f"beliefs: {f['same_beliefs']}. CPU seconds (with the workers'): serial "
             f"{f['serial_cpu_seconds']:.1f}, local:{m['workers']} "
             f"{f['distributed_cpu_seconds']:.1f}, i.e. "
             f"{f['distributed_cpu_seconds'] / f['distributed_seconds']:.2f} cores busy on "
             f"average; local:1 took {f['one_worker_seconds']:.1f} s (the overhead of one "
             f"worker process). Per-file task seconds: "
             + ", ".join(f"{t:.1f}" for t in f["task_seconds"]) + ".", "",
             "## PCFG EM, E-step over sentence shards", "",
             f"{e['sentences']} WSJ-sample sentences of ≤ {m['max_words']} words "
             f"({e['tokens']} tokens), {e['rules']} rules, {e['e_steps']} E-steps: serial "
             f"{e['serial_seconds']:.1f} s, local:{m['workers']} {e['distributed_seconds']:.1f}"
             f" s (cluster start {e['cluster_startup_seconds']:.1f} s): speed-up "
             f"**{e['speedup']:.2f}×** ({e['speedup_without_startup']:.2f}× without the "
             f"start-up); max |Δθ| = {e['max_abs_theta_difference']:.1e}. CPU seconds: "
             f"serial {e['serial_cpu_seconds']:.1f}, distributed fit "
             f"{e['distributed_fit_cpu_seconds']:.1f} (client and workers), i.e. "
             f"{e['distributed_fit_cpu_seconds'] / e['distributed_fit_seconds']:.2f} cores "
             f"busy on average. Serial shard compute W = {sum(e['shard_seconds']):.1f} s per "
             f"E-step in {len(e['shard_seconds'])} shards; client part "
             f"{1000 * e['client_seconds_per_iteration']:.0f} ms per iteration.", "",
             f"Transfer per E-step: θ {e['theta_bytes']} B per worker, shard inputs "
             f"{sum(e['shard_in_bytes'])} B in all, results {e['shard_out_bytes'][0]} B per "
             f"shard; grammar arrays {e['grammar_bytes']} B once per worker. Task overhead "
             f"{1000 * e['task_overhead_seconds']:.1f} ms.", "",
             "## Scaling model (predicted, from the measured task times and sizes)", "",
             "| workers | files: s | files: speed-up | E-steps: s | E-steps: speed-up | "
             "E-steps: over the unsharded serial run |", "|---|---|---|---|---|---|"]
    for fm, em_ in zip(res["model"]["files"], res["model"]["em"]):
        lines.append(f"| {fm['workers']} | {fm['seconds']:.1f} | {fm['speedup']:.2f} | "
                     f"{em_['seconds']:.1f} | {em_['speedup']:.2f} | "
                     f"{em_['speedup_over_unsharded']:.2f} |")
    cap = res["model"]["files"][0]["cap"]
    lines += ["", f"Files: one task per file, so the speed-up cannot pass Σt / max t = "
              f"{cap:.2f} with these {len(f['files'])} problems, however many workers. "
              f"E-steps: network at an assumed {m['bandwidth']:.0e} B/s.", "",
              f"Command: `{m['command']}` ({m['total_seconds']:.0f} s in all)."]
    return "\n".join(lines) + "\n"


def plot(res: dict) -> None:
    plt = harness.pyplot()
    if plt is None:
        return
    fig, ax = plt.subplots(figsize=(5.5, 3.8))
    for key, label in (("files", "strgm infer, one task per file"),
                       ("em", "PCFG EM, sharded E-step")):
        rows = res["model"][key]
        ax.plot([r["workers"] for r in rows], [r["speedup"] for r in rows], "o-",
                label=f"{label} (model)")
    w = res["meta"]["workers"]
    ax.plot([w], [res["files"]["speedup"]], "s", color="C0", label="measured (files)")
    ax.plot([w], [res["em"]["speedup"]], "s", color="C1", label="measured (EM)")
    ax.plot([1, 64], [1, 64], ":", color="grey", label="linear")
    ax.set(xscale="log", yscale="log", xlabel="workers", ylabel="speed-up over serial")
    ax.legend(fontsize=7)
    fig.tight_layout()
    harness.save_figure(fig, NAME, dpi=120)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--method", default="pruned")
    ap.add_argument("--max-words", type=int, default=15)
    ap.add_argument("--em-iters", type=int, default=2)
    ap.add_argument("--bandwidth", type=float, default=1e8)
    ap.add_argument("--data", type=Path, default=DATA, help="the textbook problems")
    ap.add_argument("--reps", type=int, default=3, help="alternating runs of the files "
                                                        "benchmark (medians)")
    a = ap.parse_args(argv)
    t_all = time.perf_counter()
    meta = {"commit": harness.git_revision(), "cores": os.cpu_count(),
            "load": os.getloadavg()[0], "workers": a.workers, "max_words": a.max_words,
            "bandwidth": a.bandwidth, "command": harness.command(__name__, argv)}
    files = bench_files(a.workers, a.method, a.data, a.reps)
    print(json.dumps(files), flush=True)
    em_r = bench_em(a.workers, a.max_words, a.em_iters)
    print(json.dumps({k: v for k, v in em_r.items() if not isinstance(v, list)}), flush=True)
    startup = em_r["cluster_startup_seconds"]
    ws = sorted({a.workers, 16, 64})
    res = {"meta": meta, "files": files, "em": em_r,
           "model": {"files": [files_model(files, w, startup) for w in ws],
                     "em": [em_model(em_r, w, a.bandwidth) for w in ws]}}
    meta["total_seconds"] = time.perf_counter() - t_all
    harness.write_json(NAME, res)
    harness.write_markdown(NAME, markdown(res))
    plot(res)
    print(markdown(res))
    return 0


if __name__ == "__main__":
    sys.exit(main())
