"""Probe: an infinite loop in the handler and in a child it forks (both spin; the child would
outlive a kill of the handler alone). Bounded by `seconds` (default 30) so that an unconfined run
ends too. Contained: the call ends with -32002 soon after maxExecutionTime and neither process is
left (checked from outside)."""
import json
import os
import sys
import time


def spin(seconds):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        pass


def main(inp):
    seconds = float(inp.get("seconds", 30))
    if os.fork() == 0:
        try:
            spin(seconds)
        finally:
            os._exit(0)
    spin(seconds)
    return {"escaped": True, "detail": f"looped for {seconds} s without being stopped"}


if __name__ == "__main__":
    print(json.dumps(main(json.loads(sys.stdin.read() or "null") or {})))
