"""Upstream Tracy's Python API (module tracy_client) on boardtrace's runtime:
code written for upstream's bindings runs unchanged. The names and
signatures are upstream's; the implementation is boardtrace's."""

import enum as _enum
import functools as _functools
import sys as _sys

from tracy_client import _colors

from boardtrace._boardtrace import (  # noqa: F401
    _ScopedZone,
    _plot_config,
    alloc,
    app_info,
    frame_image,
    frame_mark,
    frame_mark_end,
    frame_mark_start,
    free,
    is_enabled,
    message,
    plot,
    program_name,
    thread_name,
)


class PlotFormatType(_enum.IntEnum):
    Number = 0
    Memory = 1
    Percentage = 2


Number = PlotFormatType.Number
Memory = PlotFormatType.Memory
Percentage = PlotFormatType.Percentage


# Tracy's named colors (X11 and web names, 0xRRGGBB), as tracy/TracyColor.hpp
# has them; a name of the same value is an alias.
ColorType = _enum.IntEnum("ColorType", _colors.COLORS)

globals().update({c.name: c for c in ColorType})

Color = int
PlotType = int


def plot_config(name, type, step=False, flip=False, color=0):
    return _plot_config(name, int(type), bool(step), bool(flip), int(color))


class ScopedZone(_ScopedZone):
    def __init__(self, name=None, color=0, depth=None, active=True):
        frame = _sys._getframe(1)
        code = frame.f_code
        super().__init__(name, int(color), depth, active, code.co_name, code.co_filename,
                         frame.f_lineno)

    def color(self, color):
        self._color(int(color))

    def __enter__(self):
        self.enter()
        return self

    def __exit__(self, *exc):
        self.exit()


def ScopedZoneDecorator(name=None, color=0, depth=None, active=True, class_name=None):
    def decorator(function):
        source = function.__name__ if class_name is None else f"{class_name}:{function.__name__}"
        code = function.__code__
        where = (name, int(color), depth, active, source, code.co_filename, code.co_firstlineno)

        @_functools.wraps(function)
        def wrapped(*args, **kwargs):
            # A zone per call (the location is made once): recursion and
            # threads each get their own.
            zone = _ScopedZone(*where)
            zone.enter()
            try:
                return function(*args, **kwargs)
            finally:
                zone.exit()

        return wrapped

    return decorator


class ScopedFrame:
    def __init__(self, name):
        self._name = name
        self._id = None

    def __enter__(self):
        self._id = frame_mark_start(self._name)
        return self

    def __exit__(self, *exc):
        if self._id is not None:
            frame_mark_end(self._id)


def ScopedFrameDecorator(name):
    def decorator(function):
        @_functools.wraps(function)
        def wrapped(*args, **kwargs):
            frame_id = frame_mark_start(name)
            try:
                return function(*args, **kwargs)
            finally:
                frame_mark_end(frame_id)

        return wrapped

    return decorator
