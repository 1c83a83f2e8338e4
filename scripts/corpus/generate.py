"""Deterministic generator of synthetic instruction/response pairs (license-clean: every word
comes from topics.txt and the templates in responses.py, written for this repository).

    /usr/bin/python3 scripts/corpus/generate.py --pairs 30000 --seed 1 --show 20

prints statistics and a few examples. The same (pairs, seed) always gives the same list.
Each example, as the byte model sees it:  <|bos|> "Instruction: {instruction}\\nResponse: " {response} <|endoftext|>
"""
import argparse
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from generic import generic_topics  # noqa: E402
from responses import KINDS  # noqa: E402
from topics import load_topics  # noqa: E402

# The model's context: BOS + prompt + response + EOS must fit.
CONTEXT = 256
# Share of examples about an everyday noun without topic notes (generic.py).
GENERIC_SHARE = 0.3


def format_prompt(instruction):
    return f"Instruction: {instruction}\nResponse: "


def example_bytes(instruction, response):
    """UTF-8 bytes of one example, without the BOS and EOS tokens."""
    return (format_prompt(instruction) + response).encode("utf-8")


def vary_instruction(rng, instr):
    """Surface variety: lower-case start, missing final period, a polite prefix."""
    if rng.random() < 0.08 and not instr.endswith("?"):
        instr = "Please " + instr[0].lower() + instr[1:] if not instr.startswith("Please") else instr
    if rng.random() < 0.12:
        instr = instr[0].lower() + instr[1:]
    if rng.random() < 0.1 and instr.endswith("."):
        instr = instr[:-1]
    return instr


def vary_response(rng, resp):
    if rng.random() < 0.025:  # rarely, all capitals
        return resp.upper()
    return resp


def all_topics():
    """(topics with notes, everyday nouns that are not among them)."""
    noted = load_topics()
    names = {t.name.lower() for t in noted}
    return noted, [t for t in generic_topics() if t.name.lower() not in names]


def make_pairs(count, seed, exclude=frozenset()):
    """`count` distinct (instruction, response, topic keyword or None) triples, none in `exclude`."""
    noted, generic = all_topics()
    topics = noted + generic
    for t in topics:
        if not t.subject_facts:
            raise ValueError(f"topic {t.name!r} needs a fact that starts with {{S}}")
    rng = random.Random(seed)
    kinds = [k for k, _ in KINDS]
    weights = [w for _, w in KINDS]
    seen = set(exclude)
    out = []
    attempts = 0
    while len(out) < count:
        attempts += 1
        if attempts > 50 * count + 1000:
            raise RuntimeError(f"only {len(out)} distinct pairs after {attempts} attempts; the templates are too few")
        kind = rng.choices(kinds, weights)[0]
        topic = rng.choice(generic if rng.random() < GENERIC_SHARE else noted)
        instr, resp = kind(rng, topic, topics)
        instr, resp = vary_instruction(rng, instr), vary_response(rng, resp)
        if len(example_bytes(instr, resp)) + 2 > CONTEXT or (instr, resp) in seen:
            continue
        seen.add((instr, resp))
        keyword = None if kind.__name__ == "greeting" else topic.keyword
        out.append((instr, resp, keyword))
    return out


def criteria(response, keyword):
    """The rubric-style checks the recipe reports, on one response."""
    text = response.strip()
    return {
        "ends_with_question": text.endswith("?"),
        "mentions_topic": keyword is not None and keyword.lower() in text.lower(),
        "under_20_words": len(text.split()) < 20,
        "bullet_list": any(line.startswith("- ") for line in text.split("\n")),
        "all_caps": text.upper() == text and any(c.isalpha() for c in text),
    }


def statistics(pairs):
    n = len(pairs)
    total = sum(len(example_bytes(i, r)) + 2 for i, r, _ in pairs)
    counts = {}
    lengths = []
    for _, r, k in pairs:
        for name, ok in criteria(r, k).items():
            counts[name] = counts.get(name, 0) + int(ok)
        lengths.append(len(r.split()))
    lengths.sort()
    return {
        "pairs": n, "tokens": total, "distinct_instructions": len({i for i, _, _ in pairs}),
        "response_words": {"min": lengths[0], "median": lengths[n // 2], "max": lengths[-1]},
        "rates": {k: round(v / n, 3) for k, v in counts.items()},
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pairs", type=int, default=30000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--show", type=int, default=10, help="print this many examples")
    args = ap.parse_args()
    pairs = make_pairs(args.pairs, args.seed)
    for instr, resp, _ in random.Random(0).sample(pairs, min(args.show, len(pairs))):
        print(format_prompt(instr) + resp)
        print("---")
    print(statistics(pairs))


if __name__ == "__main__":
    main()
