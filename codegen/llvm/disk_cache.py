"""The on-disk cache of object code: private to the user, bounded in size, never followed elsewhere.

Entries live in `$SYMGRAD_CACHE_DIR/llvm` (default ~/.cache/symgrad/llvm; `SYMGRAD_CACHE=0` turns
the cache off). Directories are created 0700 and entries 0600 whatever the umask; a directory or
entry that is not owned by this user, or that group or others can write, is not used (the code is
compiled instead, with one warning per process), and entries are opened relative to the checked
directory without following symlinks. An entry is a SHA-256 of the key and the object followed by
the object, written to a temporary file and renamed into place (atomic for concurrent writers).
The cache holds at most `SYMGRAD_CACHE_MAX_BYTES` (default 1 GiB): after a write, the least
recently used entries (an entry's mtime is touched when it is used) go first, and temporary files
left by killed writers are removed once they are STALE_SECONDS old.
"""
from __future__ import annotations

import hashlib
import os
import secrets
import stat
import time
import warnings

DEFAULT_MAX_BYTES = 1 << 30
STALE_SECONDS = 600  # a temporary file this old belongs to a writer that died
_warned = False


def read(key: str) -> bytes | None:
    """The object stored under `key`, if the cache holds an intact private entry for it."""
    directory = _open_directory(create=False)
    if directory is None:
        return None
    try:
        try:
            fd = os.open(key + ".o", os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=directory)
        except FileNotFoundError:
            return None
        except OSError as error:  # ELOOP: a symlink planted in place of the entry
            _refuse(f"entry {key}.o cannot be opened as a private file ({error.strerror})")
            return None
        try:
            info = os.fstat(fd)
            problem = _not_private(info, stat.S_ISREG, "a regular file")
            if problem:
                _refuse(f"entry {key}.o {problem}")
                return None
            if info.st_size > max_bytes():
                return None
            with os.fdopen(os.dup(fd), "rb") as f:
                blob = f.read()
        finally:
            os.close(fd)
    except OSError:
        return None
    finally:
        os.close(directory)
    digest, code = blob[:32], blob[32:]
    return code if hashlib.sha256(key.encode() + code).digest() == digest else None


def touch(key: str) -> None:
    """Mark the entry under `key` as just used (the size cap evicts the least recently used)."""
    directory = _open_directory(create=False)
    if directory is None:
        return
    try:
        os.utime(key + ".o", dir_fd=directory, follow_symlinks=False)
    except OSError:
        pass
    finally:
        os.close(directory)


def write(key: str, code: bytes) -> None:
    """Store `code` under `key` (0600, atomically), then keep the cache under its size cap."""
    directory = _open_directory(create=True)
    if directory is None:
        return
    temporary = f"{key}.{secrets.token_hex(8)}.tmp"
    try:
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600,
                     dir_fd=directory)
        try:
            os.fchmod(fd, 0o600)  # whatever the umask removed or left
            with os.fdopen(os.dup(fd), "wb") as f:
                f.write(hashlib.sha256(key.encode() + code).digest() + code)
        finally:
            os.close(fd)
        os.replace(temporary, key + ".o", src_dir_fd=directory, dst_dir_fd=directory)
        _trim(directory, max_bytes())
    except OSError:  # a read-only or full disk only costs the next process a compile
        try:
            os.unlink(temporary, dir_fd=directory)
        except OSError:
            pass
    finally:
        os.close(directory)


def max_bytes() -> int:
    """The cache's size cap: `SYMGRAD_CACHE_MAX_BYTES`, or DEFAULT_MAX_BYTES."""
    text = os.environ.get("SYMGRAD_CACHE_MAX_BYTES", "").strip()
    if not text:
        return DEFAULT_MAX_BYTES
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise ValueError(f"SYMGRAD_CACHE_MAX_BYTES must be a whole number of bytes (0 or more), not {text!r}")
    return value


def location() -> str | None:
    """The cache directory (None when `SYMGRAD_CACHE=0`)."""
    if os.environ.get("SYMGRAD_CACHE", "1") == "0":
        return None
    root = os.environ.get("SYMGRAD_CACHE_DIR") or os.path.join(os.path.expanduser("~"), ".cache", "symgrad")
    return os.path.join(root, "llvm")


def _open_directory(create: bool) -> int | None:
    """A descriptor of the cache directory once it and its parent are checked private (each made 0700
    when `create` and missing); None when the cache is off, missing or refused."""
    directory = location()
    if directory is None:
        return None
    try:
        for path in (os.path.dirname(directory), directory):
            if create:
                try:
                    os.mkdir(path, 0o700)
                    os.chmod(path, 0o700)  # the umask may have taken the owner's bits
                except FileExistsError:
                    pass
            if not _private(path, os.stat(path)):
                return None
        fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        return None
    if not _private(directory, os.fstat(fd)):  # the directory opened is the one checked
        os.close(fd)
        return None
    return fd


def _private(path: str, info: os.stat_result) -> bool:
    """Whether the directory `path` (with status `info`) can be trusted; warns (once) when not."""
    problem = _not_private(info, stat.S_ISDIR, "a directory")
    if problem:
        _refuse(f"directory {path} {problem}")
    return problem is None


def _not_private(info: os.stat_result, is_kind, kind: str) -> str | None:
    """Why a file with this status cannot be trusted (None if it can): it must be `kind`, owned by
    this user and not writable by group or others."""
    if not is_kind(info.st_mode):
        return f"is not {kind}"
    if info.st_uid != os.geteuid():
        return f"is owned by uid {info.st_uid}, not by this user (uid {os.geteuid()})"
    if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return f"is writable by group or others (mode {stat.S_IMODE(info.st_mode):o}; chmod go-w fixes it)"
    return None


def _refuse(reason: str) -> None:
    """Warn, once per process, that the cache is not used where others could have written it."""
    global _warned
    if not _warned:
        _warned = True
        warnings.warn(f"symgrad: not using the compile cache: {reason}; compiling instead", RuntimeWarning,
                      stacklevel=2)


def _trim(directory: int, cap: int) -> None:
    """Remove stale temporary files, then the least recently used entries until the cache fits `cap`."""
    now = time.time()
    entries = []
    for item in os.scandir(directory):
        try:
            info = item.stat(follow_symlinks=False)
            if item.name.endswith(".tmp") and now - info.st_mtime > STALE_SECONDS:
                os.unlink(item.name, dir_fd=directory)
            elif item.name.endswith(".o") and stat.S_ISREG(info.st_mode):
                entries.append((info.st_mtime, info.st_size, item.name))
        except OSError:  # removed meanwhile by another process
            continue
    total = sum(size for _, size, _ in entries)
    for _, size, name in sorted(entries):
        if total <= cap:
            break
        try:
            os.unlink(name, dir_fd=directory)
        except OSError:
            pass
        total -= size
