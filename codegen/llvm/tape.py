"""The carries a while loop's reverse pass keeps (control.while_vjp), in heap memory whose size is
only found at run time.

A record holds one carry, each component at a fixed offset. The records are one block grown by
doubling (realloc), to at most `limit` records when the loop is checkpointed, and `thin` keeps
every other one in place; a second block, the segment, holds the carries recomputed between two
kept ones. The block pointers and counts live in stack slots (LLVM keeps them in registers), so
`free` releases whatever is held on every way out, an error status from a called body included.
Where the kernel keeps blocks (KernelBuilder.kept_slot), the records' block is kept from call to call
with its capacity in a header, so the next call's records are not fresh pages again.
"""
from __future__ import annotations

from llvmlite import ir

from . import heap
from .types import I8, I64, PTR

RECORD_ALIGNMENT = 16  # bytes: each component of a record starts at a multiple of this (as malloc's blocks)
HEADER = RECORD_ALIGNMENT  # bytes before the first record: the block's capacity in records (an i64)
FIRST_RECORDS = 16  # records the first allocation holds

OUT_OF_MEMORY = ("out of memory for the carries the reverse pass of sg.while_loop keeps "
                 "(sg.while_loop(..., checkpoints=C) keeps at most C of them)")

_NULL = ir.Constant(PTR, None)


def _i64(value: int) -> ir.Constant:
    return ir.Constant(I64, value)


class Tape:
    """Records of carries shaped as the buffers given, at most `limit` of them (None: no bound)."""

    def __init__(self, buffers, limit=None):
        self.nbytes = [buffer.nbytes for buffer in buffers]
        self.offsets, size = [], 0
        for nbytes in self.nbytes:
            self.offsets.append(size)
            size += -(-nbytes // RECORD_ALIGNMENT) * RECORD_ALIGNMENT
        self.record_bytes = max(size, RECORD_ALIGNMENT)
        self.limit = limit

    def start(self, k):
        """Emit an empty tape, at the start of the job using it (which may run many times): in the block the
        last call kept, if there is one."""
        b = k.b
        self.block, self.segment, self.capacity, self.count = (k.alloca(ty) for ty in (PTR, PTR, I64, I64))
        self.kept = k.kept_slot()
        block = _NULL if self.kept is None else k.take_kept(self.kept)
        for slot, value in ((self.block, block), (self.segment, _NULL), (self.capacity, _i64(0)),
                            (self.count, _i64(0))):
            b.store(value, slot)
        if self.kept is not None:
            with b.if_then(b.icmp_unsigned("!=", block, _NULL)):
                b.store(b.load(block, typ=I64), self.capacity)

    def length(self, k) -> ir.Value:
        """The number of records held."""
        return k.b.load(self.count, typ=I64)

    def push(self, k, pointers):
        """Emit: append a record of the carry at `pointers` (one per component), growing the block when full."""
        b = k.b
        count = self.length(k)
        with b.if_then(b.icmp_unsigned("==", count, b.load(self.capacity, typ=I64)), likely=False):
            self._grow(k)
        for target, source, nbytes in zip(self.components(k, self.record(k, count)), pointers, self.nbytes):
            heap.copy(k, target, source, nbytes)
        b.store(b.add(count, _i64(1), flags=["nuw"]), self.count)

    def _grow(self, k):
        b = k.b
        capacity = b.load(self.capacity, typ=I64)
        grown = b.select(b.icmp_unsigned("==", capacity, _i64(0)), _i64(FIRST_RECORDS), b.shl(capacity, _i64(1)))
        if self.limit is not None:
            grown = b.select(b.icmp_unsigned("<", grown, _i64(self.limit)), grown, _i64(self.limit))
        block = b.call(heap.function(k.module, "realloc"),
                       [b.load(self.block, typ=PTR), b.add(b.mul(grown, _i64(self.record_bytes)), _i64(HEADER))])
        k.fail_unless(b.icmp_unsigned("!=", block, _NULL), OUT_OF_MEMORY, self.free)  # the old block is freed
        b.store(grown, block)
        b.store(block, self.block)
        b.store(grown, self.capacity)

    def thin(self, k):
        """Emit: keep records 0, 2, 4, ... as records 0, 1, 2, ..., in place."""
        b = k.b
        kept = b.lshr(b.add(self.length(k), _i64(1)), _i64(1))
        k.for_range(1, kept, lambda i: heap.copy(k, self.record(k, i), self.record(k, b.shl(i, _i64(1))),
                                                 self.record_bytes))
        b.store(kept, self.count)

    def reserve_segment(self, k, records):
        """Emit: the segment block, of `records` records (an i64 found at run time; none for 0)."""
        b = k.b
        with b.if_then(b.icmp_unsigned("!=", records, _i64(0))):
            block = b.call(heap.function(k.module, "malloc"), [b.mul(records, _i64(self.record_bytes))])
            k.fail_unless(b.icmp_unsigned("!=", block, _NULL), OUT_OF_MEMORY, self.free)
            b.store(block, self.segment)

    def record(self, k, index) -> ir.Value:
        """The address of record `index` of the tape."""
        return self._address(k, self.block, index, HEADER)

    def segment_record(self, k, index) -> ir.Value:
        """The address of record `index` of the segment."""
        return self._address(k, self.segment, index, 0)

    def _address(self, k, slot, index, start):
        offset = k.b.add(k.b.mul(index, _i64(self.record_bytes), flags=["nuw"]), _i64(start), flags=["nuw"])
        return k.b.gep(k.b.load(slot, typ=PTR), [offset], source_etype=I8, inbounds=True)

    def components(self, k, record) -> list:
        """The address of each component of the carry in `record`."""
        return [k.b.gep(record, [_i64(offset)], source_etype=I8, inbounds=True) for offset in self.offsets]

    def free(self, k):
        """Emit: release both blocks (free ignores the one not allocated, null); the records' block kept for
        the next call instead, where the kernel keeps blocks, up to heap.KEPT_BYTES."""
        b, free = k.b, heap.function(k.module, "free")
        b.call(free, [b.load(self.segment, typ=PTR)])
        block = b.load(self.block, typ=PTR)
        if self.kept is None:
            b.call(free, [block])
            return
        records = _i64(heap.KEPT_BYTES // self.record_bytes)
        k.put_back(self.kept, block, b.icmp_unsigned("<=", b.load(self.capacity, typ=I64), records))
