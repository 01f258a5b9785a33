"""What every phonology command shares: output checks before any work, the progress
display, argparse types, and re-labelling library keywords as command-line options."""

from __future__ import annotations

import argparse
import contextlib
import re
import sys
import time
import warnings

from strgm.cli.errors import announce_written
from strgm.errors import OptionError

#: Library keywords (as named in an OptionError) -> the command-line option that sets them.
CLI_NAMES = {"p_copy": "--p-copy", "mean_length": "--mean-length", "boundary": "--boundary",
             "fraction": "--holdout", "seed": "--seed", "n_roots": "--roots"}


#: The names of :data:`strgm.inference.METHODS`, spelled out so that building the parser
#: does not import the engine (half a second); a test checks that they agree.
INFERENCE_METHODS = ("bp", "pruned", "ep", "pep")


def progress(args):
    """The progress display on stderr unless ``--quiet``: bars with an ETA on a terminal,
    elsewhere (a log file, a pipe) a plain line at least every 8 s while work goes on."""
    from strgm.inference import Progress

    return Progress(not getattr(args, "quiet", False), heartbeat=True)


def check_chain_outputs(outputs, plot=None, inputs=(), replaces=()) -> None:
    """Before a sampler run: the ``(path, option)`` outputs and the ``--plot`` figure
    (with matplotlib installed) pass the output policy against ``inputs``
    (:func:`strgm.safe_io.check_outputs`)."""
    from strgm.safe_io import check_outputs as policy

    if plot:
        from strgm.plot import check_figure_path
        check_figure_path(plot)
    policy(list(outputs) + [(plot, "--plot")], inputs, replaces)


@contextlib.contextmanager
def warnings_as_lines(stream=None):
    """Show each kind of warning raised inside the block once, as one line
    ``strgm: warning: MESSAGE`` on stderr, instead of Python's two-line format with a
    source line (or not at all). Messages that differ only in their numbers (an E-step's
    "stopped after 3 iterations (last change 1.4e+00)") count as one kind."""
    seen = set()

    def show(message, category, filename, lineno, file=None, line=None):
        text = str(message).splitlines()[0] if str(message) else category.__name__
        kind = re.sub(r"\d[\d.e+-]*", "#", text)
        if kind not in seen:
            seen.add(kind)
            print(f"strgm: warning: {text}", file=stream or sys.stderr, flush=True)

    with warnings.catch_warnings():
        warnings.simplefilter("always")
        warnings.showwarning = show
        yield


def relabel(fn, *args, **kw):
    """``fn(*args, **kw)``; an OptionError naming a library keyword is re-labelled with
    the command-line option that set it (``p_copy`` -> ``--p-copy``)."""
    try:
        return fn(*args, **kw)
    except OptionError as e:
        name = CLI_NAMES.get(e.option)
        raise (OptionError(name, e.value, e.reason) if name else e) from None


def symbol(text: str) -> str:
    """argparse type of ``--boundary``: one non-empty symbol without spaces."""
    if not text or any(c.isspace() for c in text):
        raise argparse.ArgumentTypeError(f"must be one symbol without spaces, got {text!r}")
    return text


def check_outputs(outputs, inputs=(), replaces=()) -> None:
    """The output policy (:func:`strgm.safe_io.check_outputs`) for the ``(path, option,
    directory)`` outputs of a phonology command against its ``inputs``."""
    from strgm.safe_io import check_outputs as policy

    policy(outputs, inputs, replaces)


def add_limit_options(group, what: str) -> None:
    """``--max-states`` and ``--max-memory`` (the size guard of docs/reliability.md),
    described for ``what`` (e.g. "inference", "each E-step")."""
    from strgm.validate import int_arg, size_arg

    group.add_argument("--max-states", type=int_arg(1), default=200_000,
                       help=f"size guard for the messages of {what} (default: %(default)s)")
    group.add_argument("--max-memory", type=size_arg(), default=None, metavar="SIZE",
                       help=f"memory budget of {what}, e.g. 2G (default: a safe fraction "
                            "of the machine's RAM)")


def add_scheduler_option(p) -> None:
    """``--scheduler`` and its ``--tls-*`` certificates
    (:mod:`strgm.distributed.cluster`), shared by the long commands."""
    p.add_argument("--scheduler", default=None, metavar="local[:N]|ADDRESS",
                   help="run on Dask (pip install 'strgm[distributed]'): local:N starts N "
                        "worker processes here, ADDRESS joins a running scheduler (e.g. "
                        "tcp://host:8786, tls://host:8786 with --tls-*, or a dask-jobqueue "
                        "cluster); same results as without it. The scheduler and its "
                        "workers are trusted: Dask returns results pickled, so they can "
                        "run code in this process; join only a cluster you control")
    for opt, what in (("--tls-ca-file", "the CA certificate that signed the cluster's"),
                      ("--tls-cert", "this client's certificate (PEM) for"),
                      ("--tls-key", "the key of --tls-cert (if not in its file) for")):
        p.add_argument(opt, default=None, metavar="FILE",
                       help=f"{what} --scheduler tls://... (as in dask-scheduler; default: "
                            "Dask's distributed.comm.tls config)")


