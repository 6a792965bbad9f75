"""The program's side of python3 -m boardtrace: run by _boot/sitecustomize.py
in the program's own interpreter (started by __main__.py as `python3
SCRIPT ARGS` or `python3 -m MODULE ARGS`) before the program's code. It
leaves the program's environment and sys.path as they would have been,
starts profiling and leaves: the interpreter then runs the program as
python3 would (its frames alone in tracebacks, the whole recursion limit,
its exit status, atexit handlers and threads that outlive the main one
profiled too, until the interpreter ends)."""

import json
import os
import sys

# The variable that tells the program's interpreter what to do; __main__.py
# sets it, start() takes it away.
SETTINGS = "BOARDTRACE_CHILD"


def start(boot_file):
    settings = json.loads(os.environ.pop(SETTINGS))
    if settings["pythonpath"] is None:
        os.environ.pop("PYTHONPATH", None)
    else:
        os.environ["PYTHONPATH"] = settings["pythonpath"]
    boot = os.path.dirname(os.path.abspath(boot_file))
    home = os.path.dirname(os.path.dirname(boot))
    # sys.path as python3 would have made it: the boot folder out, and the
    # package folder sitecustomize put first to import us; that folder last
    # unless it is there anyway, so `import boardtrace` (and tracy) work.
    del sys.path[0]
    sys.path[:] = [p for p in sys.path if p != boot] + ([] if home in sys.path else [home])
    chain_sitecustomize()

    import boardtrace
    from boardtrace import _boardtrace

    boardtrace._lines = settings["lines"]
    _boardtrace.thread_name("MainThread")
    os.register_at_fork(after_in_child=_boardtrace._after_fork_child)
    sys.setprofile = _boardtrace._share_setprofile(sys.setprofile)
    if sys.version_info >= (3, 12):
        os.fork = _boardtrace._own_fork(os.fork)
    else:
        import _lsprof
        import cProfile

        cProfile.Profile.enable, cProfile.Profile.disable = _boardtrace._share_lsprof(
            _lsprof.Profiler.enable, _lsprof.Profiler.disable)
    if not settings["partial"]:
        boardtrace.enable(settings["lines"])


def chain_sitecustomize():
    """The sitecustomize python3 would have imported, if any (Debian has
    one), imported as site.py does."""
    ours = sys.modules.pop("sitecustomize")
    try:
        import sitecustomize  # noqa: F401
    except ImportError as exc:
        # The import system expects to find ours when it has run.
        sys.modules["sitecustomize"] = ours
        if exc.name != "sitecustomize":
            site_error(exc)
    except Exception as exc:
        site_error(exc)


def site_error(exc):
    """What site.py says of a sitecustomize that fails, the program going
    on."""
    print("Error in sitecustomize; set PYTHONVERBOSE for traceback:\n"
          f"{exc.__class__.__name__}: {exc}", file=sys.stderr)
