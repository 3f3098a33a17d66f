"""A naive Dou Dizhu oracle written from the rules text, sharing no code with the engine.

A move is named by (cards, type, main rank): ``cards`` a rank string, ``type`` RLCard's
name (chains with their length), ``main`` the lowest main rank (plane, chain, trio, four).
"""

from __future__ import annotations

from itertools import product

ORDER = "3456789TJQKA2BR"
A, TWO, B, R = 11, 12, 13, 14


def _counts(cards: str) -> list[int]:
    return [cards.count(ch) for ch in ORDER]


def _text(c: list[int]) -> str:
    return "".join(ORDER[i] * n for i, n in enumerate(c))


def _run(c: list[int], start: int, length: int, k: int) -> bool:
    return start + length - 1 <= A and all(c[r] >= k for r in range(start, start + length))


def _solo_wings_ok(w: list[int], start: int, length: int, rules) -> bool:
    if w[B] and w[R] and not rules.joker_pair_wings:
        return False
    for r, n in enumerate(w):
        if n == 0:
            continue
        if start <= r < start + length and not rules.wing_same_rank:
            return False
        if n == 4 or (n >= 2 and not rules.solo_wings_may_pair) or (n == 3 and not rules.solo_wings_may_trio):
            return False
        next_to = r == start - 1 or (r == start + length and r <= A)
        if n == 3 and next_to and not rules.trio_wing_adjacent:
            return False
    return True


def _pair_wings_ok(w: list[int], rules) -> int:
    """Number of pair wings, or -1 when the cards are not pair wings."""
    pairs = 0
    for r, n in enumerate(w):
        if n % 2 or r >= B and n or (n == 4 and rules.pair_wings_distinct):
            return -1
        pairs += n // 2
    return pairs


def interpretations(cards: str, rules) -> set[tuple[str, str, int]]:
    """Every reading of ``cards`` as a move under ``rules`` (empty: no move)."""
    c = _counts(cards)
    n = sum(c)
    out: set[tuple[str, str, int]] = set()
    held = [r for r in range(15) if c[r]]
    if n == 1:
        out.add(("solo", held[0]))
    if n == 2 and c[B] and c[R]:
        out.add(("rocket", B))
    if n == 2 and len(held) == 1:
        out.add(("pair", held[0]))
    if n == 3 and len(held) == 1:
        out.add(("trio", held[0]))
    if n == 4 and len(held) == 1:
        out.add(("bomb", held[0]))
    for r in range(13):
        rest = c.copy()
        if rest[r] >= 3:
            rest[r] -= 3
            w = [x for x in range(15) if rest[x]]
            if n == 4 and w != [r]:
                out.add(("trio_solo", r))
            if n == 5 and len(w) == 1 and rest[w[0]] == 2 and w[0] != r:
                out.add(("trio_pair", r))
        if c[r] == 4 and rules.four_with_two:
            rest = c.copy()
            rest[r] = 0
            if n == 6 and _solo_wings_ok(rest, r, 1, rules):
                out.add(("four_two_solo", r))
            if n == 8 and _pair_wings_ok(rest, rules) == 2:
                out.add(("four_two_pair", r))
    for start in range(12):
        for length in range(2, 13):
            if length >= 5 and n == length and _run(c, start, length, 1) and max(c) == 1:
                out.add((f"solo_chain_{length}", start))
            if 3 <= length <= 10 and n == 2 * length and _run(c, start, length, 2) and max(c) == 2:
                out.add((f"pair_chain_{length}", start))
            if length <= 6 and n == 3 * length and _run(c, start, length, 3) and max(c) == 3:
                out.add((f"trio_chain_{length}", start))
            if not _run(c, start, length, 3):
                continue
            w = c.copy()
            for r in range(start, start + length):
                w[r] -= 3
            if length <= 5 and n == 4 * length and _solo_wings_ok(w, start, length, rules):
                out.add((f"trio_solo_chain_{length}", start))
            if length <= 4 and n == 5 * length and _pair_wings_ok(w, rules) == length:
                out.add((f"trio_pair_chain_{length}", start))
    return {(cards, t, m) for t, m in out}


def beats(move: tuple[str, str, int], prev: tuple[str, str, int], rules) -> bool:
    _, t, m = move
    _, pt, pm = prev
    if pt == "rocket":
        return t == "bomb" and rules.bombs_beat_rocket
    if t == "rocket":
        return True
    if t == "bomb":
        return pt != "bomb" or m > pm
    return t == pt and m > pm


def naive_legal(hand: str, prev: tuple[str, str, int] | None, rules) -> set[tuple[str, str, int]]:
    """Every sub-multiset of ``hand`` read every way, kept when it may be played here
    (with ``chain_skips_quad_head``, OpenSpiel's fault, applied as its README states)."""
    c = _counts(hand)
    moves: set[tuple[str, str, int]] = set()
    for sub in product(*[range(n + 1) for n in c]):
        if sum(sub):
            moves |= interpretations(_text(list(sub)), rules)
    if rules.chain_skips_quad_head:
        moves = {mv for mv in moves if not (mv[1].split("_chain")[0] in ("solo", "pair", "trio")
                                            and "_chain_" in mv[1] and c[mv[2]] == 4)}
    if prev is None:
        return moves
    return {("", "pass", 0)} | {mv for mv in moves if beats(mv, prev, rules)}
