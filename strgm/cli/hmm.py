"""``strgm hmm train|score|decode``: infinite HMMs over symbol or vector sequences.

    strgm hmm train SEQS --save MODEL [--model auto|lt|hdp|sticky] [--split-merge N]
                    [--iters N] [--seed S]
                    [--states L] [--burn-in B] [--thin K] [--alpha A] [--gamma G]
                    [--kappa K] [--eta E] [--fixed-hyper] [--vectors] [--no-length]
                    [--restarts R] [--chains K] [--scheduler local[:N]|ADDRESS]
                    [--checkpoint PATH] [--checkpoint-every K] [--resume PATH]
                    [--json PATH] [--quiet]
    strgm hmm score MODEL SEQS [--posterior-mean] [--json PATH]
    strgm hmm decode MODEL SEQS

SEQS holds one sequence per line: tokens separated by spaces, or one word of segmented
IPA (tie bars and diacritics stay with their segment). With ``--vectors``, one vector per
line (numbers separated by spaces) and a blank line between sequences; the emissions
are then Gaussian with a Normal–inverse-Wishart prior centred on the data.

``train`` runs the Gibbs sampler of docs/hmm.md for ``--iters`` sweeps in
all (resumed or not; ``--model auto``, the default, first runs a chain of each model
from each start on 90% of the sequences and continues the one with the fewest states
among those scoring within one standard error of the best on the other 10%; ``--restarts
R``: R chains of each, :mod:`strgm.hmm.selection`) and writes the
thinned posterior samples after ``--burn-in`` (default half the sweeps; at most 20
samples). One progress line every few sweeps goes to stderr
(log-likelihood of the data, states in use, α, γ, κ, λ). ``--chains K`` runs K
independent chains (seeds S .. S+K−1; with ``--scheduler`` on Dask workers), prints the
split R-hat and effective sample size of the log-likelihood after burn-in, writes every
chain's trace to ``--json`` (rows carry ``chain`` and ``seed``) and saves chain 0's
samples, which are those of the single-chain run of a named model
(:mod:`strgm.distributed.hmm_chains`; with ``--model auto`` the chains are fresh chains
of the chosen model, while a single-chain run continues the chosen chain).
A checkpoint records ``--seed`` beside the data and settings; ``--resume`` refuses one
made with another seed (or with other data or settings).

``score`` prints a header line (``log p (nats)``, ``length``, ``sequence``, separated by
tabs), one line per sequence, then a summary; its last line is ``mean log-likelihood per symbol: X nats`` (Σ log p / Σ length;
each log p includes the sequence's end), the line before it the same given each
sequence's length (log p(x | |x|), the score to compare with a model that does not
predict lengths: a unigram, or an HMM trained with ``--no-length``). By default p is the posterior predictive, the
average over the saved samples; ``--posterior-mean`` uses the single posterior-mean model.
A token never seen in training is scored with the model's unknown-symbol mass (the
Dirichlet pseudo-count η of ``<unk>``) and counted in the summary. ``decode`` prints the
Viterbi state sequence of each line under the posterior-mean model, each state beside
the symbol it emits (``k/3 a/1 t/2``; vector sequences: the states alone).
"""

from __future__ import annotations

import os
import sys
import time
import warnings

from strgm.cli.common import add_scheduler_option, check_chains_options
from strgm.errors import InputError, OptionError, TruncationWarning
from strgm.progress import StepProgress
from strgm.validate import float_arg, int_arg

__all__ = ["add_subparser"]

#: How the ``--resume`` checkpoint is named to the output policy; ``--checkpoint`` may
#: rewrite it.
RESUMED = "the --resume checkpoint"
#: The column header of ``hmm score``'s per-sequence lines.
SCORE_HEADER = "log p (nats)\tlength\tsequence"
#: Split–merge proposals per sweep of the hdp and sticky models (``--split-merge``).
SPLIT_MERGE = 0


