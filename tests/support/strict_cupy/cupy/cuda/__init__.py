"""``cupy.cuda`` of the strict stand-in: streams, events, graphs, memory pools."""

from cupy._device import (  # noqa: F401
    CUDARuntimeError,
    Device,
    Event,
    Graph,
    MemoryPointer,
    MemoryPool,
    PinnedMemoryPool,
    Stream,
    alloc,
    get_allocator,
    get_current_stream,
    get_elapsed_time,
    set_allocator,
    using_allocator,
)

from . import runtime  # noqa: F401


def is_available() -> bool:
    return True
