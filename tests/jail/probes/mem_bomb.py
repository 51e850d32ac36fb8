"""Probe: allocate and touch memory until `bytes` (default 1 GiB) are held, in `chunk` steps;
once `hold_at` bytes are held (default: never), pause `hold` seconds first (so that a test can
make another call while the bomb is under way). "escaped" means all of it was allocated.
Contained: the jail ends the call (-32003, "memory limit exceeded"). MemoryError is deliberately
not caught."""
import json
import sys
import time


def main(inp):
    target = int(inp.get("bytes", 1 << 30))
    chunk = int(inp.get("chunk", 16 << 20))
    hold_at = int(inp.get("hold_at", 0))
    hold = float(inp.get("hold", 0))
    held = []
    total = 0
    while total < target:
        held.append(b"\x01" * chunk)  # written, so the pages are really there
        total += chunk
        if hold_at and total >= hold_at:
            time.sleep(hold)
            hold_at = 0
    return {"escaped": True, "detail": f"held {total >> 20} MiB"}


if __name__ == "__main__":
    print(json.dumps(main(json.loads(sys.stdin.read() or "null") or {})))
