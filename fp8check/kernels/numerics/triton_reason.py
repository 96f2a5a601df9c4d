"""Why fp8check's Triton block GEMM cannot run on a device, where that is known without importing triton.

Importing triton costs ~0.1 s, and on the CPU the answer rarely needs it: Triton runs there only under its
interpreter, which is chosen when triton is imported (TRITON_INTERPRET=1 before that). triton_fp8 gives the full
answer; this module holds the two reasons both share and the quick one.
"""

from __future__ import annotations

import importlib.util
import os
import sys

INSTALL_HINT = "triton is not installed (pip install 'fp8check[triton]')"
# On the CPU installing triton is not enough, and the interpreter is far slower than the fp32 emulation it replaces
# (8x to 30x per layer in fp8check's own runs): say so where the install is offered.
CPU_INSTALL_HINT = ("triton is not installed; on the CPU it would run only under its interpreter, 8-30x slower than "
                    "this fp32 emulation (pip install 'fp8check[triton]', then TRITON_INTERPRET=1 before triton is "
                    "imported)")
CPU_NEEDS_INTERPRETER = ("Triton runs on the CPU only under its interpreter (TRITON_INTERPRET=1 before triton is "
                         "imported)")


def quick_reason(device_type: str) -> str | None:
    """The reason when it is known without importing triton (a CPU device, TRITON_INTERPRET unset, triton not yet
    imported); None when only triton_fp8.unavailable_reason can tell."""
    if device_type != "cpu" or "TRITON_INTERPRET" in os.environ or "triton" in sys.modules:
        return None
    return CPU_INSTALL_HINT if importlib.util.find_spec("triton") is None else CPU_NEEDS_INTERPRETER
