# A non-daemon thread still working after the script's last line: python
# waits for it, and its calls are the program's like any other.
import threading

go = threading.Event()


def z():
    pass


def work():
    go.wait()
    for _ in range(50):
        z()
    print("worker done")


threading.Thread(target=work, name="late-worker").start()
print("main done", flush=True)
go.set()
