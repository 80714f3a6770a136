"""py_stacks: Python functions that make slow calls at known lines, so that the Python frames profwrap adds to
call stacks have one right answer. Every line a stack must point at carries a marker comment of the form
"@name" (a hash, a space, an at sign, the name, at the end of the line); tests/integration/test_stacks.py reads
the line numbers from this file.

    python3 py_stacks.py main N_STEP N_HELD
        main(): warm_up() (time.sleep(0.003)), then step() N_STEP times (time.sleep(0.003): the GIL
        released, the frames come later, deferred), then held() N_HELD times (ctypes.PyDLL(None).usleep(3000):
        libc's usleep through ctypes with the GIL held, the frames read at once).
    python3 py_stacks.py thread N_STEP N_HELD N_MAIN
        A second thread runs step() N_STEP times and held() N_HELD times while the main thread runs
        main_sleep() (time.sleep(0.003)) N_MAIN times. Before that each thread calls warm_up(), and the main
        thread runs Python (a busy wait, another warm_up()) until the worker's warm_up() is over: profwrap
        installs its profile hook (which the deferred frames need) only once a call has needed Python frames,
        on the threads there are then, from the main thread when it next runs Python (Py_AddPendingCall).
    python3 py_stacks.py join N_STEP N_HELD
        A second thread runs step() N_STEP times and held() N_HELD times, with no warm-up; the main thread
        starts it and waits in Thread.join() (a data loader's pattern: the main thread runs no Python
        meanwhile).

Prints one line of JSON to stdout, its ground truth: the counts of each function's calls, "pid", and the
native thread id ("tid", from threading.get_native_id()) of the thread that ran step/held and of the main
thread."""
import ctypes
import json
import os
import sys
import threading
import time

SLEEP_S = 0.003
USLEEP_US = 3000
# The program's own symbols (usleep is found through the global scope: the preload's when profiled).
LIBC = ctypes.PyDLL(None)
LIBC.usleep.argtypes = [ctypes.c_uint]


def step():
    time.sleep(SLEEP_S)  # @py_step


def held():
    LIBC.usleep(USLEEP_US)  # @py_held


def main_sleep():
    time.sleep(SLEEP_S)  # @py_main_sleep


def warm_up():
    time.sleep(SLEEP_S)  # @py_warm_up


def run_calls(n_step, n_held):
    for _ in range(n_step):
        step()
    for _ in range(n_held):
        held()
    return threading.get_native_id()


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "main":
        n_step, n_held = int(sys.argv[2]), int(sys.argv[3])
        warm_up()
        tid = run_calls(n_step, n_held)
        truth = {"mode": "main", "step": n_step, "held": n_held, "main_sleep": 0, "pid": os.getpid(),
                 "tid": tid, "main_tid": tid}
    elif len(sys.argv) == 5 and sys.argv[1] == "thread":
        n_step, n_held, n_main = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
        warmed, go = threading.Event(), threading.Event()
        got = {}

        def worker():
            warm_up()
            warmed.set()
            go.wait()
            got["tid"] = run_calls(n_step, n_held)

        t = threading.Thread(target=worker, name="worker")
        t.start()
        warm_up()
        while not warmed.is_set():  # running Python meanwhile (see the module's comment)
            pass
        warm_up()
        go.set()
        for _ in range(n_main):
            main_sleep()
        t.join()
        truth = {"mode": "thread", "step": n_step, "held": n_held, "main_sleep": n_main, "pid": os.getpid(),
                 "tid": got["tid"], "main_tid": threading.get_native_id()}
    elif len(sys.argv) == 4 and sys.argv[1] == "join":
        n_step, n_held = int(sys.argv[2]), int(sys.argv[3])
        got = {}
        t = threading.Thread(target=lambda: got.update(tid=run_calls(n_step, n_held)), name="worker")
        t.start()
        t.join()
        truth = {"mode": "join", "step": n_step, "held": n_held, "main_sleep": 0, "pid": os.getpid(),
                 "tid": got["tid"], "main_tid": threading.get_native_id()}
    else:
        sys.stderr.write("usage: py_stacks.py main N_STEP N_HELD | thread N_STEP N_HELD N_MAIN | join N_STEP N_HELD\n")
        sys.exit(2)
    # profwrap's profile hook on the threads threading starts: set only where frames are not read directly
    truth["profile_hook"] = getattr(threading, "_profile_hook", None) is not None
    print(json.dumps(truth))


if __name__ == "__main__":
    main()
