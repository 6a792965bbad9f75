# os.fork() while a thread of the program's runs: python 3.12 and later warn
# (DeprecationWarning), as they should; the profiler's own threads must not
# change whether they do.
import os
import threading

stop = threading.Event()
t = threading.Thread(target=stop.wait)
t.start()
pid = os.fork()
if pid == 0:
    os._exit(0)
os.waitpid(pid, 0)
stop.set()
t.join()
print("forked beside a thread")
