"""Find NUL-terminated strings in one span of a file that streams past in pieces.

The finders used here (``matches(text, pos, endpos)``, yielding the strings found in text[pos:endpos])
match NUL-free text that ends right before a NUL (and may look one byte back for the NUL before it), so
a match never spans a NUL: searching up to the last NUL of what has arrived, and carrying the rest (with
that NUL in front, for the look-back) to the next piece, finds exactly what one search over the whole
span finds. The carry is capped: a NUL-free run longer than ``CARRY_LIMIT`` bytes is
no string any check looks for (only its last ``CARRY_LIMIT`` bytes are searched).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

__all__ = ["SpanScanner", "CARRY_LIMIT", "Finder"]

CARRY_LIMIT = 1 << 16
# matches(text, pos, endpos): the strings found in text[pos:endpos], in order
Finder = Callable[[bytes, int, int], Iterable[bytes]]


class SpanScanner:
    """The distinct matches of ``matches`` in the file bytes [start, end), in the order first found.

    As ``matches(data, start, end)`` would: a look-behind may see the byte before ``start``, a look-ahead
    nothing at or past ``end``. Stops collecting after ``limit`` distinct matches.
    """

    def __init__(self, matches: Finder, start: int, end: int, limit: int | None = None) -> None:
        self.start, self.end = start, end
        self.found: dict[bytes, None] = {}
        self._matches, self._limit = matches, limit
        self._first = max(start - 1, 0)  # the byte before the span comes too, for a look-behind
        self._carry = b""
        self._skip = start - self._first  # bytes at the front of the carry that are context only

    @property
    def full(self) -> bool:
        return self._limit is not None and len(self.found) >= self._limit

    def feed(self, piece: bytes, at: int) -> None:
        """``piece`` holds the file bytes [at, at + len(piece)); pieces come in file order, none skipped."""
        lo, hi = max(at, self._first), min(at + len(piece), self.end)
        if lo >= hi or self.full:
            return
        a, b = lo - at, hi - at
        last = piece.rfind(b"\0", a, b)
        if last < 0:
            self._carry += piece[a:b]
        else:
            if self._carry:  # the carried text ends at this piece's first NUL: search the two together
                first = piece.find(b"\0", a, b)
                text = self._carry + piece[a:first + 1]
                self._search(text, self._skip, len(text))
                self._search(piece, first + 1, last + 1)  # no copy: the NUL before is in view
            elif a < last + 1:
                self._search(piece, a + self._skip, last + 1)
            self._carry, self._skip = piece[last:b], 1  # the NUL stays in front, as context
        if len(self._carry) - self._skip > CARRY_LIMIT:
            self._carry, self._skip = self._carry[-CARRY_LIMIT - 1:], 1

    def _search(self, text: bytes, pos: int, endpos: int) -> None:
        if pos >= endpos:
            return
        found = self.found
        for match in self._matches(text, pos, endpos):
            found.setdefault(match, None)
            if self.full:
                return
