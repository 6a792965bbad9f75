"""tt-metal's `tracy` Python API on boardtrace: `from tracy import signpost`,
`from tracy import Profiler` and `python -m tracy [-p] [-l] [-m module |
script] args` (tracy/__main__.py), as tt-metal's Tracy guide writes them,
carried out by the boardtrace package.

tt-metal's own `tracy` package, found anywhere else on sys.path, is the one
imported: this one puts it in its place (runtime/README.md, "tt-metal's
tracy package")."""

import importlib.machinery as _machinery
import os as _os
import sys as _sys


def _tt_metals_tracy():
    """The spec of another `tracy` package on sys.path than this one."""
    mine = _os.path.realpath(_os.path.dirname(_os.path.dirname(__file__)))
    others = [p for p in _sys.path if _os.path.realpath(p or ".") != mine]
    spec = _machinery.PathFinder.find_spec(__name__, others)
    if spec is None or spec.origin is None or spec.loader is None:
        return None
    if _os.path.realpath(spec.origin) == _os.path.realpath(__file__):
        return None
    return spec


_theirs = _tt_metals_tracy()
if _theirs is not None:
    # The import system returns what sys.modules holds once this module has
    # run: `import tracy` gets tt-metal's package, and `python -m tracy`
    # its __main__ (looked up in that package's __path__).
    import importlib.util as _util

    _module = _util.module_from_spec(_theirs)
    _sys.modules[__name__] = _module
    _theirs.loader.exec_module(_module)
else:
    import boardtrace as _boardtrace
    from boardtrace import signpost  # noqa: F401

    __all__ = ["Profiler", "signpost"]

    class Profiler(_boardtrace.Profiler):
        """tt-metal's Profiler(): profiles between enable() and disable()
        (under `python -m tracy -p`, only there), lines too under -l."""

        def __init__(self):
            super().__init__()
