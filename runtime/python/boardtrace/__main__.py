"""python3 -m boardtrace [-p] [-l] [-s] [-o TRACE.tracy [-f] [-z lz4|zstd]] (SCRIPT | -m MODULE) [ARGS...]

Runs a Python program with boardtrace's runtime, every Python call (and
call into a C function) a Tracy zone, every thread named.

  -o TRACE.tracy  capture into this file: boardtrace-capture runs beside the
                  program on a free loopback port and the trace is complete
                  when the program has ended. Without -o the program serves a
                  Tracy GUI or capture on TRACY_PORT (default 8086), as any
                  traced program does, and waits for one at exit
                  (TRACY_NO_EXIT=1 is set).
  -f              replace -o's file if it exists (never the script or module)
  -z lz4|zstd     how -o's file is compressed: zstd (the default, as
                  upstream's tracy-capture writes) or LZ4 (upstream's "fast"
                  files: written about twice as fast once the program ends,
                  some 2.5 times larger); every Tracy GUI opens both
  -p              profile only between boardtrace.Profiler().enable() and
                  .disable() (or `with boardtrace.Profiler():`)
  -l              a zone per executed line too, inside profiled code (costly:
                  several times slower than function zones alone)
  -s              system tracing too (CPU samples and context switches with
                  the interpreter's native callstacks): off by default, as
                  the Python zones are the profile and the samples cost more
                  than they do (TRACY_NO_SYS_TRACE=1 is set unless given)
  -m MODULE       run a module, as python3 -m does

The program's own exit status and output are kept. The capture is found
through BOARDTRACE_CAPTURE, then beside this build, then on PATH.
"""

import os
import runpy
import shutil
import signal
import socket
import subprocess
import _thread
import sys
import traceback


def usage(code, text=None):
    out = sys.stderr if code else sys.stdout
    if text:
        print(f"boardtrace: {text}", file=out)
    print(__doc__.strip().split("\n\n")[0], file=out)
    if not code:
        print("\n" + __doc__.strip().split("\n\n", 1)[1], file=out)
    sys.exit(code)


def parse(argv):
    opts = {"partial": False, "lines": False, "system": False, "output": None, "module": None,
            "compression": "zstd", "force": False}
    i = 0
    while i < len(argv):
        a = argv[i]
        if a in ("-h", "--help"):
            usage(0)
        elif a == "-p":
            opts["partial"] = True
        elif a == "-l":
            opts["lines"] = True
        elif a == "-s":
            opts["system"] = True
        elif a == "-f":
            opts["force"] = True
        elif a == "-o":
            if i + 1 == len(argv):
                usage(2, "-o needs a file name")
            opts["output"] = argv[i + 1]
            i += 1
        elif a == "-z":
            if i + 1 == len(argv) or argv[i + 1] not in ("lz4", "zstd"):
                usage(2, "-z needs lz4 or zstd")
            opts["compression"] = argv[i + 1]
            opts["z_given"] = True
            i += 1
        elif a == "-m":
            if i + 1 == len(argv):
                usage(2, "-m needs a module name")
            opts["module"] = argv[i + 1]
            return checked(opts), argv[i + 2 :]
        elif a == "--":
            i += 1
            break
        elif a.startswith("-"):
            usage(2, f"unknown option {a}")
        else:
            break
        i += 1
    if i == len(argv):
        usage(2, "a script or -m MODULE is required")
    return checked(opts), argv[i:]


def checked(opts):
    """Options that only mean something together."""
    if opts.pop("z_given", False) and not opts["output"]:
        usage(2, "-z says how -o's file is compressed: without -o the GUI or capture that "
              "connects writes the file")
    if opts["force"] and not opts["output"]:
        usage(2, "-f lets -o replace its file: without -o there is none")
    return opts


def check_output(output, force, inputs):
    """-o's file, refused before the program runs: a folder, an existing
    file without -f, or one of the program's own files even with -f."""
    if os.path.isdir(output):
        refuse(f"-o {output} is a folder: name the trace file to write")
    for given in inputs:
        if given and os.path.exists(output) and os.path.samefile(output, given):
            refuse(f"-o {output} is the program's own file {given}: name another")
    if os.path.lexists(output) and not force:
        refuse(f"-o {output} exists: give -f to replace it")


def refuse(text):
    print(f"boardtrace: {text}", file=sys.stderr)
    sys.exit(2)


