"""The run folder's files as the PyTorch trainer reads and writes them, in exactly our formats
(src/lab/runs/runFolder.ts, checkpoint.ts), so a run moves between engines through them:

- model.safetensors: every parameter under our names (nanoGPT's fused `c_attn` split into
  `c_attn_q/k/v`), F32, metadata {format, version, step, kind: model, config};
- optimizer.safetensors: Adam's moments as two flat F32 vectors `adam.m`, `adam.v` over the
  parameters in our order (the manifest's `params`), metadata adds optimizerStep, optimizer;
- metrics.jsonl: one JSON object per line, appended in one piece (non-finite numbers as null);
- run.json: patched field by field, rewritten atomically (temporary file, fsync, rename).

A full disk loses nothing, as in atomicFile.ts: a failed write removes its temporary files
and leaves the old files as they were, a failed append cuts the log back to where it was (and
an append after a torn last line starts a new line), and the failure surfaces as DiskFull,
naming the file (disk.py says what was being saved and stops the run).

Safetensors is written and read with struct, json and torch alone (no numpy: a CUDA machine's
torch may come without it). Little-endian hosts only, as the format's raw bytes are.
Left out: tokenizers and snapshots (the lab reads checkpoints and draws attention itself).
"""

import ctypes
import errno
import json
import math
import os
import struct
import sys
from datetime import datetime, timezone

import torch

CHECKPOINT_FORMAT, CHECKPOINT_VERSION = "attention-lab-checkpoint", "1"
F32 = "F32"

if sys.byteorder != "little":
    raise SystemExit("attention-lab trainer: a big-endian machine cannot read the run folder's little-endian files.")


class DiskFull(Exception):
    """A write that found the disk (or the quota) full; nothing half-written was left."""

    def __init__(self, file):
        super().__init__(f"disk full while writing {file}")
        self.file = file


def _no_space(e):
    return isinstance(e, OSError) and e.errno in (errno.ENOSPC, errno.EDQUOT)


def _tmp(path):
    return os.path.join(os.path.dirname(path), f".{os.path.basename(path)}.{os.getpid()}.tmp")


def write_files_atomic(files):
    """[(path, bytes)]: every file written and flushed first, then renamed into place (atomicFile.ts).

    A failed write removes every temporary file and replaces nothing; a full disk raises DiskFull."""
    temps, current = [], files[0][0] if files else ""
    try:
        for path, data in files:
            current, tmp = path, _tmp(path)
            temps.append((tmp, path))
            with open(tmp, "wb") as f:  # write() of a binary file writes every byte or raises
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
        for tmp, path in temps:
            current = path
            os.replace(tmp, path)
    except BaseException as e:
        for tmp, _ in temps:
            try:
                os.remove(tmp)
            except OSError:
                pass  # already renamed, or never created
        if _no_space(e):
            raise DiskFull(current) from e
        raise
    for d in {os.path.dirname(p) for p, _ in files}:
        try:
            fd = os.open(d, os.O_RDONLY)
            os.fsync(fd)
            os.close(fd)
        except OSError:
            pass  # not every platform can flush a directory; the rename is atomic anyway


def _bytes(t):
    t = t.detach().to("cpu", torch.float32).contiguous()
    return ctypes.string_at(t.data_ptr(), t.numel() * 4) if t.numel() else b""


def encode_safetensors(tensors, metadata):
    """[(name, float tensor)] + {str: str} -> bytes (header padded with spaces to a multiple of 8)."""
    header, chunks, offset = {"__metadata__": metadata}, [], 0
    for name, t in tensors:
        data = _bytes(t)
        header[name] = {"dtype": F32, "shape": list(t.shape), "data_offsets": [offset, offset + len(data)]}
        chunks.append(data)
        offset += len(data)
    raw = json.dumps(header, separators=(",", ":")).encode("utf-8")
    raw += b" " * (-len(raw) % 8)
    return b"".join([struct.pack("<Q", len(raw)), raw, *chunks])


def read_safetensors(path):
    """(dict name -> float32 tensor, metadata) of an F32 safetensors file."""
    with open(path, "rb") as f:
        blob = bytearray(f.read())
    (n,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8 : 8 + n].decode("utf-8"))
    meta = header.pop("__metadata__", {}) or {}
    out = {}
    for name, info in header.items():
        if info["dtype"] != F32:
            raise ValueError(f"{path}: tensor {name} is {info['dtype']}, not F32")
        begin, end = info["data_offsets"]
        count = (end - begin) // 4
        t = torch.frombuffer(blob, dtype=torch.float32, count=count, offset=8 + n + begin) if count else torch.zeros(0)
        out[name] = t.clone().view(info["shape"])
    return out, meta


class UserError(Exception):
    """A problem with the run folder or the environment that the user can fix: one line, exit 2."""


def checkpoint_meta(step, config, kind):
    return {
        "format": CHECKPOINT_FORMAT,
        "version": CHECKPOINT_VERSION,
        "step": str(step),
        "kind": kind,
        "config": json.dumps(config, separators=(",", ":")),
    }


def read_checkpoint(path, what):
    """(tensors, metadata, step) of one of our checkpoint files, checked like checkpoint.ts."""
    if not os.path.exists(path):
        raise UserError(
            f"{path} is missing; the run has no {what} checkpoint (prepare it with attention-lab train --engine "
            "pytorch)."
        )
    tensors, meta = read_safetensors(path)
    if meta.get("format") != CHECKPOINT_FORMAT:
        raise UserError(f"{path} is not an Attention Lab checkpoint (format {meta.get('format')!r}).")
    if meta.get("version") != CHECKPOINT_VERSION:
        raise UserError(
            f"{path} has checkpoint version {meta.get('version')!r}; this trainer reads {CHECKPOINT_VERSION}: "
            "use the matching Attention Lab."
        )
    return tensors, meta, int(meta["step"])


