"""Hostile: in every fusion case, writes into its result pipe a well-formed observation frame
whose array has shape [0, 2**31-1, 2**31-1, 2**31-1] and an empty blob (the byte count checks
out: 0 elements), then exits.

Must get: the fusion cases fail with a malformed result (a ProtocolError for that case); the
grader survives; every other case as the honest core's."""
import json
import os
import struct
import sys

import _hostile_kit as kit
from _honest_core import *  # noqa: F401,F403

BIG = 2**31 - 1


def _step_count():
    frame = sys._getframe()
    while frame is not None:
        steps = frame.f_locals.get("steps")
        if isinstance(steps, tuple) and steps:
            return len(steps)
        frame = frame.f_back
    return 1


def fuse_elementwise(ops):
    value = {"ndarray": {"dtype": "float32", "shape": [0, BIG, BIG, BIG], "blob": 0}}
    records = [
        {"index": i, "outcome": "returned", "value": value if i == 0 else 0, "error": None, "launches": 1, "witness": [], "input_address": None, "graphs": None, "note": ""}
        for i in range(_step_count())
    ]
    header = json.dumps({"protocol": 1, "case": kit.case_uid(), "steps": records}).encode()
    body = b"GGv1" + struct.pack("<II", len(header), 1) + header + struct.pack("<Q", 0)
    kit.write_every_fd(struct.pack("<Q", len(body)) + body, range(3, 64))
    os._exit(0)
