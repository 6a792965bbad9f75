# Killed by a signal with its default action.
import os
import signal

print("about to die", flush=True)
os.kill(os.getpid(), signal.SIGTERM)
