"""`python -m fp8check`: the console script's entry point (fp8check.cli.entry.run), run safely from any folder."""

import os
import sys

# `python -m fp8check` puts the current folder first on sys.path; run inside a downloaded model folder, a
# planted typer.py or rich.py there would be imported. fp8check itself is already imported at this point.
if sys.path and sys.path[0] in ("", os.getcwd()):
    sys.path.pop(0)

from fp8check.cli.entry import run  # noqa: E402

run()
