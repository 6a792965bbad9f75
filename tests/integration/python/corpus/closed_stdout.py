# Closes its stdout, then exits normally.
import sys

print("last line")
sys.stdout.close()
