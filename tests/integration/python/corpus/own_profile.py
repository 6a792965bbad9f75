# The pure-Python profile module, and the ways it is run.
import profile
import pstats


def g():
    return 1


def after():
    pass


p = profile.Profile()
p.runcall(g)
p.runctx("g(); g()", globals(), locals())
for _ in range(4):
    after()
calls = {k[2]: v[0] for k, v in pstats.Stats(p).stats.items()}
print("g", calls.get("g"))
