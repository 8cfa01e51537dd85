"""Checks that bytes from the disk cache are a well-formed relocatable ELF object before LLVM sees them.

LLVM parses object files without defending against malformed input (llvmlite's ObjectFileRef
crashes on junk), so an entry is read here first, in Python, with every offset, index and size
bounds-checked: the header matches an object this process emits (class, byte order, machine),
sections lie inside the file, symbols and relocations point inside their sections, the required
symbols are defined, and every undefined symbol resolves in this process. Passing these checks
means LLVM can link the object, not that its code is benign: the cache directory's privacy
(disk_cache.py) is what makes its code the user's own.
"""
from __future__ import annotations

import struct

HEADER = struct.Struct("16sHHIQQQIHHHHHH")  # Elf64_Ehdr after the byte-order prefix
SECTION = struct.Struct("IIQQQQIIQQ")        # Elf64_Shdr
SYMBOL = struct.Struct("IBBHQQ")             # Elf64_Sym
RELOCATION = struct.Struct("QQq")            # Elf64_Rela

ET_REL = 1
# The section types and flags the JIT's objects use (anything else is refused, e.g. TLS, which LLVM's
# linker aborts on): code, data, zero-filled data, unwind tables, and the symbol and relocation tables.
SHT_NULL, SHT_PROGBITS, SHT_SYMTAB, SHT_STRTAB, SHT_RELA, SHT_NOBITS = 0, 1, 2, 3, 4, 8
SHT_X86_64_UNWIND = 0x70000001
SECTION_TYPES = {SHT_NULL, SHT_PROGBITS, SHT_SYMTAB, SHT_STRTAB, SHT_RELA, SHT_NOBITS, SHT_X86_64_UNWIND}
RELOCATED_TYPES = {SHT_PROGBITS, SHT_X86_64_UNWIND}
# write, alloc, execute, merge, strings, info-link, x86-64 large, exclude
SECTION_FLAGS = 0x1 | 0x2 | 0x4 | 0x10 | 0x20 | 0x40 | 0x10000000 | 0x80000000
SHF_ALLOC = 0x2
SHN_UNDEF, SHN_ABS, SHN_COMMON = 0, 0xFFF1, 0xFFF2
STB_LOCAL, STB_GLOBAL, STB_WEAK = 0, 1, 2
STT_SECTION, STT_FILE = 3, 4
RELOCATABLE_SYMBOL_TYPES = {0, 1, 2, 3}  # no type, object, function, section: what LLVM's linker resolves
MAX_SECTIONS = 4096
MAX_ALIGNMENT = 1 << 16
MAX_ZERO_FILL = 64 << 20  # bytes of .bss a section may ask the JIT to allocate

EM_X86_64 = 62
# Relocation types the JIT's objects use (the large code model: R_X86_64_64 in code, R_X86_64_PC64 in
# unwind tables), with the bytes each writes. Neither can overflow, which LLVM's linker asserts against
# for the 32-bit types. Other machines are checked for in-bounds offsets only (at least 4 bytes).
RELOCATION_WIDTHS = {EM_X86_64: {1: 8, 24: 8}}


class InvalidObject(ValueError):
    """Bytes that are not an object file this process can safely hand to LLVM."""


