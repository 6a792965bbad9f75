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

The program runs in an interpreter of its own as `python3 SCRIPT ARGS` (or
`python3 -m MODULE ARGS`) would: its output, files, tracebacks and exit
status (or death by a signal) are python3's. The capture is found through
BOARDTRACE_CAPTURE, then beside this build, then on PATH.
"""

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time

from boardtrace import _child


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


def capture_port(env):
    """The capture's program and a free port, set in ENV for the program's
    runtime to listen on."""
    capture = find_capture()
    if not capture:
        print(
            "boardtrace: -o needs boardtrace-capture: set BOARDTRACE_CAPTURE, or put it on PATH",
            file=sys.stderr,
        )
        sys.exit(2)
    port = free_port()
    env.update(
        TRACY_PORT=str(port),
        TRACY_NO_EXIT="1",
        TRACY_ONLY_LOCALHOST="1",
        TRACY_NO_BROADCAST="1",
        BOARDTRACE_NO_WAIT_NOTICE="1",
    )
    return capture, port


# The signals this process takes while the program runs: a Ctrl-C or a
# hang-up from the terminal reaches the program (in the same process group)
# on its own; one sent to this process alone is passed on to it.
PASSED_ON = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT}

# Seconds a program has to end once its capture has (normally the program
# ends first: its exit waits until the capture has everything).
CAPTURE_GRACE = 10


def spawn(argv, env, sigmask, session=False, quiet=False):
    """ARGV started with the signal mask this process had (it blocks the
    signals it waits for), the signals Python ignores for itself back to
    their defaults, and the descriptors the program was given (Python's
    own are not inherited)."""
    actions = [(os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0)] if quiet else []
    return os.posix_spawn(argv[0], argv, env, file_actions=actions, setsigmask=sigmask,
                          setsigdef=(signal.SIGPIPE, signal.SIGXFSZ), setsid=session)


def start_capture(capture, port, output, compression, force, sigmask):
    # A session of its own: a Ctrl-C meant for the program does not stop
    # the capture before the program's last events arrive.
    return spawn([capture, "-o", output, "-a", "127.0.0.1", "-p", str(port),
                  *(["-f"] if force else []), "--connect-timeout", "60",
                  "--compression", compression], os.environ, sigmask, session=True, quiet=True)


def program_argv(opts, args):
    """python3 SCRIPT ARGS or python3 -m MODULE ARGS, with this
    interpreter's own options (-X, -W, -O...)."""
    flags = subprocess._args_from_interpreter_flags()
    run = ["-m", opts["module"]] if opts["module"] else []
    script = [] if opts["module"] or not args[0].startswith("-") else ["--"]
    return [sys.executable, *flags, *run, *script, *args]


def program_env(opts, env):
    """The program's environment: ours, with the boot folder first on
    PYTHONPATH and what it is to do; the boot puts PYTHONPATH back."""
    boot = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_boot")
    previous = env.get("PYTHONPATH")
    env[_child.SETTINGS] = json.dumps(
        {"partial": opts["partial"], "lines": opts["lines"], "pythonpath": previous})
    env["PYTHONPATH"] = boot + (os.pathsep + previous if previous else "")
    return env


def status_of(wait_status):
    """(exit status, signal that ended it or 0)."""
    if os.WIFSIGNALED(wait_status):
        return 128 + os.WTERMSIG(wait_status), os.WTERMSIG(wait_status)
    return os.waitstatus_to_exitcode(wait_status), 0


def say(text):
    print(f"boardtrace: {text}", file=sys.stderr, flush=True)


