# Closes fd 2 and exits 4.
import os
import sys

print("closing stderr", flush=True)
os.close(2)
sys.exit(4)
