"""Print the N-th command (1-based) of the README's Quickstart code block.

Used by .ci/run so that CI runs the README's test command verbatim, and by
tests/test_quickstart.py, which checks that the block holds exactly two commands."""

import re
import sys
from pathlib import Path


def quickstart_commands(readme: Path) -> list:
    text = readme.read_text(encoding="utf-8")
    section = text.split("## Quickstart", 1)[1]
    block = re.search(r"```bash\n(.*?)```", section, re.S).group(1)
    return [ln.strip() for ln in block.splitlines() if ln.strip()]


if __name__ == "__main__":
    cmds = quickstart_commands(Path(__file__).resolve().parent.parent / "README.md")
    print(cmds[int(sys.argv[1]) - 1])
