"""A one-line argparse parser that names the closest command to a misspelt one.

``strgm trian`` → ``invalid choice: 'trian' (did you mean 'train'?) (choose from …)``
(Python 3.14's ``suggest_on_error`` does the same; strgm supports older Pythons).
"""

from __future__ import annotations

import argparse

from strgm.cli.errors import OneLineParser
from strgm.errors import did_you_mean


class SuggestingParser(OneLineParser):
    """:class:`OneLineParser` whose invalid-choice errors add "did you mean"; nested
    subcommand parsers made from it are of the same class."""

    def _check_value(self, action, value):
        if action.choices is None or value in action.choices:
            return
        hint = did_you_mean(value, action.choices) if isinstance(value, str) else ""
        shown = ", ".join(map(repr, action.choices))
        raise argparse.ArgumentError(
            action, f"invalid choice: {value!r}{hint} (choose from {shown})")
