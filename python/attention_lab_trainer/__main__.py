"""Runs the trainer: `python3 path/to/attention_lab_trainer --run-dir DIR`, or torchrun with the
same folder as its script (train.py's docstring has the flags).

Run as a folder, Python puts the folder itself first on `sys.path`; it is replaced by the
folder above, so the modules are imported as this package (their relative imports work) and
none of their plain names (`data`, `model`, …) can shadow another package's.
"""

import os
import sys

if not __package__:
    _here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != _here]
    sys.path.insert(0, os.path.dirname(_here))

from attention_lab_trainer.train import run  # noqa: E402

run(sys.argv[1:])
