"""Read a shared library's machine and one exported symbol's bytes from its file, without loading it.

`sg.load` compares the metadata an AOT library embeds with its `.json` before `dlopen` runs any
of the library's code (its constructors included). ELF64 little-endian, as symgrad writes; every
offset is checked against the file, so a crafted file gives an `ELFError`, never a bad read.
"""
from __future__ import annotations

import struct

_HEADER = struct.Struct("<16sHHIQQQIHHHHHH")  # Elf64_Ehdr
_SECTION = struct.Struct("<IIQQQQIIQQ")  # Elf64_Shdr
_SYMBOL = struct.Struct("<IBBHQQ")  # Elf64_Sym
_SHT_NOBITS, _SHT_DYNSYM = 8, 11
_SHN_LORESERVE = 0xFF00
# platform.machine() -> ELF e_machine, for the machines symgrad compiles for.
MACHINES = {"x86_64": 62, "AMD64": 62, "aarch64": 183, "arm64": 183}


class ELFError(ValueError):
    """A file that is not a well-formed ELF64 little-endian shared library, or lacks the symbol."""


def machine(data: bytes) -> int:
    """The e_machine field (62: x86-64, 183: AArch64) of the ELF file `data`."""
    return _header(data)[2]


def exported_bytes(data: bytes, name: str) -> bytes:
    """The bytes of the dynamic (exported) symbol `name` as the file holds them."""
    sections = _sections(data)
    wanted = name.encode()
    for table in (s for s in sections if s[1] == _SHT_DYNSYM):
        if table[9] != _SYMBOL.size or not 0 < table[6] < len(sections):
            raise ELFError("malformed dynamic symbol table")
        strings = sections[table[6]]
        symbols = _slice(data, table[4], table[5])
        for offset in range(0, len(symbols) - _SYMBOL.size + 1, _SYMBOL.size):
            name_offset, _, _, index, value, size = _SYMBOL.unpack_from(symbols, offset)
            if _string(data, strings, name_offset) != wanted:
                continue
            if not 0 < index < min(len(sections), _SHN_LORESERVE) or sections[index][1] == _SHT_NOBITS:
                raise ELFError(f"symbol {name} has no data in the file")
            _, _, _, address, file_offset, section_size = sections[index][:6]
            start = value - address
            if start < 0 or start + size > section_size:
                raise ELFError(f"symbol {name} lies outside its section")
            return _slice(data, file_offset + start, size)
    raise ELFError(f"no exported symbol {name}")


def _header(data: bytes) -> tuple:
    header = _unpack(_HEADER, data, 0)
    ident = header[0]
    if ident[:4] != b"\x7fELF" or ident[4] != 2 or ident[5] != 1:
        raise ELFError("not an ELF64 little-endian file")
    return header


def _sections(data: bytes) -> list:
    header = _header(data)
    offset, entry_size, count = header[6], header[11], header[12]
    if entry_size != _SECTION.size or count == 0:
        raise ELFError("no section headers")
    return [_unpack(_SECTION, data, offset + k * entry_size) for k in range(count)]


def _string(data: bytes, table: tuple, offset: int) -> bytes:
    """The NUL-terminated string at `offset` in the string table section `table`."""
    start, end = table[4] + offset, table[4] + table[5]
    if offset >= table[5] or end > len(data):
        raise ELFError("string outside its table")
    stop = data.find(b"\0", start, end)
    if stop < 0:
        raise ELFError("unterminated string")
    return data[start:stop]


def _slice(data: bytes, offset: int, size: int) -> bytes:
    if offset + size > len(data):
        raise ELFError("a section lies outside the file")
    return data[offset:offset + size]


def _unpack(layout: struct.Struct, data: bytes, offset: int) -> tuple:
    if offset + layout.size > len(data):
        raise ELFError("truncated file")
    return layout.unpack_from(data, offset)
