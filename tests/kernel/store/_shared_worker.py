"""A process with its own store (and pool) appending to sessions shared with other processes.

``python -m tests.kernel.store._shared_worker URL TAG COUNT SID[,SID...]`` appends
COUNT messages ``TAG-<i>`` round-robin over the given sessions, one transaction
each; ``TAG`` ``search`` instead searches until COUNT seconds have passed.
Opens the store through config (``HERMES_STORE_URL``) like hermes does.
"""

from __future__ import annotations

import json
import sys
import time


def main(argv: list[str]) -> int:
    url, tag, count, sessions = argv[0], argv[1], int(argv[2]), argv[3].split(",")
    from hermes.kernel.config import Config
    from hermes.kernel.store import open_store

    store = open_store(Config({"store": {"backend": "sqlite", "url": url, "pool_size": 2}}), None)
    done = 0
    try:
        if tag == "search":
            stop = time.monotonic() + count
            while time.monotonic() < stop:
                assert isinstance(store.search("shared OR worker", limit=10), list)
                store.search("w1-*", limit=5, sort="time")
                done += 1
        else:
            for i in range(count):
                store.append_message(sessions[i % len(sessions)], {"role": "user", "content": f"{tag}-{i} shared worker"})
                done += 1
    finally:
        store.close()
    print(json.dumps({"done": done}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
