# A child made with os.fork() that ends with sys.exit(): it exits, and the
# parent gets its status.
import os
import sys

pid = os.fork()
if pid == 0:
    print("child", flush=True)
    sys.exit(3)
_, status = os.waitpid(pid, 0)
print("child exited with", os.waitstatus_to_exitcode(status))