def check(code: bytes, reference: bytes, required: dict[str, bytes | None], resolves) -> None:
    """Raise InvalidObject unless `code` is a relocatable ELF object like `reference` (an object this
    process emitted: same class, byte order and machine) that defines every symbol in `required`
    (globally; where a value is given, the symbol's bytes start with it) and whose undefined symbols
    all satisfy `resolves(name)`."""
    if len(code) < 64 or len(reference) < 64 or code[:4] != b"\x7fELF" or code[4:6] != reference[4:6]:
        raise InvalidObject("not an ELF object of this machine's class and byte order")
    if code[4] != 2 or code[5] not in (1, 2) or code[6] != 1:
        raise InvalidObject("not a version-1 64-bit ELF object")
    order = "<" if code[5] == 1 else ">"
    header = struct.unpack_from(order + HEADER.format, code)
    machine = header[2]
    if header[1] != ET_REL or machine != struct.unpack_from(order + "H", reference, 18)[0]:
        raise InvalidObject("not a relocatable object for this machine")
    shoff, ehsize, phnum, shentsize, shnum, shstrndx = header[6], header[8], header[10], header[11], header[12], header[13]
    if ehsize != 64 or phnum != 0 or shentsize != 64 or not 1 <= shnum <= MAX_SECTIONS or shstrndx >= shnum:
        raise InvalidObject("malformed ELF header")
    _within(code, shoff, shnum * 64, "the section table")
    sections = [struct.unpack_from(order + SECTION.format, code, shoff + 64 * i) for i in range(shnum)]
    for index, (_, kind, flags, _, offset, size, link, info, align, _) in enumerate(sections):
        if kind not in SECTION_TYPES or flags & ~SECTION_FLAGS:
            raise InvalidObject(f"section {index} has unexpected type {kind:#x} or flags {flags:#x}")
        if align > MAX_ALIGNMENT or align & (align - 1):
            raise InvalidObject(f"section {index} has alignment {align}")
        if kind == SHT_NOBITS:
            if size > MAX_ZERO_FILL:
                raise InvalidObject(f"section {index} asks for {size} zero bytes")
        elif kind != SHT_NULL:
            _within(code, offset, size, f"section {index}")
        if link >= shnum or (kind == SHT_RELA and info >= shnum):
            raise InvalidObject(f"section {index} links to a missing section")
    names = _strings(code, sections, shstrndx)
    section_names = [names(section[0]) for section in sections]
    symbol_tables = [i for i, s in enumerate(sections) if s[1] == SHT_SYMTAB]
    if len(symbol_tables) != 1:
        raise InvalidObject("not exactly one symbol table")
    symbols = _symbols(code, order, sections, symbol_tables[0])
    for index, section in enumerate(sections):
        if section[1] == SHT_RELA:
            _check_relocations(code, order, sections, index, symbol_tables[0], symbols, machine)
        elif section[1] == SHT_X86_64_UNWIND or section_names[index] == b".eh_frame":
            _check_unwind_records(code, order, section, index)
    defined = {}
    for name, info, shndx, value, size in symbols:
        if shndx == SHN_UNDEF:
            if name and not resolves(name.decode(errors="replace")):
                raise InvalidObject(f"undefined symbol {name!r} does not resolve in this process")
        elif info >> 4 in (STB_GLOBAL, STB_WEAK):
            defined[name.decode(errors="replace")] = (shndx, value, size)
    for name, expected in required.items():
        if name not in defined:
            raise InvalidObject(f"no definition of {name}")
        shndx, value, size = defined[name]
        if shndx >= len(sections) or not sections[shndx][2] & SHF_ALLOC:
            raise InvalidObject(f"{name} is not in a loaded section")
        if expected is not None:
            offset, length, kind = sections[shndx][4], sections[shndx][5], sections[shndx][1]
            if kind != SHT_PROGBITS or size < len(expected) or value + len(expected) > length \
                    or code[offset + value:offset + value + len(expected)] != expected:
                raise InvalidObject(f"{name} does not hold what this entry's key says")


def _within(code: bytes, offset: int, size: int, what: str) -> None:
    if offset > len(code) or size > len(code) - offset:
        raise InvalidObject(f"{what} lies outside the file")


def _strings(code: bytes, sections, index: int):
    """A function reading the NUL-terminated name at an offset of string table `index`."""
    _, kind, _, _, offset, size, *_ = sections[index]
    if kind != SHT_STRTAB or size == 0 or code[offset + size - 1] != 0:
        raise InvalidObject(f"section {index} is not a string table")
    table = code[offset:offset + size]

    def name(position: int) -> bytes:
        if position >= size:
            raise InvalidObject("a name lies outside its string table")
        return table[position:table.index(b"\0", position)]
    return name


