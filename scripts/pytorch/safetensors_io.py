"""A minimal safetensors writer and reader (https://github.com/huggingface/safetensors, format
section), written by hand with struct + json so the golden script needs nothing but torch.

Layout: 8-byte little-endian u64 N, then N bytes of JSON header (padded with spaces to a
multiple of 8) mapping each tensor name to {dtype, shape, data_offsets [begin, end)} relative
to the byte after the header, plus an optional "__metadata__" of string -> string, then the
raw little-endian tensor bytes.

Left out: dtypes other than F32 / F64 / F16 / I32 / I64 (BF16: numpy has none), memory mapping, big-endian hosts.
"""

import json
import struct

import numpy as np

DTYPES = {
    "F32": np.dtype("<f4"),
    "F64": np.dtype("<f8"),
    "F16": np.dtype("<f2"),
    "I32": np.dtype("<i4"),
    "I64": np.dtype("<i8"),
}


def _dtype_name(arr):
    for name, dt in DTYPES.items():
        if arr.dtype == dt.newbyteorder("="):
            return name
    raise ValueError(f"unsupported dtype {arr.dtype}; convert to float32 or int32 first")


def write_safetensors(path, tensors, metadata):
    """tensors: dict name -> numpy array (kept in insertion order); metadata: dict str -> str."""
    header, chunks, offset = {}, [], 0
    for name, arr in tensors.items():
        name_dt = _dtype_name(arr)
        data = np.ascontiguousarray(arr).astype(DTYPES[name_dt], copy=False).tobytes()
        header[name] = {"dtype": name_dt, "shape": list(arr.shape), "data_offsets": [offset, offset + len(data)]}
        chunks.append(data)
        offset += len(data)
    for k, v in metadata.items():
        assert isinstance(k, str) and isinstance(v, str), f"metadata must be str -> str, got {k!r}: {type(v)}"
    header["__metadata__"] = metadata
    raw = json.dumps(header, separators=(",", ":")).encode("utf-8")
    raw += b" " * (-len(raw) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(raw)))
        f.write(raw)
        for chunk in chunks:
            f.write(chunk)


def read_safetensors(path):
    """Returns (dict name -> numpy array, metadata dict)."""
    with open(path, "rb") as f:
        blob = f.read()
    (n,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8 : 8 + n].decode("utf-8"))
    metadata = header.pop("__metadata__", {})
    base = 8 + n
    tensors = {}
    for name, info in header.items():
        begin, end = info["data_offsets"]
        arr = np.frombuffer(blob[base + begin : base + end], dtype=DTYPES[info["dtype"]])
        tensors[name] = arr.reshape(info["shape"])
    return tensors, metadata
