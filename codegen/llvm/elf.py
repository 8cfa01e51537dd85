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
SHT_NULL, SHT_PROGBITS, SHT_SYMTAB, SHT_STRTAB, SHT_RELA, SHT_NOTE, SHT_NOBITS = 0, 1, 2, 3, 4, 7, 8
SHT_INIT_ARRAY, SHT_FINI_ARRAY = 14, 15
SHT_X86_64_UNWIND, SHT_LLVM_ADDRSIG = 0x70000001, 0x6FFF4C03
SECTION_TYPES = {SHT_NULL, SHT_PROGBITS, SHT_SYMTAB, SHT_STRTAB, SHT_RELA, SHT_NOTE, SHT_NOBITS,
                 SHT_INIT_ARRAY, SHT_FINI_ARRAY, SHT_X86_64_UNWIND, SHT_LLVM_ADDRSIG}
RELOCATED_TYPES = {SHT_PROGBITS, SHT_INIT_ARRAY, SHT_FINI_ARRAY, SHT_X86_64_UNWIND}
SHN_UNDEF, SHN_ABS, SHN_COMMON = 0, 0xFFF1, 0xFFF2
STB_GLOBAL, STB_WEAK = 1, 2
MAX_SECTIONS = 4096
MAX_ALIGNMENT = 1 << 16
MAX_ZERO_FILL = 64 << 20  # bytes of .bss a section may ask the JIT to allocate

EM_X86_64 = 62
# Relocation types LLVM emits for x86-64 code and unwind tables, with the bytes each one writes.
# Other machines are checked for in-bounds offsets only (at least 4 bytes).
RELOCATION_WIDTHS = {EM_X86_64: {1: 8, 2: 4, 4: 4, 9: 4, 10: 4, 11: 4, 24: 8, 25: 8, 41: 4, 42: 4}}


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
    for index, (_, kind, _, _, offset, size, link, info, align, _) in enumerate(sections):
        if kind not in SECTION_TYPES:
            raise InvalidObject(f"section {index} has unexpected type {kind:#x}")
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
    symbol_tables = [i for i, s in enumerate(sections) if s[1] == SHT_SYMTAB]
    if len(symbol_tables) != 1:
        raise InvalidObject("not exactly one symbol table")
    symbols = _symbols(code, order, sections, symbol_tables[0])
    for index, section in enumerate(sections):
        if section[1] == SHT_RELA:
            _check_relocations(code, order, sections, index, symbol_tables[0], len(symbols), machine)
        elif section[1] == SHT_X86_64_UNWIND or (section[1] == SHT_PROGBITS and names(section[0]) == b".eh_frame"):
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
        if shndx not in (SHN_UNDEF, SHN_ABS, SHN_COMMON):
            if shndx >= len(sections) or sections[shndx][1] == SHT_NULL:
                raise InvalidObject("a symbol is defined in a missing section")
            if value > sections[shndx][5] or length > sections[shndx][5] - value:
                raise InvalidObject("a symbol lies outside its section")
        symbols.append((names(name_offset), info, shndx, value, length))
    return symbols


def _check_relocations(code: bytes, order: str, sections, index: int, symbol_table: int, symbol_count: int,
                       machine: int) -> None:
    """Every relocation of RELA section `index` names an existing symbol and writes inside its target."""
    _, _, _, _, offset, size, link, target, _, entsize = sections[index]
    if entsize != RELOCATION.size or size % RELOCATION.size or link != symbol_table:
        raise InvalidObject(f"malformed relocation section {index}")
    if sections[target][1] not in RELOCATED_TYPES:
        raise InvalidObject(f"relocation section {index} relocates a section without contents")
    widths = RELOCATION_WIDTHS.get(machine)
    target_size = sections[target][5]
    for position in range(offset, offset + size, RELOCATION.size):
        where, info, _ = struct.unpack_from(order + RELOCATION.format, code, position)
        kind, symbol = info & 0xFFFFFFFF, info >> 32
        width = 4 if widths is None else widths.get(kind)
        if width is None:
            raise InvalidObject(f"unexpected relocation type {kind}")
        if symbol >= symbol_count or where > target_size or width > target_size - where:
            raise InvalidObject(f"a relocation of section {index} points outside")


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
