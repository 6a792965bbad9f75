# An uncaught exception three frames deep: python's traceback, status 1.
def inner():
    raise ValueError("from inner")


def middle():
    inner()


middle()
