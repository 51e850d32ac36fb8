#!/usr/bin/env python3
"""Lists words of service definitions that the Snowball English stemmer cuts to one stem although
WordNet relates them by no lemma and no derivation ("busy" and "business", "directly" and
"directions"): candidates for `own_stems` in src/a2s/search/search.cpp, to be read by hand (many
are related words WordNet does not link, "pollutant" and "pollution").

    python3 bench/a2s/stem_conflations.py [FILE_GLOB ...]

With no argument it reads bench/a2s/corpus/services and tests/a2s/*/services. Each line is a stem,
then its words in groups that WordNet relates, each word with how often it occurs. Reads
Debian's libstemmer (libstemmer0d) and wordnet-base (/usr/share/wordnet, or $HEARTH_WORDNET).
"""
import collections
import ctypes
import glob
import os
import re
import sys

WORDNET = os.environ.get("HEARTH_WORDNET") or "/usr/share/wordnet"
PARTS = {"n": "noun", "v": "verb", "a": "adj", "r": "adv"}
# Pointers that relate two words: derivation, pertainym, attribute, participle, similar.
RELATING = {"+", "\\", "=", "<", "&", "^"}
SUFFIXES = [("s", ""), ("es", ""), ("es", "e"), ("ies", "y"), ("ed", ""), ("ed", "e"),
            ("ing", ""), ("ing", "e"), ("er", ""), ("est", ""), ("er", "e"), ("men", "man"),
            ("ses", "s")]


class Stemmer:
    def __init__(self):
        lib = ctypes.CDLL("libstemmer.so.0d")
        lib.sb_stemmer_new.restype = ctypes.c_void_p
        lib.sb_stemmer_new.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
        lib.sb_stemmer_stem.restype = ctypes.c_void_p
        lib.sb_stemmer_stem.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int]
        lib.sb_stemmer_length.argtypes = [ctypes.c_void_p]
        self.lib = lib
        self.stemmer = lib.sb_stemmer_new(b"english", b"UTF_8")

    def stem(self, word):
        raw = word.encode()
        out = self.lib.sb_stemmer_stem(self.stemmer, raw, len(raw))
        return ctypes.string_at(out, self.lib.sb_stemmer_length(self.stemmer)).decode()


class WordNet:
    def __init__(self, folder):
        self.index = {}
        self.data = {}
        self.exceptions = collections.defaultdict(list)
        for part, name in PARTS.items():
            with open(os.path.join(folder, "index." + name), encoding="latin-1") as f:
                for line in f:
                    if line.startswith(" "):
                        continue
                    fields = line.split()
                    pointers = int(fields[3])
                    offsets = fields[4 + pointers + 2:]
                    self.index.setdefault(fields[0], []).extend((part, o) for o in offsets)
            with open(os.path.join(folder, "data." + name), "rb") as f:
                self.data[part] = f.read()
            with open(os.path.join(folder, name + ".exc"), encoding="latin-1") as f:
                for line in f:
                    fields = line.split()
                    self.exceptions[fields[0]].extend(fields[1:])

    def synset(self, part, offset):
        data = self.data["a" if part == "s" else part]
        at = int(offset)
        return data[at:data.index(b"\n", at)].decode("latin-1").split()

    def bases(self, word):
        """The lemmas `word` may be a form of (a rough morphy)."""
        out = {word, *self.exceptions.get(word, [])}
        for suffix, ending in SUFFIXES:
            if word.endswith(suffix) and len(word) > len(suffix) + 2:
                out.add(word[:-len(suffix)] + ending)
        return {b for b in out if b in self.index}

    def related(self, lemma):
        """The lemma's synonyms and the words its pointers in RELATING reach."""
        out = set()
        for part, offset in self.index.get(lemma, []):
            fields = self.synset(part, offset)
            words = int(fields[3], 16)
            out.update(fields[4 + 2 * k].lower() for k in range(words))
            at = 4 + 2 * words
            pointers = int(fields[at])
            at += 1
            for _ in range(pointers):
                symbol, target, target_part, source_target = fields[at:at + 4]
                at += 4
                if symbol not in RELATING:
                    continue
                to = int(source_target[2:], 16)
                other = self.synset(target_part, target)
                if 0 < to <= int(other[3], 16):
                    out.add(other[4 + 2 * (to - 1)].lower())
        return out


def main(patterns):
    if not patterns:
        patterns = ["bench/a2s/corpus/services/*", "tests/a2s/*/services/*"]
    counts = collections.Counter()
    for pattern in patterns:
        for path in glob.glob(pattern, recursive=True):
            with open(path, encoding="utf-8", errors="ignore") as f:
                text = re.sub(r"([a-z])([A-Z])", r"\1 \2", f.read())
            for word in re.findall(r"[A-Za-z]+", text):
                if len(word) >= 4:
                    counts[word.lower()] += 1
    stemmer = Stemmer()
    wordnet = WordNet(WORDNET)
    by_stem = collections.defaultdict(set)
    for word in counts:
        by_stem[stemmer.stem(word)].add(word)
    for stem, words in sorted(by_stem.items()):
        if len(words) < 2:
            continue
        words = sorted(words)
        bases = {w: wordnet.bases(w) for w in words}
        reach = {w: set().union(*(wordnet.related(b) | {b} for b in bases[w])) for w in words}
        group = {w: w for w in words}

        def root(w):
            while group[w] != w:
                w = group[w]
            return w

        for a in words:
            for b in words:
                if a < b and (bases[a] & bases[b] or reach[a] & bases[b] or reach[b] & bases[a]):
                    group[root(a)] = root(b)
        groups = collections.defaultdict(list)
        for w in words:
            groups[root(w)].append(w)
        known = [g for g in groups.values() if any(bases[w] for w in g)]
        if len(known) >= 2:
            print(stem, "|", " / ".join(",".join(f"{w}({counts[w]})" for w in g) for g in known))


if __name__ == "__main__":
    main(sys.argv[1:])
