"""Attention Lab's PyTorch engine: the trainer `attention-lab train --engine pytorch` runs.

One module per job:

| module        | job                                                                        |
|---------------|----------------------------------------------------------------------------|
| `__main__.py` | the entry: `python3 attention_lab_trainer …` or torchrun of the same folder |
| `train.py`    | the training loop, DDP, validation, snapshots, exit codes                  |
| `model.py`    | the two models (encoder-decoder, decoder-only) under our state-dict names   |
| `startup.py`  | arguments, processes (torchrun's ranks, devices) and the manifest          |
| `data.py`     | our seeded batch samplers over the lab's token files                       |
| `rng.py`      | the seeded random streams our engine draws from                            |
| `schedule.py` | our learning-rate schedules                                                |
| `state.py`    | the optimizer and the checkpoints                                          |
| `muon.py`     | Muon for the hidden matrices, beside torch's AdamW                         |
| `files.py`    | our run-folder formats (safetensors with torch alone, run.json, metrics)   |
| `disk.py`     | what a full disk does                                                      |
| `control.py`  | stop and pause requests                                                    |
| `probe.py`    | what a Python's torch offers (run alone, before anything is prepared)      |

Needs torch >= 1.13 and nothing else. The lab copies this folder whole into each run folder
it trains (`pytorch/trainer/attention_lab_trainer/`), so the folder trains on any machine with
torch, with the trainer that matches its manifest.
"""
