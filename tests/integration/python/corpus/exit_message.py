import sys

sys.exit("a message for stderr")
