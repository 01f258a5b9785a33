"""Grammars: PCFG estimators and inside-outside, the treebank PCFG, TSGs (DP and
Pitman-Yor) on the WSJ sample, backoff smoothing and the lexicalised grammar."""
