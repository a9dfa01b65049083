"""Reading a file whose path comes from outside (a folder anyone may write, a hook's payload), bounded in size and in
time: only a regular file is read, and nothing waits on the way.

A check before the open (`Path.is_file()`) does not hold: a FIFO swapped in between the check and the open blocks
the open, or the read, until a writer comes, which may be never (an attack on the saved chains' folder blocked 4 of
500 reads). So the file is opened without waiting (O_NONBLOCK: the open of a FIFO returns at once), not through a
link (O_NOFOLLOW), not for a child to inherit (O_CLOEXEC), and what was opened is checked (fstat) before a byte is
read. A regular file's read does not wait on anyone.
"""

import errno
import os
import stat
from typing import Final

#: How such a file is opened: never waiting, never through a link at its last name, never inherited.
_FLAGS: Final = os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC


def read_regular(path: str | os.PathLike[str], limit: int, *, tail: bool = False) -> bytes:
    """At most `limit` bytes of the regular file at `path`: its first ones, or its last ones (`tail`). Raises
    OSError when it cannot be opened, is a link, or is no regular file (a FIFO, a device, a folder), which it
    never reads from."""
    descriptor = os.open(path, _FLAGS)
    try:
        status = os.fstat(descriptor)
        if not stat.S_ISREG(status.st_mode):
            raise OSError(errno.EINVAL, "it is not a regular file", os.fspath(path))
        start = max(0, status.st_size - limit) if tail else 0
        chunks: list[bytes] = []
        size = 0
        while size < limit:
            chunk = os.pread(descriptor, limit - size, start + size)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        return b"".join(chunks)
    finally:
        os.close(descriptor)
