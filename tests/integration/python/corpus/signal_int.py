# A SIGINT: KeyboardInterrupt, its traceback, death by SIGINT.
import os
import signal


def wait_for_it():
    os.kill(os.getpid(), signal.SIGINT)
    signal.pause()


wait_for_it()
