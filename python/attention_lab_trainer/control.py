"""Stop and pause for the PyTorch trainer, as our engine's SessionControl: asked for between
steps, acted on at the next step boundary, by every process at the same step.

Ways to ask: SIGINT or SIGTERM (Ctrl-C, a scheduler's cancel), the files `stop` and `pause`
in the run folder's `pytorch/` (the lab writes them; `touch RUN/pytorch/stop` works by hand),
and, with --stop-on-stdin-eof (the lab's launches only), the end of standard input: the lab
holds a pipe open to the trainer, so a lab that goes away (a closed editor, a killed CLI)
stops its run with a checkpoint instead of leaving it training unwatched. A run stopped only
because its lab went away is `unwatched`: train.py then leaves run.json saying "training"
at that checkpoint, so the next lab shows it interrupted and offers Resume, as after a reload
during a run of our engine.

Each step, the processes agree through one all-reduce (max) of three flags — stop, pause, and
rank 0's writes found the disk full — so a file seen by one rank a moment before another still
stops or pauses all of them after the same step, and a full disk stops them all.
Left out: what stopping does (train.py checkpoints and exits; disk.py for a full disk).
"""

import os
import signal
import sys
import threading
import time

import torch
import torch.distributed as dist


class Control:
    """The stop and pause requests of this process, agreed among all processes by `poll`."""

    def __init__(self, folder, rank, world, device, watch_stdin):
        self.folder, self.rank, self.world, self.device = folder, rank, world, device
        self.stop_asked = False
        self.signalled = False
        self.lab_gone = False
        self.unwatched = False
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, self._on_signal)
        if watch_stdin:
            threading.Thread(target=self._watch_stdin, daemon=True).start()

    def _on_signal(self, signum, frame):
        self.signalled = True
        self.stop_asked = True

    def _watch_stdin(self):
        # The raw descriptor, not sys.stdin: a daemon thread blocked inside a buffered reader
        # makes the interpreter abort at exit ("could not acquire lock ... at shutdown").
        try:
            while os.read(sys.stdin.fileno(), 4096):
                pass
        except (OSError, ValueError):
            pass
        self.lab_gone = True
        self.stop_asked = True

    def _file(self, name):
        return os.path.join(self.folder, name)

    def _agreed(self, flags):
        """Each flag set if any process set it."""
        if self.world > 1:
            t = torch.tensor(flags, device=self.device)
            dist.all_reduce(t, op=dist.ReduceOp.MAX)
            flags = t.tolist()
        return [f > 0 for f in flags]

    def poll(self, full=False):
        """(stop, pause) as all processes agree on them now; `full`: this process's writes found the disk full
        (a stop)."""
        stop, pause, full = self._agreed(
            [
                1.0 if self.stop_asked or os.path.exists(self._file("stop")) else 0.0,
                1.0 if os.path.exists(self._file("pause")) else 0.0,
                1.0 if full else 0.0,
            ]
        )
        return stop or full, pause

    def agree(self, flag):
        """Whether any process has `flag` set (every process calls it at the same point)."""
        return self._agreed([1.0 if flag else 0.0])[0]

    def wait_while_paused(self, on_pause, on_resume, full=lambda: False):
        """Returns True to go on training, False to stop; calls on_pause/on_resume around a pause
        (`full()`: whether this process's writes have found the disk full since)."""
        paused = False
        while True:
            stop, pause = self.poll(full())
            if stop:
                return False
            if not pause:
                if paused:
                    on_resume()
                return True
            if not paused:
                on_pause()
                paused = True
            time.sleep(0.2)

    def consume_stop(self):
        """Removes the stop file once acted on, so resuming the run later does not stop at once; notes
        whether the lab going away was the only reason to stop (`unwatched`)."""
        self.unwatched = self.lab_gone and not self.signalled and not os.path.exists(self._file("stop"))
        if self.rank == 0:
            try:
                os.remove(self._file("stop"))
            except FileNotFoundError:
                pass
