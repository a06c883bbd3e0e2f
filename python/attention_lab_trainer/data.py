"""The training batches of a run as our engine draws them, for the PyTorch trainer: ports of
the three samplers of src/lab (dataset.ts documentDataset and pairDataset, inductionTask.ts),
each a pure function of (seed, step), so a run trained here sees exactly the batches it would
see in our engine, whichever engine resumes it. Also the fixed validation batches, which the
lab writes out whole, and each process's share of a global batch.

Inputs, written by the lab into the run folder's `pytorch/` (src/lab/pytorch/trainerInputs.node.ts
documents the layout): documents as one memory-mapped token stream (`train.u16`, read as
int16 and masked back to 0..65535, or `train.i32`), pairs as three int32 arrays already in
the sampler's length order, the induction task as its 26 letter ids. All little-endian.

Shape legend: B rows of the global batch, T target/decoder length, S source length.
Left out: reading text or tokenizing (the lab does it once, in TypeScript).
"""

import mmap
import os

import torch

from .rng import STREAMS, step_rng

PAD = 0


def _map(path, dtype):
    """A file as a 1-D tensor over a private memory mapping (pages load as they are read)."""
    size = os.path.getsize(path)
    if size == 0:
        return torch.zeros(0, dtype=dtype)
    with open(path, "rb") as f:
        mm = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_COPY)
    return torch.frombuffer(mm, dtype=dtype)


def read_ints(path, dtype_name):
    """A stream file: 'u16' (stored as uint16, returned as int16 to mask) or 'i32'."""
    return _map(path, torch.int16 if dtype_name == "u16" else torch.int32)


def _ids(t):
    """int16/int32 token ids -> int64, undoing the sign of uint16 ids stored as int16."""
    return t.to(torch.int64) & 0xFFFF if t.dtype == torch.int16 else t.to(torch.int64)


# ----------------------------------------------------------------------------- documents


class DocumentBatches:
    """dataset.ts documentDataset.trainBatch: `rows` random windows of T + 1 tokens."""

    def __init__(self, folder, d, seed):
        self.stream = read_ints(os.path.join(folder, d["train"]["file"]), d["train"]["dtype"])
        if self.stream.numel() != d["train"]["length"]:
            raise ValueError(
                f"{d['train']['file']} holds {self.stream.numel()} tokens, the manifest says {d['train']['length']}"
            )
        self.rows, self.T, self.seed = d["rows"], d["T"], seed

    def starts(self, step):
        rng = step_rng(self.seed, STREAMS["data"], step)
        return [rng.int(self.stream.numel() - self.T) for _ in range(self.rows)]

    def batch(self, step):
        T = self.T
        windows = torch.stack([_ids(self.stream[s : s + T + 1]) for s in self.starts(step)])  # (B, T + 1)
        return {"input": windows[:, :T], "targets": windows[:, 1:]}


# ----------------------------------------------------------------------------- pairs


class PairBatches:
    """dataset.ts pairDataset.trainBatch: a run of length-sorted neighbours from a random
    start, grown while rows x longest stays within the token budget (token-budget batching)."""

    def __init__(self, folder, d, seed):
        src = read_ints(os.path.join(folder, d["src"]), "i32")
        tgt = read_ints(os.path.join(folder, d["tgt"]), "i32")
        lengths = read_ints(os.path.join(folder, d["lengths"]), "i32").view(-1, 2).tolist()
        self.examples, so, to = [], 0, 0
        for s_len, t_len in lengths:
            self.examples.append((src[so : so + s_len].tolist(), tgt[to : to + t_len].tolist()))
            so, to = so + s_len, to + t_len
        self.max_batch, self.budget, self.seed = d["maxBatch"], d["budget"], seed
        self.bos, self.eos = d["bos"], d["eos"]

    def span(self, step):
        """[lo, hi) of the sorted examples that make the batch of `step`."""
        ex, n = self.examples, len(self.examples)
        size = lambda i: max(len(ex[i][0]), len(ex[i][1]) + 1)  # noqa: E731
        rng = step_rng(self.seed, STREAMS["data"], step)
        lo = rng.int(n)
        hi, longest = lo + 1, size(lo)
        while hi - lo < self.max_batch:
            nxt = hi if hi < n else (lo - 1 if lo > 0 else -1)
            if nxt < 0:
                break
            ln = max(longest, size(nxt))
            if (hi - lo + 1) * ln > self.budget:
                break
            longest = ln
            if nxt == hi:
                hi += 1
            else:
                lo -= 1
        return lo, hi

    def batch(self, step):
        lo, hi = self.span(step)
        return pair_batch(self.examples[lo:hi], self.bos, self.eos)