def main(argv=None):
    opts, args = parse(sys.argv[1:] if argv is None else argv)
    if sys.flags.no_site or sys.flags.ignore_environment:
        refuse("python3 -S, -E and -I leave out what starts the profiling (a sitecustomize on "
               "PYTHONPATH): run python3 -m boardtrace without them")
    if opts["module"]:
        import importlib.util

        # The top-level name only: finding pkg.mod would run pkg's
        # __init__ here, before the program runs it.
        top = opts["module"].partition(".")[0]
        try:
            found = importlib.util.find_spec(top)
        except (ImportError, ValueError):
            found = None
        if not found:
            print(f"boardtrace: no module named {opts['module']}", file=sys.stderr)
            sys.exit(2)
        inputs = [found.origin] if found.has_location and top == opts["module"] else []
    elif not os.path.isfile(args[0]):
        print(f"boardtrace: {args[0]}: no such file", file=sys.stderr)
        sys.exit(2)
    else:
        inputs = [args[0]]
    if opts["output"]:
        check_output(opts["output"], opts["force"], inputs)
    env = dict(os.environ)
    where = capture_port(env) if opts["output"] else None
    env.setdefault("TRACY_NO_EXIT", "1")
    if not opts["system"]:
        env.setdefault("TRACY_NO_SYS_TRACE", "1")
    program_env(opts, env)

    # The program runs in an interpreter of its own, as `python3 SCRIPT`
    # would: this one starts it and the capture, passes on signals sent to
    # it, and ends as the program did once the trace is written.
    sigmask = signal.pthread_sigmask(signal.SIG_BLOCK, PASSED_ON | {signal.SIGCHLD})
    program = spawn(program_argv(opts, args), env, sigmask)
    capture = start_capture(*where, opts["output"], opts["compression"], opts["force"],
                            sigmask) if where else None
    status = capture_status = None
    ended_at = None
    while status is None:
        if ended_at is None:
            info = signal.sigwaitinfo(PASSED_ON | {signal.SIGCHLD})
        else:
            info = signal.sigtimedwait(PASSED_ON | {signal.SIGCHLD}, 1)
        if info and info.si_signo != signal.SIGCHLD:
            # si_pid 0: the terminal's, which the program got too.
            if info.si_pid not in (0, program):
                os.kill(program, info.si_signo)
            continue
        pid, wait_status = os.waitpid(program, os.WNOHANG)
        if pid:
            status = status_of(wait_status)
            continue
        if capture_status is None and capture:
            pid, wait_status = os.waitpid(capture, os.WNOHANG)
            if pid:
                capture_status = status_of(wait_status)[0]
                ended_at = time.monotonic()
        # A capture that ended before the program: it may be a moment ahead
        # of the program's own end (it took all the program sent, or saw
        # the connection of a program dying close); otherwise the program
        # would wait for it at its end (TRACY_NO_EXIT), its buffers full,
        # forever.
        if ended_at is not None and time.monotonic() - ended_at > CAPTURE_GRACE:
            say(f"the capture exited with status {capture_status} while the program ran; "
                "the program is stopped")
            os.kill(program, signal.SIGKILL)
            os.waitpid(program, 0)
            sys.exit(10)
    code, killed_by = status
    if capture and killed_by and capture_status is None:
        # Killed, its runtime did not end the session: the capture writes
        # what it received (or gives up waiting for a connection) now.
        os.kill(capture, signal.SIGINT)
    if capture:
        while capture_status is None:
            pid, wait_status = os.waitpid(capture, os.WNOHANG)
            if pid:
                capture_status = status_of(wait_status)[0]
                break
            info = signal.sigwaitinfo(PASSED_ON | {signal.SIGCHLD})
            if info.si_signo != signal.SIGCHLD:
                os.kill(capture, signal.SIGINT)  # stops it; what it has is written
        if capture_status != 0:
            # The program's death by a signal says more than this.
            say(f"the capture exited with status {capture_status}")
            if not killed_by:
                code = code or 10
        else:
            say(f"trace written to {opts['output']}")
    if killed_by:
        # Ended by a signal: so does this process, for whoever waits on it
        # (no core file of ours: the program's is the one).
        import resource

        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        signal.signal(killed_by, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_SETMASK, sigmask - {killed_by})
        os.kill(os.getpid(), killed_by)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {killed_by})
    sys.exit(code)


if __name__ == "__main__":
    main()
