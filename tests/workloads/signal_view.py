"""What a program sees of SIGUSR2, the signal `profwrap start|stop` uses: its disposition (the default),
what setting its own handler returns, that handler run by a SIGUSR2, and what SIG_DFL set again returns."""
import os
import signal
import time

print("getsignal:", signal.getsignal(signal.SIGUSR2))
got = []
print("previous:", signal.signal(signal.SIGUSR2, lambda s, f: got.append(s)))
os.kill(os.getpid(), signal.SIGUSR2)
deadline = time.monotonic() + 5
while not got and time.monotonic() < deadline:
    time.sleep(0.01)
print("handled:", got)
print("previous:", signal.signal(signal.SIGUSR2, signal.SIG_DFL) is not None)
print("getsignal:", signal.getsignal(signal.SIGUSR2))