def find_capture():
    given = os.environ.get("BOARDTRACE_CAPTURE")
    if given:
        return given
    try:
        from boardtrace import _paths

        if os.access(_paths.CAPTURE, os.X_OK):
            return _paths.CAPTURE
    except ImportError:
        pass
    return shutil.which("boardtrace-capture")


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def capture_port():
    """The capture's program and a free port, set for the runtime to listen
    on (it reads these when it starts, which is when _boardtrace loads)."""
    capture = find_capture()
    if not capture:
        print(
            "boardtrace: -o needs boardtrace-capture: set BOARDTRACE_CAPTURE, or put it on PATH",
            file=sys.stderr,
        )
        sys.exit(2)
    port = free_port()
    os.environ.update(
        TRACY_PORT=str(port),
        TRACY_NO_EXIT="1",
        TRACY_ONLY_LOCALHOST="1",
        TRACY_NO_BROADCAST="1",
    )
    return capture, port


def start_capture(capture, port, output, compression, force):
    # Its own process group: a Ctrl-C meant for the program does not stop
    # the capture before the program's last events arrive.
    return subprocess.Popen(
        [capture, "-o", output, "-a", "127.0.0.1", "-p", str(port), *(["-f"] if force else []),
         "--connect-timeout", "60", "--compression", compression],
        stdout=subprocess.DEVNULL,
        start_new_session=True,
    )


def watch_capture(capture, run):
    """Waits for the capture on a thread of its own (not a threading one, so
    the program does not see it, and not profiled). A capture that fails, or ends before the
    program does, ends the run: the program would otherwise wait for it, its
    buffers full, forever."""
    rc = capture.wait()
    if rc != 0 or not run["finishing"]:
        print(f"boardtrace: the capture exited with status {rc}"
              + ("" if run["finishing"] else " while the program ran"), file=sys.stderr)
        sys.stderr.flush()
        os._exit(run["status"] or 10)
    run["ended"].release()


def main(argv=None):
    opts, args = parse(sys.argv[1:] if argv is None else argv)
    if opts["module"]:
        import importlib.util

        try:
            found = importlib.util.find_spec(opts["module"])
        except (ImportError, ValueError):
            found = None
        if not found:
            print(f"boardtrace: no module named {opts['module']}", file=sys.stderr)
            sys.exit(2)
        inputs = [found.origin] if found.has_location else []
    elif not os.path.isfile(args[0]):
        print(f"boardtrace: {args[0]}: no such file", file=sys.stderr)
        sys.exit(2)
    else:
        inputs = [args[0]]
    if opts["output"]:
        check_output(opts["output"], opts["force"], inputs)
    where = capture_port() if opts["output"] else None
    if not where:
        os.environ.setdefault("TRACY_NO_EXIT", "1")
    if not opts["system"]:
        os.environ.setdefault("TRACY_NO_SYS_TRACE", "1")

    import boardtrace
    from boardtrace import _boardtrace

    boardtrace._lines = opts["lines"]

    # The runtime starts (and listens) here, before the capture does: its
    # first connection is taken, not refused and retried 100 ms later.
    _boardtrace.thread_name("MainThread")
    capture = start_capture(*where, opts["output"], opts["compression"], opts["force"]) if where else None
    # The program starts now, not once the capture is connected (and the
    # runtime has measured its timer's rate, some 15 ms): what it emits
    # meanwhile waits in the runtime's buffers, for a capture that is coming.
    run = {"status": 0, "finishing": False, "ended": _thread.allocate_lock()}
    if capture:
        run["ended"].acquire()
        _thread.start_new_thread(_boardtrace._run_unprofiled, (watch_capture, capture, run))
    status = 0
    try:
        if not opts["partial"]:
            boardtrace.enable(opts["lines"])
        if opts["module"]:
            sys.argv = [opts["module"]] + args
            runpy.run_module(opts["module"], run_name="__main__", alter_sys=True)
        else:
            sys.argv = args
            sys.path.insert(0, os.path.dirname(os.path.abspath(args[0])))
            runpy.run_path(args[0], run_name="__main__")
    except SystemExit as e:
        code = e.code
        if code is None:
            status = 0
        elif isinstance(code, int):
            status = code
        else:
            print(code, file=sys.stderr)
            status = 1
    except KeyboardInterrupt:
        traceback.print_exc()
        status = 128 + signal.SIGINT
    except BaseException:
        traceback.print_exc()
        status = 1
    finally:
        boardtrace.disable()
    run["status"] = status
    run["finishing"] = True
    # A program may have closed its stdout (json.tool does): then there is
    # nothing left to flush.
    if sys.stdout is not None and not sys.stdout.closed:
        sys.stdout.flush()
    # Everything the program emitted reaches the capture, which then writes
    # the file; only then is the trace complete.
    _boardtrace._finish()
    if capture:
        with run["ended"]:
            if sys.stderr is not None and not sys.stderr.closed:
                print(f"boardtrace: trace written to {opts['output']}", file=sys.stderr)
    sys.exit(status)


if __name__ == "__main__":
    main()
