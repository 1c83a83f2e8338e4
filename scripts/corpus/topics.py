"""Topics of the synthetic instruction corpus: parsed from topics.txt (written for this repository).

Each topic knows how to name itself at the start of a sentence, inside one, or by pronoun, and
the verb forms that agree with it, so the templates in responses.py read as plain English.
"""
import os
from dataclasses import dataclass

TOPICS_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "topics.txt")


@dataclass(frozen=True)
class Topic:
    name: str  # as written in an instruction: "cats", "the moon", "Paris"
    category: str
    plural: bool
    adjectives: tuple
    facts: tuple  # "{S}"/"{s}" mark the subject
    tips: tuple
    questions: tuple

    @property
    def keyword(self):
        """The word a rubric would look for ("mentions the moon" -> "moon")."""
        return self.name[4:] if self.name.startswith("the ") else self.name

    def subject(self, start, pronoun=False):
        if pronoun:
            word = "they" if self.plural else "it"
        else:
            word = self.name
        return word[0].upper() + word[1:] if start else word

    def obj(self, pronoun=False):
        if pronoun:
            return "them" if self.plural else "it"
        return self.name

    @property
    def possessive(self):
        return "their" if self.plural else "its"

    @property
    def be(self):
        return "are" if self.plural else "is"

    @property
    def do(self):
        return "do" if self.plural else "does"

    @property
    def have(self):
        return "have" if self.plural else "has"

    def verb(self, base):
        """Present tense of a regular verb agreeing with the topic: make -> make/makes."""
        if self.plural:
            return base
        if base.endswith(("s", "sh", "ch", "x", "o")):
            return base + "es"
        if base.endswith("y") and base[-2:-1] not in "aeiou":
            return base[:-1] + "ies"
        return base + "s"

    def fact(self, text, pronoun=False, start=True):
        """A fact with its subject filled in: by name, or by pronoun ("They ...")."""
        return text.replace("{S}", self.subject(start, pronoun)).replace("{s}", self.subject(False, pronoun))

    @property
    def subject_facts(self):
        """Facts whose subject is the topic itself (they can be embedded after "that")."""
        return tuple(f for f in self.facts if f.startswith("{S}"))


def load_topics(path=TOPICS_FILE):
    topics = []
    current = None

    def finish():
        if current is None:
            return
        name, category, number, adjectives, facts, tips, questions = current
        if len(adjectives) < 4 or len(facts) < 4 or not tips or not questions:
            raise ValueError(f"{path}: topic {name!r} needs 4+ adjectives, 4+ facts, a tip and a question")
        topics.append(Topic(name, category, number == "pl", tuple(adjectives), tuple(facts), tuple(tips), tuple(questions)))

    with open(path, encoding="utf-8") as f:
        for lineno, raw in enumerate(f, 1):
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            if line.startswith("@"):
                finish()
                parts = [p.strip() for p in line[1:].split("|")]
                if len(parts) != 4 or parts[2] not in ("pl", "sg"):
                    raise ValueError(f"{path}:{lineno}: expected '@name | category | pl/sg | adjectives'")
                current = (parts[0], parts[1], parts[2], [a.strip() for a in parts[3].split(",")], [], [], [])
                continue
            kind, _, text = line.partition(": ")
            if current is None or kind not in ("f", "t", "q") or not text:
                raise ValueError(f"{path}:{lineno}: expected 'f: ', 't: ' or 'q: ' inside a topic")
            {"f": current[4], "t": current[5], "q": current[6]}[kind].append(text)
    finish()
    return topics