def _symbols(code: bytes, order: str, sections, index: int) -> list:
    """(name, info, section index, value, size) of each symbol, each checked against its section."""
    _, _, _, _, offset, size, link, _, _, entsize = sections[index]
    if entsize != SYMBOL.size or size % SYMBOL.size:
        raise InvalidObject("malformed symbol table")
    names = _strings(code, sections, link)
    symbols = []
    for position in range(offset, offset + size, SYMBOL.size):
        name_offset, info, _, shndx, value, length = struct.unpack_from(order + SYMBOL.format, code, position)
        if position > offset and shndx == SHN_UNDEF and (info >> 4 == STB_LOCAL or info & 0xF == STT_SECTION):
            raise InvalidObject("an undefined symbol is local or names a section")
        if info >> 4 not in (STB_LOCAL, STB_GLOBAL, STB_WEAK) or (
                info & 0xF not in RELOCATABLE_SYMBOL_TYPES and (info & 0xF != STT_FILE or info >> 4 != STB_LOCAL)):
            raise InvalidObject(f"a symbol has unexpected type and binding {info:#x}")
        if shndx not in (SHN_UNDEF, SHN_ABS, SHN_COMMON):
            if shndx >= len(sections) or sections[shndx][1] == SHT_NULL:
                raise InvalidObject("a symbol is defined in a missing section")
            if value > sections[shndx][5] or length > sections[shndx][5] - value:
                raise InvalidObject("a symbol lies outside its section")
        elif info & 0xF == STT_SECTION:
            raise InvalidObject("a section symbol names no section")
        symbols.append((names(name_offset), info, shndx, value, length))
    return symbols


def _check_relocations(code: bytes, order: str, sections, index: int, symbol_table: int, symbols: list,
                       machine: int) -> None:
    """Every relocation of RELA section `index` names an existing symbol LLVM can resolve and writes inside
    its target."""
    _, _, _, _, offset, size, link, target, _, entsize = sections[index]
    if entsize != RELOCATION.size or size % RELOCATION.size or link != symbol_table:
        raise InvalidObject(f"malformed relocation section {index}")
    if sections[target][1] not in RELOCATED_TYPES or not sections[target][2] & SHF_ALLOC:
        raise InvalidObject(f"relocation section {index} relocates a section that is not loaded")
    widths = RELOCATION_WIDTHS.get(machine)
    target_size = sections[target][5]
    for position in range(offset, offset + size, RELOCATION.size):
        where, info, _ = struct.unpack_from(order + RELOCATION.format, code, position)
        kind, symbol = info & 0xFFFFFFFF, info >> 32
        width = 4 if widths is None else widths.get(kind)
        if width is None:
            raise InvalidObject(f"unexpected relocation type {kind}")
        if symbol >= len(symbols) or where > target_size or width > target_size - where:
            raise InvalidObject(f"a relocation of section {index} points outside")
        _, info, shndx, _, _ = symbols[symbol]
        if info & 0xF not in RELOCATABLE_SYMBOL_TYPES:
            raise InvalidObject(f"a relocation of section {index} refers to a file symbol")
        if shndx < len(sections) and shndx != SHN_UNDEF and not sections[shndx][2] & SHF_ALLOC:
            raise InvalidObject(f"a relocation of section {index} refers to a section that is not loaded")


def _check_unwind_records(code: bytes, order: str, section, index: int) -> None:
    """The unwind table is a chain of length-prefixed records that exactly fills the section (the JIT
    registers it with the unwinder, which walks those lengths)."""
    offset, size = section[4], section[5]
    position = 0
    while position < size:
        if size - position < 4:
            raise InvalidObject(f"unwind section {index} ends inside a record")
        (length,) = struct.unpack_from(order + "I", code, offset + position)
        if length == 0:  # terminator
            position += 4
            continue
        if length == 0xFFFFFFFF or length < 4 or length > size - position - 4:
            raise InvalidObject(f"unwind section {index} has a malformed record")
        position += 4 + length
