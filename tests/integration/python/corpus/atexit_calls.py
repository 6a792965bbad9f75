# Calls made by atexit handlers, after the script's last line.
import atexit


def y():
    pass


def at_exit():
    for _ in range(7):
        y()
    print("at exit")


atexit.register(at_exit)
print("main done")