def scheduler_spec(args):
    """``--scheduler`` (with its ``--tls-*`` files) parsed and checked (syntax; Dask
    installed; certificates readable) before any work, or None without it; connecting
    is :func:`strgm.distributed.cluster.open_pool`'s."""
    from strgm.distributed.cluster import parse_scheduler

    return parse_scheduler(getattr(args, "scheduler", None), tls=[
        getattr(args, a, None) for a in ("tls_ca_file", "tls_cert", "tls_key")])


def _batch_where(spec, pool) -> dict:
    if spec is None:
        return {"kind": "serial", "workers": 1}
    out = {"kind": spec.kind, "workers": pool.n_workers}
    return {**out, "address": spec.address} if spec.kind == "address" else out


def run_batch(args, files: list, command: str, task, summary, single_only=()) -> int:
    """``strgm infer|train FILE...``: one task per file (``task(path, options)`` returns
    the file's JSON record, :func:`strgm.distributed.files.run_files`), serially or on
    ``--scheduler``; each file's report under its name, a table (``summary(record)`` →
    columns), and ``--json`` as one ``strgm-batch`` document. Options that hold one run
    (``single_only``: (option, value) pairs) are refused. Exit 2 if a file failed."""
    from strgm.cli.json_output import write_document
    from strgm.cli.report import _table
    from strgm.distributed.cluster import open_pool
    from strgm.distributed.files import run_files
    from strgm.safe_io import check_input

    for opt, value in single_only:
        if value:
            raise OptionError(opt, value, f"holds one run; use it with one FILE, not "
                                          f"{len(files)}")
    spec = scheduler_spec(args)
    check_outputs([(args.json, "--json", False)], files)
    for f in files:
        check_input(f, "problem file")
    options = {k: v for k, v in vars(args).items() if k not in ("func", "ur_prior")}
    t0 = time.perf_counter()
    with open_pool(spec) as pool:
        where = _batch_where(spec, pool)
        outcomes = run_files(pool, task, files, options)
    seconds = time.perf_counter() - t0
    rows = []
    for o in outcomes:
        print(f"== {o['file']} ==\n{o['text'].rstrip()}\n" if o["text"].strip() else "",
              end="")
        for w in o["warnings"]:
            print(f"strgm: warning: {o['file']}: {w}", file=sys.stderr)
        if o["error"]:
            print(f"strgm: error: {o['error']}", file=sys.stderr)
        rows.append([o["file"], "ok" if o["record"] is not None else "error",
                     f"{o['seconds']:.1f}"] + (summary(o["record"]) if o["record"] else []))
    failed = sum(o["record"] is None for o in outcomes)
    print(f"{len(files)} files, {failed} failed, {seconds:.1f}s "
          f"({where['kind']}, {where['workers']} worker(s))")
    print(_table(["file", "status", "seconds"] + summary(None), rows))
    if args.json:
        write_document(args.json, "strgm-batch", {
            "command": command, "scheduler": where,
            "files": [{"file": o["file"], "ok": o["record"] is not None,
                       "seconds": o["seconds"], "warnings": o["warnings"],
                       "error": o["error"], "result": o["record"]} for o in outcomes],
            "summary": {"files": len(files), "failed": failed, "seconds": seconds}})
        announce_written(args.json)
    return 2 if failed else 0


def pcfg_chains(args, pool, grammar, corpus, heldout, log) -> tuple:
    """``strgm pcfg train --chains K`` (or a sampler on ``--scheduler``): K independent
    chains on ``pool`` (:func:`strgm.distributed.chains.sample_chains`): (θ, trace rows,
    extra trace-JSON fields)."""
    from strgm.distributed.chains import sample_chains

    return sample_chains(pool, args.method, grammar, corpus, log, chains=args.chains,
                         seed=args.seed, iters=args.iters, burn_in=args.burn_in,
                         alpha=args.alpha, resample_alpha=args.resample_alpha,
                         heldout=heldout, max_memory=args.max_memory)


def sharded_tree_draws(pool, kernel):
    """The tree sampler of one Gibbs chain on ``pool``: each sweep's trees drawn on
    sentence shards (:class:`strgm.distributed.pcfg_trees.ShardedTrees`)."""
    from strgm.distributed.pcfg_trees import ShardedTrees

    return ShardedTrees(pool, kernel)


def check_chains_options(args):
    """``--chains``/``--scheduler`` of a sampler command (``hmm train``, ``tsg train``)
    against its checkpoint options, before any work: the parsed scheduler or None."""
    spec = scheduler_spec(args)
    if (args.chains > 1 or spec is not None) and (args.checkpoint or args.resume):
        opt, v = ("--chains", args.chains) if args.chains > 1 else ("--scheduler",
                                                                     spec.value)
        raise OptionError(opt, v, "a checkpoint holds one chain run here; drop "
                                  "--checkpoint and --resume")
    return spec


def plot_trace(path, rows, key: str, burn_in=None, summary=False) -> None:
    """Write a sampler's ``--plot`` figure: one line per chain of ``key`` in the trace
    ``rows`` (a ``chain`` number in each row, or one chain), ``burn_in`` shaded, and the
    chains' R̂ ``summary`` in the legend (False for one chain: no R̂ across chains)."""
    from strgm.plot import plot_chains, save_figure

    save_figure(plot_chains(rows, key=key, burn_in=burn_in, rhat=summary), path)
