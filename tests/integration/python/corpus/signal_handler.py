# A handler of the script's own.
import os
import signal

got = []


def on_usr1(sig, frame):
    got.append(sig)


signal.signal(signal.SIGUSR1, on_usr1)
os.kill(os.getpid(), signal.SIGUSR1)
print("handled", got == [signal.SIGUSR1])
