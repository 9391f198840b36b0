"""A small data set in SciFact's file format, generated: the benches' own tests run on it.

SciFact itself never enters the repository (its licence); the benches read it from the directory
``HEADD_SCIFACT`` names. Their tests point that variable at this set instead: abstracts on
distinct topics (``corpus.jsonl.gz``), questions worded from them (``queries-train.jsonl``) and
which abstracts answer each (``qrels-train.tsv``), so a lexical ranker finds relevant documents.
"""

from __future__ import annotations

import gzip
import json
import random
from pathlib import Path

TOPICS = [
    "insulin",
    "microglia",
    "telomere",
    "antibiotic",
    "vaccine",
    "cholesterol",
    "dopamine",
    "melatonin",
    "ribosome",
    "collagen",
    "hemoglobin",
    "serotonin",
    "keratin",
    "cortisol",
    "thyroid",
    "platelet",
    "lymphocyte",
    "mitochondria",
    "osteoblast",
    "neutrophil",
]
FILLER = [
    "cells",
    "patients",
    "cohort",
    "trial",
    "expression",
    "levels",
    "response",
    "signaling",
    "pathway",
    "increased",
    "reduced",
    "observed",
    "mice",
    "human",
    "samples",
    "significant",
    "associated",
    "risk",
    "treatment",
]


def documents(count: int) -> list[tuple[str, str, str]]:
    """(id, title, text) abstracts: two per topic for the first topics, then fillers."""
    rnd = random.Random(11)
    out = []
    for i in range(count):
        topic = TOPICS[(i // 2) % len(TOPICS)]
        words = " ".join(rnd.choice(FILLER) for _ in range(40))
        title = f"{topic.capitalize()} study {i}"
        text = f"{topic.capitalize()} regulates {words}. The {topic} effect held in {i} samples."
        out.append((str(1000 + i), title, text))
    return out


def write_scifact(dest: Path, count: int = 60) -> Path:
    """Write the three files at ``dest`` (created); each query names a topic of two abstracts."""
    dest.mkdir(parents=True, exist_ok=True)
    docs = documents(count)
    with gzip.open(dest / "corpus.jsonl.gz", "wt", encoding="utf-8") as fh:
        for doc_id, title, text in docs:
            fh.write(json.dumps({"_id": doc_id, "title": title, "text": text}) + "\n")
    topics = sorted({TOPICS[(i // 2) % len(TOPICS)] for i in range(count)}, key=TOPICS.index)
    with open(dest / "queries-train.jsonl", "w", encoding="utf-8") as fh:
        for q, topic in enumerate(topics):
            fh.write(json.dumps({"_id": str(q), "text": f"Does {topic} regulate the response?"}))
            fh.write("\n")
    with open(dest / "qrels-train.tsv", "w", encoding="utf-8") as fh:
        fh.write("query-id\tcorpus-id\tscore\n")
        for q, topic in enumerate(topics):
            for i in range(count):
                if TOPICS[(i // 2) % len(TOPICS)] == topic and i < 2 * len(TOPICS):
                    fh.write(f"{q}\t{1000 + i}\t1\n")
    return dest
