# A script with its own cProfile around a function; then more calls.
import cProfile
import pstats


def f():
    return sum(range(10))


def after():
    pass


p = cProfile.Profile()
p.enable()
for _ in range(3):
    f()
p.disable()
for _ in range(4):
    after()
calls = {k[2]: v[0] for k, v in pstats.Stats(p).stats.items()}
print("f", calls.get("f"), "after", calls.get("after"))
