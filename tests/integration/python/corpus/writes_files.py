# Files the program writes in its folder.
import sys

with open("written.txt", "w") as f:
    f.write("argv " + " ".join(sys.argv[1:]) + "\n")
print("wrote")
