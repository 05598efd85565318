"""Module-level tools, importable by Haystack's deserializer in the serialization tests."""

from __future__ import annotations


def read_note(name: str) -> dict[str, str]:
    """Read a note by name."""
    return {"name": name, "text": f"contents of {name}"}


def delete_note(name: str) -> str:
    """Delete a note."""
    return f"deleted {name}"
