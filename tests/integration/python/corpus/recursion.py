# The recursion budget: the depth where RecursionError comes.
import sys


def down(n):
    try:
        return down(n + 1)
    except RecursionError:
        return n


print("limit", sys.getrecursionlimit(), "depth", down(0))
