"""python3 -m boardtrace and tracy_client, run for real: the interpreter
profiles a script, boardtrace-capture writes the trace, and
boardtrace-report reads it back. Exact zone counts per function and thread.

Usage: test_python.py PYTHONPATH CAPTURE REPORT"""

import collections
import json
import os
import signal
import subprocess
import sys
import tempfile
import textwrap
import unittest

PYPATH, CAPTURE, REPORT = sys.argv[1:4]
del sys.argv[1:4]
WORK = tempfile.mkdtemp(prefix="bt-python-")

PROGRAM = textwrap.dedent(
    """
    import sys, threading

    def fib(n):
        return n if n < 2 else fib(n - 1) + fib(n - 2)

    class Shape:
        def area(self, x):
            return sorted([3, 1, 2])[0] + x

    def gen():
        for i in range(3):
            yield i

    def raiser():
        raise ValueError("caught two frames up")

    def middle():
        raiser()

    def catcher():
        try:
            middle()
        except ValueError:
            pass

    def work():
        fib(5)

    t = threading.Thread(target=work, name="worker-1")
    t.start()
    t.join()
    fib(10)
    s = Shape()
    for i in range(4):
        s.area(i)
    list(gen())
    catcher()
    print("program output")
    sys.exit(int(sys.argv[1]) if len(sys.argv) > 1 else 0)
    """
)


def write(name, text):
    path = os.path.join(WORK, name)
    with open(path, "w") as f:
        f.write(text)
    return path


