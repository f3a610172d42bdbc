"""The training corpus: quotations from Debian's `fortunes` and `fortunes-min` packages.

A fortune file is a list of entries separated by lines holding a single '%'. Entries are read from a
fixed list of files in a fixed order, decoded as UTF-8 (entries that are not valid UTF-8 are
skipped), stripped of trailing whitespace on each line and of blank lines at both ends, and
de-duplicated (first occurrence kept). An entry goes to the held-out split when
crc32(entry) % HELDOUT_MODULUS == 0, so the split does not depend on file order or count.
Both splits are the entries joined by a blank line ("\n\n") and end with a newline.
"""
import os
import zlib

# The data files of fortunes-min ("fortunes") and fortunes (the rest). Left out: "ascii-art"
# (pictures, not text) and "translate-me" (mostly non-English).
FILES = [
    "art", "computers", "cookie", "debian", "definitions", "disclaimer", "drugs", "education",
    "ethnic", "food", "fortunes", "goedel", "humorists", "kids", "knghtbrd", "law", "linux",
    "linuxcookie", "literature", "love", "magic", "medicine", "men-women", "miscellaneous", "news",
    "paradoxum", "people", "perl", "pets", "platitudes", "politics", "pratchett", "riddles",
    "science", "songs-poems", "sports", "startrek", "tao", "wisdom", "work", "zippy",
]
HELDOUT_MODULUS = 20  # about 5% of the entries


def read_entries(corpus_dir):
    """Returns the de-duplicated entries of all FILES, in order. Raises OSError naming a missing file."""
    entries, seen = [], set()
    for name in FILES:
        path = os.path.join(corpus_dir, name)
        with open(path, "rb") as f:
            raw = f.read()
        chunk = []
        for line in raw.split(b"\n") + [b"%"]:
            if line.rstrip(b"\r") != b"%":
                chunk.append(line)
                continue
            try:
                text = b"\n".join(chunk).decode("utf-8")
            except UnicodeDecodeError:
                text = ""
            chunk = []
            lines = [l.rstrip() for l in text.split("\n")]
            while lines and not lines[0]:
                lines.pop(0)
            while lines and not lines[-1]:
                lines.pop()
            entry = "\n".join(lines)
            if entry and entry not in seen:
                seen.add(entry)
                entries.append(entry)
    return entries


def split(entries):
    """(train_text, heldout_text)."""
    train, held = [], []
    for e in entries:
        (held if zlib.crc32(e.encode("utf-8")) % HELDOUT_MODULUS == 0 else train).append(e)
    return "\n\n".join(train) + "\n", "\n\n".join(held) + "\n"
