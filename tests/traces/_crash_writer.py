"""Writes sessions forever through a TraceWriter until killed: ``python _crash_writer.py DB RUN_ID FIRST_INDEX``.

Used by test_crash_safety.py, which SIGKILLs it mid-run. Prints ``ready`` once its run exists.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _support import make_session  # noqa: E402

from proofgym.traces import TraceStore, TraceWriter  # noqa: E402


def main() -> None:
    path, run_id, first = sys.argv[1], sys.argv[2], int(sys.argv[3])
    store = TraceStore(path)
    store.start_run(run_id, kind="crash-test")
    print("ready", flush=True)
    writer = TraceWriter(store, max_batch=8, max_delay_s=0.002, max_pending=64)
    i = first
    while True:
        writer.submit(make_session(i, run_id, prefix="c"))
        i += 1


if __name__ == "__main__":
    main()
