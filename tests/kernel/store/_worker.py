"""A separate process that writes to (and searches) a store, for the multi-process tests.

``python -m tests.kernel.store._worker DB TAG COUNT ACK [--search-every K]``
appends COUNT messages (``TAG-<i> ...``; COUNT 0 means until killed) to a new
session, each in its own transaction, and writes ``i`` to the ACK file after
each commit, so a test that kills it knows exactly what was committed.
"""

from __future__ import annotations

import sys
import traceback
from hermes.kernel.store import SQLiteSessionStore


def main(argv: list[str]) -> int:
    db, tag, count, ack = argv[0], argv[1], int(argv[2]), argv[3]
    search_every = int(argv[5]) if len(argv) > 5 and argv[4] == "--search-every" else 0

    try:
        store = SQLiteSessionStore(db)
        sid = store.create_session(source="worker", title=None)
        with open(ack, "a", buffering=1, encoding="utf-8") as out:
            out.write(f"session {sid}\n")
            i = 0
            while count == 0 or i < count:
                store.append_message(sid, {"role": "user", "content": f"{tag}-{i} concurrent worker message"})
                out.write(f"{i}\n")  # line-buffered: reaches the OS right after the commit
                if search_every and i % search_every == 0:
                    store.search("concurrent worker", limit=5)
                    store.search(f"{tag}-{i}", limit=5)
                i += 1
        store.close()
    except BaseException:
        traceback.print_exc()
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
