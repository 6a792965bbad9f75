# sys.setprofile with a tracer of the script's own, then released.
import sys

seen = []


def tracer(frame, event, arg):
    if event == "call":
        seen.append(frame.f_code.co_name)


def h():
    pass


def after():
    pass


sys.setprofile(tracer)
h()
h()
sys.setprofile(None)
for _ in range(4):
    after()
print(seen, sys.getprofile())
