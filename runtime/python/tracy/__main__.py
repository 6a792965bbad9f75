"""python -m tracy [-p] [-l] [-o FOLDER] [-m module | scriptfile] [arg] ...

tt-metal's command line (its Tracy guide's), carried out by `python3 -m
boardtrace`: the program's Python calls become Tracy zones, captured into
FOLDER/tracy_profile_log_host.tracy (tt-metal's file name; FOLDER by default
$TT_METAL_HOME/generated/profiler/.logs, or generated/profiler/.logs here
without TT_METAL_HOME), replaced at each run as tt-metal does.

  -m          the first argument is a module to run, as python -m does
  -p          profile only between Profiler().enable() and .disable()
  -l          a zone per executed line too
  -o FOLDER   where the trace goes

tt-metal's device options (-r, -v, --no-device, -n, -t, --no-op-info-cache,
--child-functions) are taken and have no effect: there is no device here.
"""

import optparse
import os
import sys

FILE_NAME = "tracy_profile_log_host.tracy"


def parser():
    p = optparse.OptionParser(usage="python -m tracy [-m module | scriptfile] [arg] ...",
                              add_help_option=True)
    # Options end at the script or module: what follows is the program's.
    p.allow_interspersed_args = False
    p.add_option("-m", dest="module", action="store_true", default=False,
                 help="Profile a library module.")
    p.add_option("-p", dest="partial", action="store_true", default=False,
                 help="Only profile between Profiler().enable() and .disable()")
    p.add_option("-l", dest="lines", action="store_true", default=False,
                 help="Profile every line of python code")
    p.add_option("-o", "--output-folder", dest="output_folder", type="string",
                 help="Folder for tracy_profile_log_host.tracy")
    for flags in (("-r",), ("-v",), ("--no-op-info-cache",)):
        p.add_option(*flags, action="store_true", help="tt-metal's; no effect here")
    p.add_option("--no-device", dest="device", action="store_false", default=True,
                 help="tt-metal's; no effect here (there is no device)")
    for flags in (("-n", "--name-append"), ("-t", "--port"), ("--child-functions",)):
        p.add_option(*flags, type="string", help="tt-metal's; no effect here")
    return p


def main(argv=None):
    opts, args = parser().parse_args(sys.argv[1:] if argv is None else argv)
    if not args:
        parser().print_usage(sys.stderr)
        print("tracy: a script or -m module is required", file=sys.stderr)
        sys.exit(2)
    folder = opts.output_folder
    if not folder:
        folder = os.path.join(os.environ.get("TT_METAL_HOME", "."), "generated", "profiler", ".logs")
    try:
        os.makedirs(folder, exist_ok=True)
    except OSError as e:
        print(f"tracy: -o {folder}: cannot make the folder: {e.strerror}", file=sys.stderr)
        sys.exit(2)
    theirs = ["-o", os.path.join(folder, FILE_NAME), "-f"]
    if opts.partial:
        theirs.append("-p")
    if opts.lines:
        theirs.append("-l")
    if opts.module:
        theirs.append("-m")
    elif args[0].startswith("-"):
        theirs.append("--")
    from boardtrace import __main__ as boardtrace_main

    boardtrace_main.main(theirs + args)


if __name__ == "__main__":
    main()
