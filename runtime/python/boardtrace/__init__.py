"""boardtrace for Python programs: profiling through boardtrace's runtime.

    python3 -m boardtrace [-p] [-l] [-s] [-o TRACE.tracy] (SCRIPT | -m MODULE) [ARGS...]

profiles every Python call (and call into a C function) as a Tracy zone.
In the program, `boardtrace.Profiler()` starts and stops profiling by hand
(with -p, only between its enable() and disable()), and
`boardtrace.signpost(header, message)` drops a marker.

The runtime starts when this package first needs it, reading the TRACY_*
environment variables then (runtime/README.md): `python3 -m boardtrace`
sets them before that.
"""

import threading as _threading

__all__ = ["Profiler", "signpost", "enable", "disable"]

# Whether a Profiler() given no lines= profiles lines: -l's (python3 -m
# boardtrace or tracy sets it).
_lines = False


def _rt():
    from boardtrace import _boardtrace

    return _boardtrace


def signpost(header, message=None):
    """A marker: a Tracy message ("HEADER" or "HEADER: MESSAGE") and a frame
    of the "signposts" frame set, so the GUI steps from one to the next;
    `boardtrace-report signposts TRACE` lists them with what ran between."""
    _rt().signpost(str(header), None if message is None else str(message))


def enable(lines=False):
    """Profiles from here on, with lines=True a zone per executed line too:
    on Python 3.12 and later every thread (sys.monitoring's events are the
    process's), before 3.12 the calling thread and every thread that
    threading starts later."""
    rt = _rt()
    if not rt._process_wide:
        _threading.setprofile(rt._thread_start)
    rt._enable(bool(lines))


def disable():
    """Stops profiling (the calling thread's open zones end here): on 3.12
    and later every thread, before 3.12 the calling thread and threads
    started later."""
    rt = _rt()
    if not rt._process_wide:
        _threading.setprofile(None)
    rt._disable()


class Profiler:
    """Profiles between enable() and disable(), or as a context manager;
    lines too with lines=True (by default under -l)."""

    def __init__(self, lines=None):
        self.lines = _lines if lines is None else lines

    def enable(self):
        enable(self.lines)

    def disable(self):
        disable()

    def __enter__(self):
        self.enable()
        return self

    def __exit__(self, *exc):
        self.disable()
        return False
