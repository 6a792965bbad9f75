# Run as a module (-m corpus_module): argv[0] is its file, and an error's
# traceback goes through runpy as python3 -m's does.
import sys

print("module", __name__, sys.argv[1:])
if "--fail" in sys.argv:
    raise RuntimeError("asked to")