def add_subparser(subparsers) -> None:
    p = subparsers.add_parser("hmm", help="infinite HMMs: HDP-HMM with local transitions, "
                                          "HDP-HMM, sticky HDP-HMM (Dawson 2015)")
    sub = p.add_subparsers(dest="hmm_command", required=True)
    t = sub.add_parser("train", help="sample an infinite HMM's posterior")
    t.add_argument("seqs", help="one sequence per line")
    t.add_argument("--save", required=True, metavar="MODEL", help="write the model here")
    t.add_argument("--model", choices=("auto", "lt", "hdp", "sticky"), default="auto",
                   help="lt: HDP-HMM with local transitions; hdp: HDP-HMM; sticky: sticky "
                        "HDP-HMM; auto: a chain of each of the three from two starts on "
                        "90%% of the sequences; of those predicting the other 10%% within "
                        "one standard error of the best, the one with the fewest states, "
                        "continued on all (default: %(default)s)")
    t.add_argument("--split-merge", type=int_arg(min=0), default=SPLIT_MERGE, metavar="N",
                   help="split-merge proposals per sweep for the hdp and sticky models "
                        "(0: none; default %(default)s)")
    t.add_argument("--iters", type=int_arg(min=1), default=200,
                   help="sweeps in all, resumed or not (default %(default)s)")
    t.add_argument("--seed", type=int_arg(min=0), default=0,
                   help="random seed (default: %(default)s)")
    t.add_argument("--states", "-L", type=int_arg(min=2), default=50, metavar="L",
                   help="weak-limit truncation L (default %(default)s)")
    t.add_argument("--burn-in", type=int_arg(min=0), default=None,
                   help="sweeps before samples are kept (default: half of --iters)")
    t.add_argument("--thin", type=int_arg(min=1), default=None,
                   help="keep every K-th sweep after the burn-in (default: at most 20 "
                        "samples). Both defaults depend on --iters: give them explicitly "
                        "when a run will be extended with --resume and a larger --iters")
    for name, default, what in (("alpha", 1.0, "initial α"), ("gamma", 1.0, "initial γ"),
                                ("eta", 0.1, "Dirichlet parameter of the emissions")):
        t.add_argument(f"--{name}", type=float_arg(min=0, min_open=True), default=default,
                       help=f"{what} (default {default})")
    t.add_argument("--kappa", type=float_arg(min=0), default=1.0,
                   help="initial sticky mass κ (sticky model only; default 1)")
    t.add_argument("--fixed-hyper", action="store_true", help="keep α, γ, κ, λ fixed")
    t.add_argument("--vectors", action="store_true", help="real vectors, Gaussian emissions")
    t.add_argument("--no-length", action="store_true",
                   help="do not model sequence lengths (the model is then no string prior)")
    t.add_argument("--restarts", type=int_arg(min=1), default=1, metavar="R",
                   help="chains per model and start tried on 90%% of the sequences (seeds "
                        "--seed .. --seed+R-1); the one chosen as for --model auto is "
                        "continued on all of them (default: %(default)s)")
    t.add_argument("--chains", type=int_arg(min=1), default=1, metavar="K",
                   help="run K independent chains (seeds --seed .. --seed+K-1) and report "
                        "split R-hat and the effective sample size of the log-likelihood; "
                        "the model is chain 0's (default: 1)")
    add_scheduler_option(t)
    t.add_argument("--checkpoint", default=None, help="checkpoint file, replaced atomically")
    t.add_argument("--checkpoint-every", type=int_arg(min=1), default=10,
                   help="sweeps between checkpoints (default: %(default)s)")
    t.add_argument("--resume", default=None,
                   help="continue the run in this checkpoint (repeat the interrupted "
                        "command's options; a checkpoint of another --seed is refused)")
    t.add_argument("--json", default=None, metavar="PATH", help="write the trace here")
    t.add_argument("--plot", default=None, metavar="FILE.png",
                   help="draw the data log-likelihood per sweep (needs strgm[plot])")
    t.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    t.set_defaults(func=_train)
    _add_model_readers(sub)


def _add_model_readers(sub) -> None:
    """The commands that read a trained model: score and decode."""
    s = sub.add_parser("score", help="log-likelihood of sequences under a trained model")
    s.add_argument("model", help="a model written by `strgm hmm train --save`")
    s.add_argument("seqs", help="one sequence per line")
    s.add_argument("--posterior-mean", action="store_true",
                   help="score with the posterior-mean model, not the sample average")
    s.add_argument("--json", default=None, metavar="PATH", help="write the scores here")
    s.set_defaults(func=_score)

    d = sub.add_parser("decode", help="Viterbi states of sequences under a trained model, "
                       "each beside its symbol (symbol/state)")
    d.add_argument("model", help="a model written by `strgm hmm train --save`")
    d.add_argument("seqs", help="one sequence per line")
    d.set_defaults(func=_decode)


