"""The process entry: the console script (pyproject.toml: fp8check.cli.entry:run) and `python -m fp8check`.

`run` pauses Python's cycle collector before anything of the command line is imported: startup (typer, pydantic,
fp8check's modules, the options of the command) builds ~50k objects the collector tracks, nearly all of them
alive until the process ends, yet a plain start collects ~70 times over them (15-20 ms of a giant checkpoint's
0.5 s inspect). The collector resumes as the command starts its work (fp8check.cli.app.Command.invoke), with
everything startup built frozen out of every later collection: the few hundred objects startup leaves in garbage
cycles (~300 for inspect) stay frozen too, tens of KB, where freeing them would walk all 50k. Importing this
module does nothing, so a process that imports it without running a command keeps its collector (`load --tp`'s
ranks are fresh interpreters of fp8check.core.load.ranks and never import it).
"""

import gc


def run():
    """fp8check.cli.app.run_process, with the collector paused until the command starts."""
    gc.disable()
    from fp8check.cli.app import run_process

    run_process(collector_paused=True)
