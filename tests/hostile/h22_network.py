"""Hostile: does the lab, and tries the network: a TCP connection to 127.0.0.1:47391 (where
the hostile test listens) and to a public address, a UDP datagram to 127.0.0.1:47391, a
listening TCP socket, and the abstract Unix socket "@graphgrade-hostile-test" (also the
test's), at import and in every fusion case.

Must get: nothing reaches the test's listeners; it earns its points honestly."""
import socket

import _honest_core
import _hostile_kit as kit
from _honest_core import *  # noqa: F401,F403

PORT = 47391
PAYLOAD = kit.MARKER.encode()


def _tcp(host):
    with socket.create_connection((host, PORT), timeout=0.5) as s:
        s.sendall(PAYLOAD)


def _udp():
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.sendto(PAYLOAD, ("127.0.0.1", PORT))


def _listen():
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind(("0.0.0.0", 0))
    s.listen()
    return s.getsockname()


def _abstract_unix():
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(0.5)
        s.connect("\0graphgrade-hostile-test")
        s.sendall(PAYLOAD)


def _try_all():
    kit.attempt("tcp 127.0.0.1", _tcp, "127.0.0.1")
    kit.attempt("tcp 1.1.1.1", _tcp, "1.1.1.1")
    kit.attempt("udp 127.0.0.1", _udp)
    kit.attempt("tcp listen", _listen)
    kit.attempt("abstract unix socket", _abstract_unix)


_try_all()


def fuse_elementwise(ops):
    _try_all()
    return _honest_core.fuse_elementwise(ops)
