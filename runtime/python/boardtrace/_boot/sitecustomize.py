# The program's first step under python3 -m boardtrace, before its own code:
# its interpreter imports this `sitecustomize` (this folder is put first on
# its PYTHONPATH by boardtrace/__main__.py), which starts profiling and then
# hands over to the sitecustomize the interpreter would have imported.
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
from boardtrace import _child  # noqa: E402

_child.start(__file__)
