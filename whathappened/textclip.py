"""Cutting text for display: at a word boundary, never mid-word, and saying so with an ellipsis."""

from __future__ import annotations


def clip(text: str, limit: int) -> str:
    """At most ``limit`` characters of ``text`` with its whitespace folded; a cut ends at a word boundary (unless
    the last word is longer than half the room) and with an ellipsis."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    space = cut.rfind(" ")
    return (cut[:space] if space > limit // 2 else cut).rstrip(" ,;:") + "…"