def _read(path, vectors: bool, vocab=None):
    """(Sequences, vocabulary, number of unseen tokens, the token tuples)."""
    from strgm.hmm.data import Sequences, build_vocab, encode, read_symbol_file, \
        read_vector_file

    if vectors:
        seqs = read_vector_file(path)
        return Sequences.from_list(seqs), (), 0, None
    toks = read_symbol_file(path)
    vocab = build_vocab(toks) if vocab is None else vocab
    seqs, unseen = encode(toks, vocab)
    return seqs, vocab, unseen, toks


def _kernel(args, seqs, vocab, model=None):
    from strgm.hmm import Categorical, Gaussian, HMMSampler, HMMSettings

    model = model or args.model
    settings = HMMSettings(model=model, L=args.states, alpha=args.alpha,
                           gamma=args.gamma, kappa=args.kappa if model == "sticky"
                           else 0.0, eta=args.eta, sample_hypers=not args.fixed_hyper,
                           model_length=not args.no_length,
                           split_merge=0 if model == "lt" or args.vectors
                           else args.split_merge)
    em = Gaussian.from_data(seqs.x) if args.vectors else Categorical(len(vocab), args.eta)
    return HMMSampler(seqs, settings, em)


def _auto(args, seqs, vocab, burn: int, thin: int):
    """``--model auto`` or ``--restarts R`` (:mod:`strgm.cli.hmm_auto`): (the choice, the
    first state), each None for a named model without restarts."""
    from strgm.cli.hmm_auto import choose

    return choose(args, lambda m: _kernel(args, seqs, vocab, model=m), burn, thin)


def _describe(state, t0: float, iters: int, local: bool) -> str:
    r = state.trace[-1]
    done = r["iteration"]
    el = time.perf_counter() - t0
    return (f"sweep {done}/{iters}: log-likelihood {r['loglik']:.1f}, {r['states']} states, "
            f"α {r['alpha']:.3g}, γ {r['gamma']:.3g}"
            + (f", κ {r['kappa']:.3g}" if r["kappa"] else "")
            + (f", λ {r['lam']:.3g}, location moves accepted {r['loc_accept']:.2f}"
               if local else "") + f"  {el:.1f}s")


