"""What a test of collectives.dist checks is left behind: child processes, and processes
that inherited a marked environment (Linux /proc)."""

from pathlib import Path


def children():
    """Processes this test process has started and not yet reaped (Linux)."""
    found = set()
    for path in Path("/proc/self/task").glob("*/children"):
        found.update(int(pid) for pid in path.read_text().split())
    return found


def marked(mark):
    """Live processes whose environment holds ``mark`` (grandchildren included)."""
    found = []
    for environ in Path("/proc").glob("[0-9]*/environ"):
        try:
            if mark.encode() in environ.read_bytes():
                found.append(int(environ.parent.name))
        except OSError:
            continue
    return found