def run(*args, timeout=300):
    env = dict(os.environ, PYTHONPATH=PYPATH, BOARDTRACE_CAPTURE=CAPTURE)
    return subprocess.run(
        [sys.executable, "-m", "boardtrace", *args],
        env=env,
        cwd=WORK,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def zones(trace):
    """(thread name, zone name) -> count, from the Chrome JSON export."""
    out = trace + ".json"
    subprocess.run([REPORT, "chrome", "-o", out, trace], check=True, capture_output=True)
    with open(out) as f:
        events = json.load(f)["traceEvents"]
    names = {e["tid"]: e["args"]["name"] for e in events if e.get("name") == "thread_name"}
    counts = collections.Counter()
    for e in events:
        if e.get("ph") == "X" and e["tid"] in names:
            counts[(names[e["tid"]], e["name"])] += 1
    return counts


def stats(trace):
    """(name, line) -> count, from the CSV statistics."""
    out = subprocess.run(
        [REPORT, "stats", "--csv", trace], check=True, capture_output=True, text=True
    ).stdout
    counts = {}
    for row in out.splitlines()[1:]:
        f = row.split(",")
        counts[(f[0], int(f[2]))] = int(f[5])
    return counts


class WholeProgram(unittest.TestCase):
    def test_every_call_is_a_zone_on_its_thread(self):
        script = write("program.py", PROGRAM)
        trace = os.path.join(WORK, "whole.tracy")
        r = run("-o", trace, script)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("program output", r.stdout)
        z = zones(trace)
        self.assertEqual(z[("MainThread", "fib")], 177)
        self.assertEqual(z[("worker-1", "fib")], 15)
        self.assertEqual(z[("worker-1", "work")], 1)
        self.assertEqual(z[("MainThread", "Shape.area")], 4)
        self.assertEqual(z[("MainThread", "builtins.sorted")], 4)
        # A generator's zone per resumption: 3 yields and the end.
        self.assertEqual(z[("MainThread", "gen")], 4)
        for f in ("raiser", "middle", "catcher"):
            self.assertEqual(z[("MainThread", f)], 1, f)

    def test_a_call_site_calling_python_and_c_keeps_every_c_zone(self):
        # The same call sites call a C function, then a Python one, then
        # the C function again: every call is a zone, whatever came first.
        script = write(
            "polymorphic.py",
            textwrap.dedent(
                """
                import math

                class Box:
                    def reverse(self):
                        pass

                def py(n, k):
                    return n

                def call(f, n):
                    return f(n, 2)

                for f in (math.comb, py, math.comb, py, math.comb):
                    call(f, 5)
                for o in (bytearray(b"ab"), Box(), bytearray(b"ab"), Box(), bytearray(b"ab")):
                    o.reverse()
                """
            ),
        )
        trace = os.path.join(WORK, "polymorphic.tracy")
        r = run("-o", trace, script)
        self.assertEqual(r.returncode, 0, r.stderr)
        z = zones(trace)
        self.assertEqual(z[("MainThread", "call")], 5)
        self.assertEqual(z[("MainThread", "math.comb")], 3)
        self.assertEqual(z[("MainThread", "py")], 2)
        self.assertEqual(z[("MainThread", "bytearray.reverse")], 3)
        self.assertEqual(z[("MainThread", "Box.reverse")], 2)

    def test_the_file_is_zstd_unless_z_says_lz4(self):
        # The container header's compression byte: 0 LZ4, 1 zstd; the same
        # zones either way.
        script = write("program.py", PROGRAM)
        for args, kind in (((), 1), (("-z", "lz4"), 0), (("-z", "zstd"), 1)):
            trace = os.path.join(WORK, f"compressed-{kind}.tracy")
            r = run("-o", trace, "-f", *args, script)
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(trace, "rb") as f:
                self.assertEqual(f.read(5), b"tr\xfdP" + bytes([kind]), args)
            self.assertEqual(zones(trace)[("MainThread", "fib")], 177, args)
        r = run("-o", os.path.join(WORK, "never.tracy"), "-z", "gzip", script)
        self.assertEqual(r.returncode, 2)
        self.assertIn("-z needs lz4 or zstd", r.stderr)
        # Without -o there is no file of ours to compress: refused, before
        # the program runs.
        for tail in ((script,), ("-m", "json.tool", script)):
            r = run("-z", "lz4", *tail)
            self.assertEqual(r.returncode, 2, tail)
            self.assertIn("-z says how -o's file is compressed", r.stderr)

    def test_the_programs_exit_status_is_kept(self):
        script = write("program.py", PROGRAM)
        trace = os.path.join(WORK, "status.tracy")
        r = run("-o", trace, script, "3")
        self.assertEqual(r.returncode, 3, r.stderr)
        self.assertEqual(zones(trace)[("MainThread", "fib")], 177)


class Partial(unittest.TestCase):
    def test_only_between_enable_and_disable(self):
        script = write(
            "partial.py",
            textwrap.dedent(
                """
                import boardtrace

                def inside(): pass
                def outside(): pass

                outside()
                p = boardtrace.Profiler()
                p.enable()
                for _ in range(5):
                    inside()
                p.disable()
                outside()
                with boardtrace.Profiler():
                    inside()
                """
            ),
        )
        trace = os.path.join(WORK, "partial.tracy")
        r = run("-p", "-o", trace, script)
        self.assertEqual(r.returncode, 0, r.stderr)
        z = zones(trace)
        self.assertEqual(z[("MainThread", "inside")], 6)
        self.assertEqual(z[("MainThread", "outside")], 0)


class Lines(unittest.TestCase):
    def test_a_zone_per_executed_line(self):
        script = write(
            "lines.py",
            textwrap.dedent(
                """
                def loop():
                    total = 0
                    for i in range(3):
                        total += i
                    return total

                loop()
                """
            ),
        )
        trace = os.path.join(WORK, "lines.tracy")
        r = run("-l", "-o", trace, script)
        self.assertEqual(r.returncode, 0, r.stderr)
        s = stats(trace)
        self.assertEqual(s[("loop", 2)], 1)  # the function
        self.assertEqual(s[("loop", 3)], 1)  # total = 0
        self.assertEqual(s[("loop", 4)], 4)  # the for line: 3 turns and the end
        self.assertEqual(s[("loop", 5)], 3)  # the body
        self.assertEqual(s[("loop", 6)], 1)  # return


class BadInput(unittest.TestCase):
    def test_a_script_that_raises_exits_1_with_its_traceback_and_the_trace_kept(self):
        script = write("raises.py", "def f():\n    raise RuntimeError('boom')\nf()\n")
        trace = os.path.join(WORK, "raises.tracy")
        r = run("-o", trace, script)
        self.assertEqual(r.returncode, 1)
        self.assertIn("RuntimeError: boom", r.stderr)
        self.assertIn("Traceback", r.stderr)
        self.assertEqual(zones(trace)[("MainThread", "f")], 1)

    def test_a_missing_script_or_module_is_named(self):
        r = run(os.path.join(WORK, "nothing-here.py"))
        self.assertEqual(r.returncode, 2)
        self.assertIn("nothing-here.py: no such file", r.stderr)
        r = run("-m", "no_such_module_here")
        self.assertEqual(r.returncode, 2)
        self.assertIn("no module named no_such_module_here", r.stderr)
        r = run("-x")
        self.assertEqual(r.returncode, 2)
        self.assertIn("unknown option -x", r.stderr)

    def test_ctrl_c_ends_the_program_as_python_does_and_keeps_the_trace(self):
        script = write(
            "forever.py",
            "import sys, time\ndef tick():\n    time.sleep(0.01)\n"
            "tick()\nprint('ready', flush=True)\nwhile True:\n    tick()\n",
        )
        trace = os.path.join(WORK, "interrupted.tracy")
        env = dict(os.environ, PYTHONPATH=PYPATH, BOARDTRACE_CAPTURE=CAPTURE)
        # SIGINT as a terminal's Ctrl-C finds it: this test may run with it
        # ignored (a background job of a non-interactive shell), which the
        # program would inherit, and Python keeps a SIGINT ignored at start.
        p = subprocess.Popen(
            [sys.executable, "-m", "boardtrace", "-o", trace, script],
            env=env, cwd=WORK, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        self.assertEqual(p.stdout.readline(), "ready\n")
        p.send_signal(signal.SIGINT)
        try:
            out, err = p.communicate(timeout=300)
        except subprocess.TimeoutExpired:
            p.kill()
            out, err = p.communicate()
            self.fail(f"the program did not end within 300 s of SIGINT: {err}")
        # As python3's: the KeyboardInterrupt's traceback, then death by
        # SIGINT (a shell says 130).
        self.assertEqual(p.returncode, -signal.SIGINT, err)
        self.assertIn("KeyboardInterrupt", err)
        self.assertGreaterEqual(zones(trace)[("MainThread", "tick")], 1)

    def test_a_module_runs_with_m(self):
        write("mymod.py", "def hello():\n    return 1\nhello()\nhello()\n")
        trace = os.path.join(WORK, "module.tracy")
        env_path = WORK
        r = subprocess.run(
            [sys.executable, "-m", "boardtrace", "-o", trace, "-m", "mymod"],
            env=dict(os.environ, PYTHONPATH=PYPATH + ":" + env_path, BOARDTRACE_CAPTURE=CAPTURE),
            cwd=WORK, capture_output=True, text=True, timeout=300)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(zones(trace)[("MainThread", "hello")], 2)

    def test_a_capture_that_fails_ends_the_run_with_status_10(self):
        # The program starts before the capture connects: a capture that
        # fails must end it, not leave it waiting on full buffers forever.
        script = write("busy.py", "def f():\n    pass\nwhile True:\n    f()\n")
        failing = write("failing-capture.sh", "#!/bin/sh\nexit 3\n")
        os.chmod(failing, 0o700)
        r = subprocess.run(
            [sys.executable, "-m", "boardtrace", "-o", os.path.join(WORK, "x.tracy"), script],
            env=dict(os.environ, PYTHONPATH=PYPATH, BOARDTRACE_CAPTURE=failing),
            cwd=WORK, capture_output=True, text=True, timeout=300)
        self.assertEqual(r.returncode, 10, r.stderr)
        self.assertIn("the capture exited with status 3", r.stderr)

    def test_a_capture_that_ends_before_the_program_ends_the_run_with_status_10(self):
        script = write("busy2.py", "def f():\n    pass\nwhile True:\n    f()\n")
        quitting = write("quitting-capture.sh", "#!/bin/sh\nexit 0\n")
        os.chmod(quitting, 0o700)
        r = subprocess.run(
            [sys.executable, "-m", "boardtrace", "-o", os.path.join(WORK, "y.tracy"), script],
            env=dict(os.environ, PYTHONPATH=PYPATH, BOARDTRACE_CAPTURE=quitting),
            cwd=WORK, capture_output=True, text=True, timeout=300)
        self.assertEqual(r.returncode, 10, r.stderr)
        self.assertIn("the capture exited with status 0 while the program ran", r.stderr)


class Signposts(unittest.TestCase):
    def test_a_signpost_is_a_message_and_a_frame(self):
        script = write(
            "signposts.py",
            textwrap.dedent(
                """
                import boardtrace, time

                def slow():
                    time.sleep(0.02)

                boardtrace.signpost("start")
                slow()
                slow()
                boardtrace.signpost("phase", "two, with a comma")
                boardtrace.signpost("end")
                """
            ),
        )
        trace = os.path.join(WORK, "signposts.tracy")
        r = run("-o", trace, script)
        self.assertEqual(r.returncode, 0, r.stderr)
        out = trace + ".json"
        subprocess.run([REPORT, "chrome", "-o", out, trace], check=True, capture_output=True)
        with open(out) as f:
            events = json.load(f)["traceEvents"]
        texts = [e["name"] for e in events if e.get("ph") == "i"]
        for t in ("start", "phase: two, with a comma", "end"):
            self.assertIn(t, texts)
        tracks = {e["tid"]: e["args"]["name"] for e in events if e.get("name") == "thread_name"}
        frames = [e for e in events if e.get("name") == "frame"
                  and tracks.get(e["tid"]) == "Frames: signposts"]
        self.assertEqual(len(frames), 2)  # from each signpost to the next
        # The report: a row each, what took the time in between.
        rows = subprocess.run([REPORT, "signposts", trace], check=True, capture_output=True,
                              text=True).stdout.splitlines()
        self.assertEqual(rows[0], "time_ns,header,message,since_previous_ns,top_zones")
        self.assertEqual(len(rows), 4)
        self.assertRegex(rows[1], r"^[0-9]+,start,,,slow [0-9]+; time.sleep [0-9]+")
        self.assertRegex(rows[2], r'^[0-9]+,phase,"two, with a comma",[0-9]+,')
        since = int(rows[2].split(",")[4])
        self.assertGreaterEqual(since, 40_000_000)  # two sleeps of 20 ms
        self.assertRegex(rows[3], r"^[0-9]+,end,,[0-9]+,")


@unittest.skipIf(sys.version_info < (3, 12), "sys.monitoring is the hook from Python 3.12 on")
class Monitoring(unittest.TestCase):
    def test_the_hook_is_sys_monitoring_under_an_id_no_standard_tool_claims(self):
        # 3: PROFILER_ID (2) stays cProfile's, DEBUGGER_ID and COVERAGE_ID
        # the debugger's and coverage's.
        script = write("tool.py", "import sys\nm = sys.monitoring\n"
                       "print(m.get_tool(3), m.get_tool(m.PROFILER_ID), sys.getprofile())\n")
        r = run("-o", os.path.join(WORK, "tool.tracy"), script)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout, "boardtrace None None\n")

    def test_a_taken_id_gives_the_next_free_one(self):
        script = write(
            "taken.py",
            textwrap.dedent(
                """
                import sys, boardtrace
                sys.monitoring.use_tool_id(3, "another tool")

                def inside(): pass

                with boardtrace.Profiler():
                    inside()
                print(sys.monitoring.get_tool(4))
                """
            ),
        )
        trace = os.path.join(WORK, "taken.tracy")
        r = run("-p", "-o", trace, script)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout, "boardtrace\n")
        self.assertEqual(zones(trace)[("MainThread", "inside")], 1)

    def test_no_free_tool_id_is_an_error_naming_their_users(self):
        script = write(
            "all-taken.py",
            "import sys, boardtrace\n"
            "for i in range(6):\n    sys.monitoring.use_tool_id(i, f'tool {i}')\n"
            "boardtrace.Profiler().enable()\n",
        )
        r = run("-p", "-o", os.path.join(WORK, "all-taken.tracy"), script)
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn("RuntimeError: boardtrace: sys.monitoring has no free tool id", r.stderr)
        self.assertIn("(5, 'tool 5')", r.stderr)

    def test_a_ctrl_c_while_a_thread_is_named_reaches_the_program(self):
        # The main thread is left unnamed (enable() runs on another), so its
        # next event reads its name from threading, in Python code, where
        # the SIGINT is taken: the KeyboardInterrupt must not be dropped.
        script = write(
            "interrupted-name.py",
            textwrap.dedent(
                """
                import os, signal, threading, boardtrace

                def interrupted_name(self):
                    os.kill(os.getpid(), signal.SIGINT)
                    return "MainThread"

                threading._MainThread.name = property(interrupted_name)
                t = threading.Thread(target=boardtrace.enable)
                t.start()
                t.join()
                print("the interrupt was lost", flush=True)
                """
            ),
        )
        r = subprocess.run(
            [sys.executable, script],
            env=dict(os.environ, PYTHONPATH=PYPATH, TRACY_ONLY_LOCALHOST="1",
                     TRACY_NO_BROADCAST="1"),
            cwd=WORK, capture_output=True, text=True, timeout=300,
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        self.assertNotIn("the interrupt was lost", r.stdout)
        self.assertIn("KeyboardInterrupt", r.stderr)
        self.assertEqual(r.returncode, -signal.SIGINT, r.stderr)


class TracyClient(unittest.TestCase):
    def test_upstreams_api_runs_unchanged(self):
        script = write(
            "client.py",
            textwrap.dedent(
                """
                import threading
                import tracy_client as tracy

                assert tracy.is_enabled()

                def worker():
                    tracy.thread_name("client-worker")
                    with tracy.ScopedZone(name="in-worker"):
                        pass

                t = threading.Thread(target=worker)
                t.start()
                t.join()
                assert tracy.app_info("app info line")
                assert tracy.message("plain")
                assert tracy.message("colored", 0xFF0000)
                assert tracy.program_name("client")
                pid = tracy.plot_config("client-plot", tracy.PlotFormatType.Number)
                for v in (1, 2.5, 3):
                    assert tracy.plot(pid, v)
                tracy.frame_mark()
                fid = tracy.frame_mark_start("client-frame")
                assert tracy.frame_mark_end(fid)
                assert tracy.frame_image(bytes(4 * 4 * 4), 4, 4)
                assert not tracy.frame_image(bytes(16), 2, 2)
                pool = tracy.alloc(1000, 64, name="client-pool")
                tracy.free(1000, id=pool)

                with tracy.ScopedZone(name="scoped", color=tracy.ColorType.Red) as z:
                    z.text("text")
                    z.color(tracy.Blue)
                    assert z.is_active

                @tracy.ScopedZoneDecorator(name="decorated")
                def decorated(n):
                    return decorated(n - 1) if n else 0

                decorated(2)
                with tracy.ScopedFrame("scoped-frame"):
                    pass

                @tracy.ScopedFrameDecorator("decorated-frame")
                def framed():
                    pass

                framed()
                """
            ),
        )
        trace = os.path.join(WORK, "client.tracy")
        r = run("-p", "-o", trace, script)
        self.assertEqual(r.returncode, 0, r.stderr)
        z = zones(trace)
        self.assertEqual(z[("client-worker", "in-worker")], 1)
        self.assertEqual(z[("MainThread", "scoped")], 1)
        self.assertEqual(z[("MainThread", "decorated")], 3)
        out = trace + ".json"
        with open(out) as f:
            events = json.load(f)["traceEvents"]
        texts = [e["name"] for e in events if e.get("ph") == "i"]
        self.assertIn("plain", texts)
        self.assertIn("colored", texts)
        points = [e for e in events if e.get("ph") == "C" and e.get("name") == "client-plot"]
        self.assertEqual([p["args"]["value"] for p in points], [1, 2.5, 3])
        s = subprocess.run([REPORT, "stats", trace], check=True, capture_output=True, text=True)
        self.assertEqual(s.returncode, 0)


def run_tracy(*args, env=None, python=None, cwd=WORK):
    """python -m tracy ARGS, as tt-metal's guide runs it."""
    return subprocess.run(
        [python or sys.executable, "-m", "tracy", *args],
        env=dict(os.environ, PYTHONPATH=PYPATH, BOARDTRACE_CAPTURE=CAPTURE, **(env or {})),
        cwd=cwd, capture_output=True, text=True, timeout=300)


def signpost_rows(trace):
    return subprocess.run([REPORT, "signposts", trace], check=True, capture_output=True,
                          text=True).stdout.splitlines()[1:]


def python_with_pytest():
    """An interpreter that has pytest and loads this extension: this one, or
    Debian's python3 of the same 3.X (the same extension ABI)."""
    for python in (sys.executable, "/usr/bin/python3"):
        probe = subprocess.run(
            [python, "-c", "import sys, pytest; print('%d.%d' % sys.version_info[:2])"],
            capture_output=True, text=True)
        if probe.returncode == 0 and probe.stdout.strip() == "%d.%d" % sys.version_info[:2]:
            return python
    return None


TT_METAL_SCRIPT = textwrap.dedent(
    """
    import sys
    from tracy import signpost
    from tracy import Profiler

    def warmup():
        return sum(range(10))

    def run_model(n):
        return [warmup() for _ in range(n)]

    def outside():
        pass

    signpost("start")
    outside()
    profiler = Profiler()
    profiler.enable()
    run_model(3)
    profiler.disable()
    outside()
    signpost(header="model", message="ran 3 times")
    print("model done", sys.argv[1:])
    """
)


class TtMetal(unittest.TestCase):
    def test_python_m_tracy_writes_tt_metals_file_with_the_signposts(self):
        script = write("tt_model.py", TT_METAL_SCRIPT)
        folder = os.path.join(WORK, "tt-out")
        r = run_tracy("-o", folder, script, "--batch", "2")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout, "model done ['--batch', '2']\n")
        trace = os.path.join(folder, "tracy_profile_log_host.tracy")
        rows = signpost_rows(trace)
        self.assertEqual([row.split(",")[1:3] for row in rows],
                         [["start", ""], ["model", "ran 3 times"]])
        z = zones(trace)
        self.assertEqual(z[("MainThread", "run_model")], 1)
        # Without -p the whole program is profiled until the Profiler's
        # disable(), as tt-metal's Profiler.disable() stops it.
        self.assertEqual(z[("MainThread", "outside")], 1)
        # tt-metal replaces its file at each run.
        r = run_tracy("-o", folder, script)
        self.assertEqual(r.returncode, 0, r.stderr)

    def test_p_profiles_only_between_the_profilers_enable_and_disable(self):
        script = write("tt_model.py", TT_METAL_SCRIPT)
        folder = os.path.join(WORK, "tt-partial")
        r = run_tracy("-p", "-o", folder, script)
        self.assertEqual(r.returncode, 0, r.stderr)
        z = zones(os.path.join(folder, "tracy_profile_log_host.tracy"))
        self.assertEqual(z[("MainThread", "run_model")], 1)
        self.assertEqual(z[("MainThread", "warmup")], 3)
        self.assertEqual(z[("MainThread", "outside")], 0)

    def test_p_l_profiles_the_lines_of_the_enabled_part(self):
        script = write("tt_lines.py", textwrap.dedent(
            """
            from tracy import Profiler

            def loop():
                total = 0
                for i in range(3):
                    total += i
                return total

            loop()
            p = Profiler()
            p.enable()
            loop()
            p.disable()
            """))
        folder = os.path.join(WORK, "tt-lines")
        r = run_tracy("-p", "-l", "-o", folder, script)
        self.assertEqual(r.returncode, 0, r.stderr)
        s = stats(os.path.join(folder, "tracy_profile_log_host.tracy"))
        self.assertEqual(s[("loop", 4)], 1)  # the enabled call only
        self.assertEqual(s[("loop", 6)], 4)  # the for line: 3 turns and the end

    def test_m_pytest_runs_a_test_module_under_the_profiler(self):
        python = python_with_pytest()
        if not python:
            self.skipTest("no pytest for this Python (apt-get install python3-pytest)")
        folder = os.path.join(WORK, "tt-pytest")
        tests = os.path.join(WORK, "pytests")
        os.makedirs(tests, exist_ok=True)
        with open(os.path.join(tests, "test_small.py"), "w") as f:
            f.write("from tracy import Profiler, signpost\n\n"
                    "def square(x):\n    return x * x\n\n"
                    "def test_square():\n    signpost('in the test')\n"
                    "    p = Profiler()\n    p.enable()\n    assert square(3) == 9\n"
                    "    p.disable()\n")
        # The guide's line: -p -l -m pytest (options end at the module).
        r = run_tracy("-p", "-l", "-o", folder, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                      "test_small.py", python=python, cwd=tests)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("1 passed", r.stdout)
        trace = os.path.join(folder, "tracy_profile_log_host.tracy")
        s = stats(trace)
        self.assertEqual(s[("square", 3)], 1)  # the call
        self.assertEqual(s[("square", 4)], 1)  # -l: its line
        self.assertEqual([row.split(",")[1] for row in signpost_rows(trace)], ["in the test"])

    def test_tt_metals_own_tracy_package_is_not_shadowed(self):
        # Theirs after ours on sys.path (ours on PYTHONPATH, theirs in
        # site-packages, say) and before it: either way theirs is imported
        # and theirs runs `python -m tracy`.
        theirs = os.path.join(WORK, "tt-metal-site")
        os.makedirs(os.path.join(theirs, "tracy"), exist_ok=True)
        with open(os.path.join(theirs, "tracy", "__init__.py"), "w") as f:
            f.write("WHOSE = 'tt-metal'\n")
        with open(os.path.join(theirs, "tracy", "__main__.py"), "w") as f:
            f.write("import sys, tracy\nprint('tt-metal main', tracy.WHOSE, sys.argv[1:])\n")
        for path in (PYPATH + ":" + theirs, theirs + ":" + PYPATH):
            env = dict(os.environ, PYTHONPATH=path)
            r = subprocess.run([sys.executable, "-c", "import tracy; print(tracy.WHOSE)"],
                               env=env, cwd=WORK, capture_output=True, text=True, timeout=60)
            self.assertEqual((r.returncode, r.stdout), (0, "tt-metal\n"), r.stderr)
            r = subprocess.run([sys.executable, "-m", "tracy", "-p", "x.py"],
                               env=env, cwd=WORK, capture_output=True, text=True, timeout=60)
            self.assertEqual(r.stdout, "tt-metal main tt-metal ['-p', 'x.py']\n", r.stderr)
        # Without theirs, ours.
        r = subprocess.run([sys.executable, "-c", "import tracy; print(tracy.Profiler.__module__)"],
                           env=dict(os.environ, PYTHONPATH=PYPATH), cwd=WORK,
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(r.stdout, "tracy\n", r.stderr)


class ProgramsOwnStreams(unittest.TestCase):
    def test_a_program_that_closes_stdout_exits_as_it_would_plainly(self):
        # json.tool closes its output when done; 853 KB of JSON.
        data = write("big.json", json.dumps([{"key": i, "text": "x" * 40} for i in range(14000)]))
        self.assertGreater(os.path.getsize(data), 800_000)
        plain = subprocess.run([sys.executable, "-m", "json.tool", data], capture_output=True,
                               text=True, timeout=300)
        r = run("-o", os.path.join(WORK, "json-tool.tracy"), "-m", "json.tool", data)
        self.assertEqual(r.returncode, plain.returncode, r.stderr)
        self.assertEqual(r.stdout, plain.stdout)


class FileVersion(unittest.TestCase):
    def test_the_capture_takes_its_file_version_from_the_environment(self):
        # A release no GUI has: the capture refuses it, naming the variable
        # (the valid ones are written: test_capture_cli).
        script = write("fv.py", "print('hi')\n")
        env = dict(os.environ, PYTHONPATH=PYPATH, BOARDTRACE_CAPTURE=CAPTURE,
                   BOARDTRACE_FILE_VERSION="9.9.9")
        r = subprocess.run([sys.executable, "-m", "boardtrace", "-o",
                            os.path.join(WORK, "fv.tracy"), script],
                           env=env, cwd=WORK, capture_output=True, text=True, timeout=300)
        self.assertEqual(r.returncode, 10, r.stderr)
        self.assertIn("BOARDTRACE_FILE_VERSION=9.9.9: expected one of", r.stderr)
        env["BOARDTRACE_FILE_VERSION"] = "0.11.2"
        r = subprocess.run([sys.executable, "-m", "boardtrace", "-o",
                            os.path.join(WORK, "fv.tracy"), script],
                           env=env, cwd=WORK, capture_output=True, text=True, timeout=300)
        self.assertEqual(r.returncode, 0, r.stderr)


class OutputFile(unittest.TestCase):
    """-o's file is checked before the program runs: the program leaves a
    mark when it does."""

    def marking_script(self, name):
        mark = os.path.join(WORK, name + ".ran")
        if os.path.exists(mark):
            os.unlink(mark)
        return write(name, f"open({mark!r}, 'w').close()\n"), mark

    def test_an_existing_file_is_replaced_only_with_f(self):
        script, mark = self.marking_script("existing.py")
        trace = write("existing.tracy", "an older trace\n")
        r = run("-o", trace, script)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn(f"-o {trace} exists: give -f to replace it", r.stderr)
        self.assertFalse(os.path.exists(mark))
        r = run("-o", trace, "-f", script)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue(os.path.exists(mark))
        with open(trace, "rb") as f:
            self.assertEqual(f.read(4), b"tr\xfdP")

    def test_the_script_itself_is_refused_even_with_f(self):
        script, mark = self.marking_script("victim.py")
        for args in (("-o", script, script), ("-o", script, "-f", script)):
            r = run(*args)
            self.assertEqual(r.returncode, 2, r.stderr)
            self.assertIn(f"-o {script} is the program's own file", r.stderr)
            self.assertFalse(os.path.exists(mark))
        with open(script) as f:
            self.assertIn(".ran", f.read())

    def test_a_folder_is_refused_before_the_program_runs(self):
        script, mark = self.marking_script("to-folder.py")
        folder = os.path.join(WORK, "a-folder")
        os.makedirs(folder, exist_ok=True)
        before = set(os.listdir(WORK))
        r = run("-o", folder, "-f", script)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn(f"-o {folder} is a folder", r.stderr)
        self.assertFalse(os.path.exists(mark))
        self.assertEqual(set(os.listdir(WORK)), before)  # no journal left


@unittest.skipIf(sys.version_info >= (3, 12), "from 3.12 the program's profiler runs beside ours")
class OneProfileFunction(unittest.TestCase):
    def test_the_programs_own_profiler_is_a_gap_said_once_and_marked(self):
        script = write("own-profilers.py", textwrap.dedent(
            """
            import cProfile, sys

            def inside(): pass
            def after(): pass

            for _ in range(2):
                p = cProfile.Profile()
                p.enable()
                inside()
                p.disable()
            sys.setprofile(lambda *a: None)
            inside()
            sys.setprofile(None)
            after()
            """))
        trace = os.path.join(WORK, "own-profilers.tracy")
        r = run("-o", trace, script)
        self.assertEqual(r.returncode, 0, r.stderr)
        said = [l for l in r.stderr.splitlines() if "profile function" in l]
        self.assertEqual(len(said), 1, r.stderr)
        self.assertIn("boardtrace: cProfile took Python's profile function", said[0])
        z = zones(trace)
        self.assertEqual(z[("MainThread", "inside")], 0)
        self.assertEqual(z[("MainThread", "after")], 1)
        with open(trace + ".json") as f:
            texts = [e["name"] for e in json.load(f)["traceEvents"] if e.get("ph") == "i"]
        self.assertEqual([t.split(":")[1].strip() for t in texts if "profiling" in t],
                         ["profiling paused", "profiling resumed"] * 3)


CORPUS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")

# Each corpus script: (arguments after the script, or ("-m", MODULE, ...) to
# run a module from the corpus folder), and zones the -o trace must hold
# ((thread, zone) -> count; None: only where the interpreter allows).
CASES = {
    "fork_exit.py": ((), {("MainThread", "<module>"): 1}),
    "fork_with_thread.py": ((), {}),
    "thread_after_main.py": ((), {("late-worker", "z"): 50, ("late-worker", "work"): 1}),
    "atexit_calls.py": ((), {("MainThread", "y"): 7, ("MainThread", "at_exit"): 1}),
    "own_cprofile.py": ((), {("MainThread", "after"): 4,
                             ("MainThread", "f"): 3 if sys.version_info >= (3, 12) else 0}),
    "own_profile.py": ((), {("MainThread", "after"): 4,
                            ("MainThread", "g"): 3 if sys.version_info >= (3, 12) else 0}),
    "own_setprofile.py": ((), {("MainThread", "after"): 4,
                               ("MainThread", "h"): 2 if sys.version_info >= (3, 12) else 0}),
    "closed_stderr.py": ((), {}),
    "closed_stdout.py": ((), {}),
    "exception.py": ((), {("MainThread", "inner"): 1, ("MainThread", "middle"): 1}),
    "recursion.py": ((), {}),
    "exit_code.py": ((), {}),
    "exit_message.py": ((), {}),
    "signal_term.py": ((), None),  # killed: the runtime's last events die with it
    "signal_int.py": ((), {("MainThread", "wait_for_it"): 1}),
    "signal_handler.py": ((), {("MainThread", "on_usr1"): 1}),
    "writes_files.py": (("a", "-b"), {}),
    "corpus_module": (("-m", "corpus_module", "x", "-y"), {}),
    "corpus_module --fail": (("-m", "corpus_module", "--fail"), {}),
}


def corpus_argv(name):
    args = CASES[name][0]
    return list(args) if args[:1] == ("-m",) else [os.path.join(CORPUS, name), *args]


def ours_only(stderr):
    """stderr without boardtrace's own lines (and its capture's), pids as N
    (os.fork's warning names the process)."""
    import re

    lines = [l for l in stderr.splitlines(True)
             if not l.startswith(("boardtrace: ", "boardtrace-capture: "))]
    return re.sub(r"pid=[0-9]+", "pid=N", "".join(lines))


def files_in(folder):
    out = {}
    for name in sorted(os.listdir(folder)):
        with open(os.path.join(folder, name), "rb") as f:
            out[name] = f.read()
    return out


def corpus_run(argv, env, timeout=120):
    folder = tempfile.mkdtemp(dir=WORK, prefix="run-")
    r = subprocess.run(argv, env=env, cwd=folder, capture_output=True, text=True,
                       timeout=timeout)
    return r, files_in(folder)


def free_port():
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Corpus(unittest.TestCase):
    """Each corpus script run plainly (python3 SCRIPT) and under python3 -m
    boardtrace, with -o and without it (a capture connected on TRACY_PORT):
    the same stdout, stderr (boardtrace's own lines aside), exit status and
    files; and the -o trace holds the calls."""

    table = []

    @classmethod
    def tearDownClass(cls):
        print(f"\ncorpus on Python {sys.version.split()[0]} (plain / -o / capture on "
              "TRACY_PORT): exit statuses, = where stdout, stderr and files match plain's",
              file=sys.stderr)
        for row in cls.table:
            print("  " + row, file=sys.stderr)

    def test_each_script_behaves_as_under_plain_python(self):
        plain_env = dict(os.environ, PYTHONPATH=CORPUS)
        ours_env = dict(os.environ, PYTHONPATH=PYPATH + os.pathsep + CORPUS,
                        BOARDTRACE_CAPTURE=CAPTURE)
        for name in CASES:
            with self.subTest(script=name):
                argv = corpus_argv(name)
                plain, plain_files = corpus_run([sys.executable, *argv], plain_env)
                trace = os.path.join(WORK, "corpus-" + name.replace(" ", "_") + ".tracy")
                with_o, o_files = corpus_run(
                    [sys.executable, "-m", "boardtrace", "-o", trace, "-f", *argv], ours_env)
                port = free_port()
                connected = os.path.join(WORK, "corpus-port-" + name.replace(" ", "_") + ".tracy")
                capture = subprocess.Popen(
                    [CAPTURE, "-o", connected, "-f", "-a", "127.0.0.1", "-p", str(port),
                     "--connect-timeout", "60"], stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL)
                no_o, no_o_files = corpus_run(
                    [sys.executable, "-m", "boardtrace", *argv],
                    dict(ours_env, TRACY_PORT=str(port), TRACY_ONLY_LOCALHOST="1",
                         TRACY_NO_BROADCAST="1"))
                capture.wait(timeout=120)
                marks = []
                for r, files in ((with_o, o_files), (no_o, no_o_files)):
                    same = (r.stdout == plain.stdout and ours_only(r.stderr) ==
                            ours_only(plain.stderr) and files == plain_files
                            and r.returncode == plain.returncode)
                    marks.append(f"{r.returncode}{'=' if same else ' DIFFERS'}")
                Corpus.table.append(f"{name:24} {plain.returncode:4}  " + "  ".join(marks))
                for r, files, how in ((with_o, o_files, "-o"), (no_o, no_o_files, "no -o")):
                    self.assertEqual(r.returncode, plain.returncode, f"{how}: {r.stderr}")
                    self.assertEqual(r.stdout, plain.stdout, how)
                    self.assertEqual(ours_only(r.stderr), ours_only(plain.stderr), how)
                    self.assertEqual(files, plain_files, how)
                expect = CASES[name][1]
                if expect is not None:
                    self.assertIn(f"boardtrace: trace written to {trace}", with_o.stderr)
                    z = zones(trace)
                    for key, count in expect.items():
                        self.assertEqual(z[key], count, key)


if __name__ == "__main__":
    unittest.main(verbosity=2)
