# The shared producer of `updates`: a first snapshot, then nothing of its own (the items come
# from bump's ctx.publish) until the last subscriber leaves.
import sys
import time

print('{"round": 0}', flush=True)
while True:
    time.sleep(3600)
