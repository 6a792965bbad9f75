"""Upstream Tracy's Python API (module tracy_client) on boardtrace's runtime:
code written for upstream's bindings runs unchanged. The names and
signatures are upstream's; the implementation is boardtrace's."""

import enum as _enum
import functools as _functools
import sys as _sys

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
    thread_name,
)


class PlotFormatType(_enum.IntEnum):
    Number = 0
    Memory = 1
    Percentage = 2


Number = PlotFormatType.Number
Memory = PlotFormatType.Memory
Percentage = PlotFormatType.Percentage


class ColorType(_enum.IntEnum):
    """X11 color names, as 0xRRGGBB (the common ones)."""

    Black = 0x000000
    White = 0xFFFFFF
    Red = 0xFF0000
    Green = 0x00FF00
    Blue = 0x0000FF
    Yellow = 0xFFFF00
    Cyan = 0x00FFFF
    Magenta = 0xFF00FF
    Orange = 0xFFA500
    Purple = 0xA020F0
    Pink = 0xFFC0CB
    Brown = 0xA52A2A
    Gray = 0xBEBEBE
    Grey = 0xBEBEBE
    Gold = 0xFFD700
    Navy = 0x000080
    Teal = 0x008080
    Olive = 0x808000
    Maroon = 0xB03060
    Silver = 0xC0C0C0
    Violet = 0xEE82EE
    Tomato = 0xFF6347
    Coral = 0xFF7F50
    Salmon = 0xFA8072
    Khaki = 0xF0E68C
    Crimson = 0xDC143C
    Indigo = 0x4B0082
    Lime = 0x00FF00
    SkyBlue = 0x87CEEB
    SteelBlue = 0x4682B4
    RoyalBlue = 0x4169E1
    DodgerBlue = 0x1E90FF
    ForestGreen = 0x228B22
    SeaGreen = 0x2E8B57
    DarkGreen = 0x006400
    DarkRed = 0x8B0000
    DarkBlue = 0x00008B
    DarkOrange = 0xFF8C00
    OrangeRed = 0xFF4500
    HotPink = 0xFF69B4
    DeepPink = 0xFF1493
    Turquoise = 0x40E0D0
    Chocolate = 0xD2691E
    Firebrick = 0xB22222


globals().update({c.name: c for c in ColorType})

Color = int
PlotType = int


def program_name(name):
    """Accepted as upstream does; the program's name in the trace is the
    name its process runs under."""
    return isinstance(name, str)


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