def pair_batch(examples, bos, eos):
    """dataset.ts pairBatch: src [B, S] (tokens + EOS), decoder input BOS + tgt and targets tgt + EOS [B, T]
    (BOS and EOS the run's tokenizer's ids)."""
    B = len(examples)
    S = max(len(s) for s, _ in examples)
    T = max(len(t) + 1 for _, t in examples)
    src = torch.full((B, S), PAD, dtype=torch.int64)
    inp = torch.full((B, T), PAD, dtype=torch.int64)
    tgt = torch.full((B, T), PAD, dtype=torch.int64)
    for b, (s, t) in enumerate(examples):
        src[b, : len(s)] = torch.tensor(s, dtype=torch.int64)
        inp[b, 0] = bos
        if t:
            inp[b, 1 : len(t) + 1] = torch.tensor(t, dtype=torch.int64)
            tgt[b, : len(t)] = torch.tensor(t, dtype=torch.int64)
        tgt[b, len(t)] = eos
    return {"src": src, "input": inp, "targets": tgt}


# ----------------------------------------------------------------------------- induction


def random_segment(rng, L, n):
    """inductionTask.ts randomSegment: L distinct indices in [0, n) (with replacement when L > n)."""
    if L > n:
        return [rng.int(n) for _ in range(L)]
    pool = list(range(n))
    for i in range(L):
        j = i + rng.int(n - i)
        pool[i], pool[j] = pool[j], pool[i]
    return pool[:L]


def _fill(inp, tgt, b, T, seq, first_loss):
    for i in range(T):
        inp[b][i] = seq[i] if i < len(seq) else PAD
        tgt[b][i] = (seq[i + 1] if i + 1 < len(seq) else PAD) if i >= first_loss else PAD


class InductionBatches:
    """inductionTask.ts trainingBatch: per row, a letter chain (probability 0.5) or a repeat."""

    CHAIN_SHARE, CHAIN_MIN, CHAIN_MAX, CHAIN_FOLLOW = 0.5, 4, 10, 0.9

    def __init__(self, d, seed):
        self.rows, self.Lmax, self.ids, self.seed, self.bos = d["rows"], d["Lmax"], d["ids"], seed, d["bos"]

    def _chain(self, rng, T):
        ids = self.ids
        k = self.CHAIN_MIN + rng.int(self.CHAIN_MAX - self.CHAIN_MIN + 1)
        letters = random_segment(rng, k, len(ids))
        successor = [rng.int(k) for _ in range(k)]
        xs = [rng.int(k)]
        while len(xs) < T:
            xs.append(successor[xs[-1]] if rng.next() < self.CHAIN_FOLLOW else rng.int(k))
        return [self.bos] + [ids[letters[i]] for i in xs]

    def _repeat(self, rng):
        Lmax = self.Lmax
        Lmin = max(2, Lmax // 3)
        L = Lmin + rng.int(Lmax - Lmin + 1)
        P = 2 * (Lmax - L)
        picked = [self.ids[i] for i in random_segment(rng, P + L, len(self.ids))]
        filler, segment = picked[:P], picked[P:]
        return [self.bos] + filler + segment + segment, 1 + P + L

    def batch(self, step):
        rng = step_rng(self.seed, STREAMS["data"], step)
        T = 2 * self.Lmax
        inp = [[PAD] * T for _ in range(self.rows)]
        tgt = [[PAD] * T for _ in range(self.rows)]
        for b in range(self.rows):
            if rng.next() < self.CHAIN_SHARE:
                _fill(inp, tgt, b, T, self._chain(rng, T), 1)
            else:
                seq, first = self._repeat(rng)
                _fill(inp, tgt, b, T, seq, first)
        return {"input": torch.tensor(inp, dtype=torch.int64), "targets": torch.tensor(tgt, dtype=torch.int64)}


# ----------------------------------------------------------------------------- shared


def train_batches(folder, manifest):
    """The sampler the manifest's `data` names."""
    d, seed = manifest["data"], manifest["training"]["seed"]
    kinds = {
        "documents": lambda: DocumentBatches(folder, d, seed),
        "pairs": lambda: PairBatches(folder, d, seed),
        "induction": lambda: InductionBatches(d, seed),
    }
    if d["kind"] not in kinds:
        raise ValueError(f"unknown data kind {d['kind']!r}")
    return kinds[d["kind"]]()


def validation_batches(folder, manifest):
    """The fixed validation batches: per batch [src (B*S) when S > 0], input (B*T), targets (B*T) in val.i32."""
    v = manifest["validation"]
    flat = read_ints(os.path.join(folder, v["file"]), "i32")
    out, at = [], 0
    for shape in v["batches"]:
        B, T, S = shape["B"], shape["T"], shape.get("S", 0)
        batch = {}
        if S > 0:
            batch["src"] = flat[at : at + B * S].to(torch.int64).view(B, S)
            at += B * S
        for key in ("input", "targets"):
            batch[key] = flat[at : at + B * T].to(torch.int64).view(B, T)
            at += B * T
        out.append(batch)
    if at != flat.numel():
        raise ValueError(f"{v['file']} holds {flat.numel()} ids, the manifest's batches {at}")
    return out


def shard(batch, rank, world):
    """This process's rows of a global batch: rows [rank·B/N, (rank+1)·B/N), contiguous."""
    B = batch["input"].shape[0]
    lo, hi = rank * B // world, (rank + 1) * B // world
    return {k: t[lo:hi] for k, t in batch.items()}