def _train(args) -> int:
    """``hmm train`` (module docstring)."""
    from strgm.hmm.model_file import save_model
    from strgm.hmm.training import default_schedule, posterior_of, run_chain
    from strgm.cli.common import check_chain_outputs
    from strgm.cli.json_output import write_document

    check_chain_outputs([(args.save, "--save"), (args.checkpoint, "--checkpoint"),
                         (args.json, "--json")], args.plot,
                        [(args.seqs, "the sequences"), (args.resume, RESUMED)],
                        [("--checkpoint", RESUMED)])
    if args.burn_in is not None and args.burn_in >= args.iters:
        raise OptionError("--burn-in", args.burn_in, f"must be < --iters {args.iters}")
    spec = check_chains_options(args)
    if args.restarts > 1 and (args.chains > 1 or spec is not None):
        raise OptionError("--restarts", args.restarts, "cannot be combined with --chains "
                          "or --scheduler: the chains would not start from the chosen one")
    burn, thin = default_schedule(args.iters, args.burn_in, args.thin)
    seqs, vocab, _, _ = _read(args.seqs, args.vectors)
    chosen, first = _auto(args, seqs, vocab, burn, thin)
    kernel = _kernel(args, seqs, vocab)
    chains = args.chains > 1 or spec is not None
    state = None if chains else _start(args, kernel, first)  # a checkpoint checked first
    if not args.quiet:
        print(plan_text(args, seqs, burn, thin, spec), file=sys.stderr, flush=True)
    if chains:
        return _train_chains(args, spec, kernel, vocab, burn, thin)
    t0, every = time.perf_counter(), max(1, args.iters // 50)
    bar = StepProgress(args.iters, "sweeps", enabled=not args.quiet,
                       initial=state.iteration)

    def show(st):
        bar.step(_describe(st, t0, args.iters, kernel.settings.local),
                 show=st.iteration % every == 0 or st.iteration == args.iters)

    with bar, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", TruncationWarning)
        state = run_chain(kernel, state, args.iters, burn, thin, on_sweep=show,
                          checkpoint=args.checkpoint, checkpoint_every=args.checkpoint_every)
    for w in caught:
        print(f"strgm: warning: {w.message}", file=sys.stderr)
    post = posterior_of(state, kernel, vocab)
    training = {"iterations": state.iteration, "burn_in": burn, "thin": thin,
                "seed": args.seed, "sequences": seqs.num_sequences,
                "symbols": seqs.num_tokens, "data": str(args.seqs),
                "last": state.trace[-1] if state.trace else {}}
    training.update({"auto": chosen} if chosen else {})
    save_model(args.save, post, training)
    if args.json:
        write_document(args.json, "strgm-hmm-trace", {
            "settings": kernel.settings.to_dict(), "training": training,
            "trace": state.trace})
    if args.plot:
        from strgm.cli.common import plot_trace
        plot_trace(args.plot, state.trace, "loglik", burn_in=burn)
    _announce(args)
    print(f"{seqs.num_sequences} sequences, {seqs.num_tokens} symbols, {state.iteration} "
          f"sweeps ({time.perf_counter() - t0:.1f} s this run), {len(post.samples)} samples; "
          f"model written to {args.save}", file=sys.stderr)
    return 0


MODELS = {"lt": "HDP-HMM with local transitions", "hdp": "HDP-HMM",
          "sticky": "sticky HDP-HMM"}


def plan_text(args, seqs, burn: int, thin: int, spec) -> str:
    """One line announcing the work of ``strgm hmm train``: the model, the data, the
    sweeps (burn-in, thinning, a resumed run's start) and the chains (and where)."""
    chains = "1 chain" if args.chains == 1 else f"{args.chains} chains one after another"
    if spec is not None:
        chains = f"{args.chains} chain(s) on {spec.describe()}"
    resumed = f", resuming {args.resume}" if args.resume else ""
    return (f"strgm hmm train: {MODELS[args.model]} (at most {args.states} states) on "
            f"{seqs.num_sequences} sequences ({seqs.num_tokens} symbols), {args.iters} "
            f"sweeps in all{resumed} (burn-in {burn}, then 1 sweep in {thin} kept), "
            f"{chains}")


def _start(args, kernel, first=None):
    """The chain's first state: ``first`` (the chosen chain's parameters) or a fresh one,
    recording ``--seed``; or ``--resume``d from a checkpoint made with the same seed and
    not past ``--iters``."""
    from strgm.hmm import HMMState

    if not args.resume:
        state = kernel.init(args.seed) if first is None else first
        state.settings = {"--seed": args.seed, "--model": args.model}
        return state
    state = HMMState.load(args.resume, kernel)
    was = state.settings.get("--seed", "unrecorded")
    if was != args.seed:
        raise InputError(f"checkpoint was made with --seed {was}, not {args.seed}; resume "
                         "with the options of the interrupted run", args.resume)
    if state.iteration > args.iters:
        raise OptionError("--iters", args.iters, f"must be ≥ the {state.iteration} "
                          f"sweeps already in checkpoint {args.resume}")
    return state


def _train_chains(args, spec, kernel, vocab, burn: int, thin: int) -> int:
    """``hmm train --chains K [--scheduler ...]``: the chains as tasks
    (:mod:`strgm.distributed.hmm_chains`), chain 0's model saved."""
    from strgm.cli.json_output import write_document
    from strgm.distributed.cluster import open_pool
    from strgm.distributed.hmm_chains import chain_posterior, run_hmm_chains, summary_line
    from strgm.hmm.model_file import save_model

    t0 = time.perf_counter()
    with open_pool(spec) as pool:
        res = run_hmm_chains(pool, kernel, chains=args.chains, seed=args.seed,
                             iters=args.iters, burn_in=burn, thin=thin)
    for c, message in res.warnings:
        print(f"strgm: warning: chain {c}: {message}", file=sys.stderr)
    post = chain_posterior(res, kernel, vocab)
    seqs = kernel.data
    training = {"iterations": args.iters, "burn_in": burn, "thin": thin, "seed": args.seed,
                "sequences": seqs.num_sequences, "symbols": seqs.num_tokens,
                "data": str(args.seqs), "last": res.traces[0][-1] if res.traces[0] else {},
                "chains": args.chains, "seeds": res.seeds, "diagnostics": res.summary}
    save_model(args.save, post, training)
    rows = [{"chain": c, "seed": res.seeds[c], **r}
            for c, t in enumerate(res.traces) for r in t]
    if args.json:
        write_document(args.json, "strgm-hmm-trace", {
            "settings": kernel.settings.to_dict(), "training": training, "trace": rows})
    if args.plot:
        from strgm.cli.common import plot_trace
        plot_trace(args.plot, rows, "loglik", burn_in=burn, summary=res.summary)
    _announce(args)
    print(summary_line(res), file=sys.stderr)
    print(f"{seqs.num_sequences} sequences, {seqs.num_tokens} symbols, {args.chains} "
          f"chains of {args.iters} sweeps ({time.perf_counter() - t0:.1f} s), "
          f"{len(post.samples)} samples of chain 0; model written to {args.save}",
          file=sys.stderr)
    return 0


def _announce(args) -> None:
    """``wrote FILE`` for the trace, the picture and the checkpoint ``hmm train`` wrote
    (the model is named in the summary line)."""
    from strgm.cli.errors import announce_written

    ck = args.checkpoint if args.checkpoint and os.path.exists(args.checkpoint) else None
    announce_written(args.json, args.plot, ck)


def _load(args):
    from strgm.hmm.model_file import load_model

    post = load_model(args.model).posterior
    vectors = post.samples[0].emissions.kind == "gaussian"
    seqs, _, unseen, toks = _read(args.seqs, vectors, None if vectors else post.vocab)
    if vectors and seqs.x.shape[1] != post.samples[0].emissions.D:
        raise InputError(f"vectors of dimension {seqs.x.shape[1]}, the model's is "
                         f"{post.samples[0].emissions.D}", str(args.seqs))
    return post, seqs, unseen, toks


def _score(args) -> int:
    """``hmm score`` (module docstring)."""
    from strgm.cli.errors import announce_written
    from strgm.cli.json_output import write_document
    from strgm.hmm.model import HMMPosterior
    from strgm.safe_io import check_outputs

    check_outputs([(args.json, "--json")], [(args.model, "the model"),
                                             (args.seqs, "the sequences")])
    post, seqs, unseen, toks = _load(args)
    ll = (post.mean().log_likelihoods(seqs) if args.posterior_mean
          else post.log_likelihoods(seqs))
    print(SCORE_HEADER)
    for i, v in enumerate(ll):
        text = " ".join(toks[i]) if toks is not None else f"sequence {i + 1}"
        print(f"{v:.4f}\t{seqs.lengths[i]}\t{text}")
    per = float(ll.sum() / seqs.num_tokens)
    given = post.mean() if args.posterior_mean else post
    given = HMMPosterior((given,), post.vocab, post.settings) if args.posterior_mean else given
    per_given = float(given.log_likelihoods_given_lengths(seqs).sum() / seqs.num_tokens)
    print(f"sequences: {seqs.num_sequences}, symbols: {seqs.num_tokens}, tokens unseen in "
          f"training: {unseen} (scored as <unk>)")
    print(f"mean log-likelihood per symbol given the lengths: {per_given:.4f} nats")
    print(f"mean log-likelihood per symbol: {per:.4f} nats")
    if args.json:
        write_document(args.json, "strgm-hmm-scores", {
            "per_symbol": per, "per_symbol_given_lengths": per_given,
            "unseen_tokens": unseen,
            "posterior_mean": bool(args.posterior_mean), "log_likelihoods": ll.tolist()})
        announce_written(args.json)
    return 0


def _decode(args) -> int:
    """``hmm decode``: Viterbi states beside their symbols, one line per sequence."""
    post, seqs, _, toks = _load(args)
    z, _ = post.mean().viterbi(seqs)
    for s in range(seqs.num_sequences):
        states = [str(int(k)) for k in z[seqs.offsets[s]:seqs.offsets[s + 1]]]
        if toks is not None:
            states = [f"{sym}/{k}" for sym, k in zip(toks[s], states)]
        print(" ".join(states))
    return 0
