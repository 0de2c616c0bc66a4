"""The ``pagelab`` console script of the wheel: the Rust command line, run in-process."""

import signal
import sys


def main() -> None:
    import os

    from . import _pagelab

    # `pagelab trace-stats --plot` draws with this interpreter, which has the package.
    os.environ.setdefault("PAGELAB_PYTHON", sys.executable)

    # Ctrl-C and a closed pipe end the command as they end the native binary, instead of
    # waiting for Python's handlers, which cannot run while the simulation holds the thread.
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    if hasattr(signal, "SIGPIPE"):
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    sys.stdout.flush()
    sys.exit(_pagelab.cli_main(["pagelab", *sys.argv[1:]]))


if __name__ == "__main__":
    main()