# ----------------------------------------------------------------------------- our names <-> the model's


def torch_name(ours):
    """Our parameter name -> (the reference model's parameter name, which part of a fused c_attn
    — 0 q, 1 k, 2 v — or None)."""
    for i, x in enumerate("qkv"):
        key = f".attn.c_attn_{x}."
        if key in ours:
            return ours.replace(key, ".attn.c_attn."), i
    return ours, None


def fused_rows(part, rows, total):
    """The rows (start, stop) of part 0/1/2 (q/k/v) of `rows` rows in a fused c_attn of `total`
    rows: q [H·D] first, then k and v [Hkv·D] each (grouped-query attention makes q the larger)."""
    start = 0 if part == 0 else total - (3 - part) * rows
    return start, start + rows


class ParamMap:
    """Our parameters (manifest order, which the flat optimizer moments follow) as views of the model's."""

    def __init__(self, model, params):
        named = dict(model.named_parameters())
        used = set()
        self.entries = []
        for p in params:
            name, part = torch_name(p["name"])
            if name not in named:
                raise UserError(
                    f"the run's parameter {p['name']} has no counterpart {name} in the PyTorch model; the run "
                    "folder was prepared for another config."
                )
            used.add(name)
            shape = tuple(p["shape"])
            rows = None if part is None else fused_rows(part, shape[0], named[name].shape[0])
            self.entries.append((p["name"], named[name], rows, shape))
        extra = sorted(set(named) - used)
        if extra:
            raise UserError(
                f"the PyTorch model has parameters the run lacks ({', '.join(extra[:3])}); the run folder was "
                "prepared for another config."
            )

    @staticmethod
    def _view(t, rows):
        return t if rows is None else t[rows[0] : rows[1]]

    def ours(self, per_param):
        """[(our name, tensor)] from {model parameter: tensor}, e.g. the parameters or Adam's moments."""
        return [(name, self._view(per_param[param], rows)) for name, param, rows, _ in self.entries]

    def load(self, tensors):
        """Copies our named tensors into the model's parameters (every shape checked)."""
        with torch.no_grad():
            for name, param, rows, shape in self.entries:
                if name not in tensors:
                    raise UserError(f"model.safetensors lacks {name}; it was written for another config.")
                if tuple(tensors[name].shape) != shape:
                    raise UserError(
                        f"model.safetensors has {name} of shape {list(tensors[name].shape)}, the run needs "
                        f"{list(shape)}."
                    )
                self._view(param, rows).copy_(tensors[name])

    def flat(self, per_param):
        return (
            torch.cat([t.detach().reshape(-1).to("cpu", torch.float32) for _, t in self.ours(per_param)])
            if self.entries
            else torch.zeros(0)
        )

    def unflat(self, flat, like):
        """{model parameter: tensor} from a flat vector in our order (fused c_attn parts reassembled)."""
        out = {param: torch.zeros_like(param, device="cpu") for _, param, _, _ in self.entries}
        at = 0
        for _, param, rows, shape in self.entries:
            n = math.prod(shape)
            self._view(out[param], rows).copy_(flat[at : at + n].view(shape))
            at += n
        if at != flat.numel():
            raise UserError(
                f"optimizer.safetensors has {flat.numel()} moments, the model {at}; it was written for another config."
            )
        return {p: t.to(like[p].device) for p, t in out.items()}


# ----------------------------------------------------------------------------- run.json and metrics


def now_iso():
    """The time as JavaScript's toISOString writes it (UTC, milliseconds)."""
    t = datetime.now(timezone.utc)
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"


def update_run_json(run_dir, **patch):
    """runFolder.ts updateRunJson: reread, patch, stamp updatedAt, write atomically."""
    path = os.path.join(run_dir, "run.json")
    with open(path, encoding="utf-8") as f:
        run = json.load(f)
    run.update(patch)
    run["updatedAt"] = now_iso()
    write_files_atomic([(path, (json.dumps(run, indent=2, ensure_ascii=False) + "\n").encode("utf-8"))])


def finite_or_none(x):
    return x if isinstance(x, (int, float)) and math.isfinite(x) else None


def append_line(path, text):
    """atomicFile.ts appendLine: `text` (ending in a newline) appended in one piece; after a torn
    last line it starts a new line, and a failed write cuts the file back (DiskFull when full)."""
    data = text.encode("utf-8")
    try:
        fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o666)
    except OSError as e:
        if _no_space(e):
            raise DiskFull(path) from e
        raise
    size = 0
    try:
        size = os.fstat(fd).st_size
        if size > 0 and os.pread(fd, 1, size - 1) != b"\n":
            data = b"\n" + data  # a killed writer's torn line: readers skip it alone
        view = memoryview(data)
        while view:
            n = os.write(fd, view)
            if n <= 0:
                raise OSError(errno.ENOSPC, f"no progress writing {len(view)} bytes", path)
            view = view[n:]
    except BaseException as e:
        try:
            os.ftruncate(fd, size)
        except OSError:
            pass  # the log keeps a torn last line, which every reader skips
        os.close(fd)
        if _no_space(e):
            raise DiskFull(path) from e
        raise
    os.close(fd)


def append_metrics(run_dir, line):
    """One line of metrics.jsonl (append_line: a crash or a full disk never leaves half of it)."""
    text = (
        json.dumps(
            {k: finite_or_none(v) if isinstance(v, float) else v for k, v in line.items()}, separators=(",", ":")
        )
        + "\n"
    )
    append_line(os.path.join(run_dir, "metrics.jsonl"), text)
