"""The user-facing text of ``strgm --help``: the overview, and one example per command.

:func:`finish` ends every command's help (``strgm CMD [SUB] --help``) with its example
from :data:`EXAMPLES`, the commands of the README's tour; a test parses every example
with the real parser, so none can name an option that does not exist.
"""

from __future__ import annotations

import argparse

__all__ = ["OVERVIEW", "EXAMPLES", "finish"]

OVERVIEW = """\
Inference in graphical models over strings, and the models built on it.

  strgm demo                      English verbs from CMUdict: URs and predictions
  strgm infer FILE... [options]   underlying forms for paradigms (TSV or wide CSV)
  strgm graph FILE --dot OUT      the paradigm's factor graph in Graphviz dot
  strgm beliefs DIR [options]     query beliefs saved by `infer --save-beliefs DIR`
  strgm train FILE... [options]   learn the phonology (EM and rewrite rules)
  strgm rules FILE [options]      learn ordered rewrite rules and URs
  strgm pcfg train|parse ...      Bayesian PCFGs
  strgm treebank grammar|yield|score ...  treebank PCFGs and bracket scores
  strgm lexparse GRAMMAR CORPUS           parse with a head-driven lexicalised grammar
  strgm tsg train|parse|show ...          Bayesian tree substitution grammars
  strgm hmm train|score|decode ...        infinite HMMs (HDP-HMM-LT, HDP-HMM, sticky)
  strgm plot KIND INPUT... --out FILE     pictures from the files commands write
  strgm validate FILE...                  check JSON outputs and model files

`strgm COMMAND --help` describes a command; `example:NAME` reads a shipped file
(english-verbs, synthetic, toy-grammar, toy-corpus, trees, phonemes)."""

#: command path -> one example command line (shell syntax, without redirections)
EXAMPLES = {
    (): "strgm demo",
    ("demo",): "strgm demo",
    ("infer",): "strgm infer example:english-verbs --holdout 0.1 --seed 0 --json run.json",
    ("graph",): "strgm graph example:english-verbs --dot graph.dot",
    ("beliefs",): "strgm beliefs saved/ --var M:PAST --top 3",
    ("train",): "strgm train example:english-verbs --holdout 0.1 --seed 0",
    ("rules",): "strgm rules example:english-verbs --holdout 0.1 --save g.json",
    ("pcfg",): "strgm pcfg train example:toy-grammar example:toy-corpus --method vb",
    ("pcfg", "train"): "strgm pcfg train example:toy-grammar example:toy-corpus "
                       "--method cvb --out toy.lt",
    ("pcfg", "parse"): "strgm pcfg parse example:toy-grammar example:toy-corpus "
                       "--decode maxrule",
    ("treebank",): "strgm treebank grammar example:trees --out g.lt",
    ("treebank", "grammar"): "strgm treebank grammar example:trees --out g.lt --parent",
    ("treebank", "yield"): "strgm treebank yield example:trees --max-length 40",
    ("treebank", "score"): "strgm treebank score example:trees parsed.txt --max-length 40",
    ("lexparse",): "strgm lexparse lex.npz sentences.txt --thresholds 1e-3 0",
    ("tsg",): "strgm tsg train example:trees --iters 20 --save tsg.json",
    ("tsg", "train"): "strgm tsg train example:trees --iters 20 --save tsg.json",
    ("tsg", "parse"): "strgm tsg parse tsg.json sentences.txt --decode mer",
    ("tsg", "show"): "strgm tsg show tsg.json --top 30",
    ("hmm",): "strgm hmm train example:phonemes --iters 50 --save hmm.json",
    ("hmm", "train"): "strgm hmm train example:phonemes --model lt --iters 50 "
                      "--save hmm.json",
    ("hmm", "score"): "strgm hmm score hmm.json example:phonemes",
    ("hmm", "decode"): "strgm hmm decode hmm.json example:phonemes",
    ("plot",): "strgm plot convergence run.json --out convergence.png",
    ("validate",): "strgm validate run.json hmm.json",
}


def commands(parser: argparse.ArgumentParser, path: tuple = ()):
    """(command path, parser) of ``parser`` and of every subcommand under it."""
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from commands(sub, path + (name,))


def finish(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Append each command's example to its help epilog, unwrapped so that it can be
    copied (a command without one is a KeyError: every command has an example)."""
    for path, sub in commands(parser):
        sub.formatter_class = argparse.RawDescriptionHelpFormatter
        example = f"example:\n  {EXAMPLES[path]}"
        sub.epilog = f"{sub.epilog}\n\n{example}" if sub.epilog else example
    return parser
