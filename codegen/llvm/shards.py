"""A long kernel's module as several modules, each defining a share of the kernel's parts (the
functions `KernelBuilder` splits a long program into, named `*.partN`) and declaring the others, so
LLVM's optimizer (most of a long program's first call, and done function by function) can run on
them at once on several threads; jit.py links the optimized modules back into one for one object.

The split works on the IR text as llvmlite prints it: top-level lines, and function definitions
from a `define` line to a `}` line. In every shard but the first, functions and globals with
external linkage are declarations (functions) or weak copies (globals, which the first shard's
definitions replace when linked); internal functions are copied into each shard that calls them.
"""
from __future__ import annotations

import re

# Modules with fewer parts than this are compiled whole (splitting costs a parse and a link).
MIN_PARTS = 8

_DEFINE = re.compile(r'define (?:(internal|private) )?(.*?@"([^"]*)"\(.*)$')
_PART = re.compile(r"\.part\d+$")
_PART_DEFINITION = re.compile(r'^define internal [^\n]*\.part\d+"\(', re.M)
_REFERENCE = re.compile(r'@"([^"]*)"')
_GLOBAL = re.compile(r'(@"[^"]*" = )(\S+)')
_MUTABLE_INTERNAL = re.compile(r'@"[^"]*" = (?:internal|private) (?:unnamed_addr )?global ')
_LINKAGES = {"internal", "private", "external", "appending", "weak", "weak_odr", "linkonce", "linkonce_odr",
             "common", "available_externally", "extern_weak"}


class _Function:
    """One function definition of the text: its name, linkage word ('' when external), the header after
    it, its body lines and the names it refers to."""

    def __init__(self, linkage, rest, name, body):
        self.linkage, self.rest, self.name, self.body = linkage or "", rest, name, body
        self.references = set(_REFERENCE.findall("".join(body)))

    @property
    def is_part(self) -> bool:
        return _PART.search(self.name) is not None

    def definition(self, external=False) -> list[str]:
        linkage = "" if external or not self.linkage else self.linkage + " "
        return [f"define {linkage}{self.rest}", *self.body]

    def declaration(self) -> list[str]:
        return [f"declare {self.rest}"]


def is_long(ir_text: str) -> bool:
    """Whether the text is a long kernel's: one of MIN_PARTS parts or more."""
    return len(_PART_DEFINITION.findall(ir_text)) >= MIN_PARTS


def split(ir_text: str, count: int = 2) -> list[str] | None:
    """`ir_text` as `count` module texts that, optimized and linked, make the module (the parts dealt
    out in order, balanced by their length); None when it has fewer than MIN_PARTS parts."""
    top, functions = _parse(ir_text)
    parts = [f for f in functions if f.is_part and f.linkage == "internal"]
    if len(parts) < MIN_PARTS or any(_MUTABLE_INTERNAL.match(line) for line in top):
        return None  # (internal state copied into each shard would no longer be one)
    others = [f for f in functions if not (f.is_part and f.linkage == "internal")]
    loads = [sum(len(f.body) for f in others)] + [0] * (count - 1)
    owner = {}
    for part in parts:  # each to the least loaded shard so far (the first holds everything else too)
        shard = loads.index(min(loads))
        owner[part.name] = shard
        loads[shard] += len(part.body)
    by_name = {f.name: f for f in functions}
    top_references = set(_REFERENCE.findall("".join(top)))
    return [_shard(index, top, functions, owner, by_name, top_references) for index in range(count)]


def _parse(ir_text: str) -> tuple[list[str], list[_Function]]:
    """The text's top-level lines (each ending in a newline) and its function definitions, in order."""
    top, functions = [], []
    lines = iter(ir_text.splitlines(keepends=True))
    for line in lines:
        match = _DEFINE.match(line)
        if match is None:
            top.append(line if line.endswith("\n") else line + "\n")  # the text's last line may have none
            continue
        body = []
        for inner in lines:
            body.append(inner)
            if inner.startswith("}"):
                break
        linkage, rest, name = match.groups()
        functions.append(_Function(linkage, rest + "\n", name, body))
    return top, functions


def _shard(index, top, functions, owner, by_name, top_references) -> str:
    """The text of shard `index`: its own parts (external), everything else in the first shard, and in
    the others the internal functions their parts reach; declarations for the rest."""
    roots = {f.name for f in functions if owner.get(f.name, 0) == index and (f.is_part or index == 0)}
    kept = _reached(roots, by_name, owner, top_references)
    text = []
    for line in top:
        if index and (match := _GLOBAL.match(line)) and match.group(2) not in _LINKAGES:
            line = f"{match.group(1)}weak {line[match.end(1):]}"  # the first shard's definition wins
        text.append(line)
    for function in functions:
        if function.name in owner:
            text += function.definition(external=True) if owner[function.name] == index else function.declaration()
        elif index == 0 or (function.linkage and function.name in kept):
            text += function.definition()
        elif not function.linkage:
            text += function.declaration()
    return "".join(text)


def _reached(roots: set, by_name, owner, top_references) -> set:
    """Names of the functions `roots` and the top-level lines refer to, transitively (not through the
    parts of other shards, which are only declared)."""
    seen = set()
    pending = sorted(roots | top_references)
    while pending:
        name = pending.pop()
        if name in seen:
            continue
        seen.add(name)
        function = by_name.get(name)
        if function is not None and (name in roots or name not in owner):
            pending.extend(function.references - seen)
    return seen
