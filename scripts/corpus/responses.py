"""Instruction kinds and their response builders for the synthetic corpus.

Every builder takes (rng, topic, topics) and returns (instruction, response). Variety is the
point: responses sometimes name the topic and sometimes say "they"/"it", sometimes end with a
question, sometimes use a bullet list, and sometimes ignore a length limit, so that rubric
criteria are met by some sampled completions and missed by others.
"""

PEOPLE = [
    ("Mia", "she", "her"), ("Leo", "he", "his"), ("Ana", "she", "her"), ("Omar", "he", "his"),
    ("Priya", "she", "her"), ("Ken", "he", "his"), ("Zoe", "she", "her"), ("Sam", "he", "his"),
    ("Lena", "she", "her"), ("Tom", "he", "his"), ("Nora", "she", "her"), ("Ravi", "he", "his"),
    ("Ella", "she", "her"), ("Jon", "he", "his"), ("Maya", "she", "her"), ("Ben", "he", "his"),
]

CATEGORY_PHRASES = {
    "animals": "animals", "weather": "kinds of weather", "food": "foods", "cities": "cities",
    "space": "things in space", "sports": "sports", "tools": "tools", "feelings": "feelings",
    "nature": "things in nature",
}

NUMBER_WORDS = {1: "one", 2: "two", 3: "three", 4: "four", 5: "five"}


def cap(text):
    return text[0].upper() + text[1:] if text else text


def words(text):
    return len(text.split())


def pick(rng, items, k):
    return rng.sample(list(items), k)


# ---- sentences shared by many kinds -------------------------------------------------------

def adjective_sentence(rng, t, pronoun):
    a = pick(rng, t.adjectives, 3)
    S, o = t.subject(True, pronoun), t.obj(pronoun)
    forms = [
        f"{S} {t.be} {a[0]} and {a[1]}.",
        f"{S} {t.be} {a[0]}, {a[1]} and {a[2]}.",
        f"{S} can be very {a[0]}.",
        f"Most people find {o} {a[0]}.",
        f"I think {t.subject(False, pronoun)} {t.be} {a[0]}.",
        f"{S} always {t.verb('seem')} so {a[0]}.",
        f"There is something {a[0]} about {o}.",
        f"{S} {t.be} {a[0]} in a way that is easy to love.",
    ]
    return rng.choice(forms)


def fact_sentences(rng, t, k, pronoun_after_first):
    """k distinct facts; the first may name the topic, later ones use the pronoun."""
    chosen = pick(rng, t.facts, min(k, len(t.facts)))
    return [t.fact(f, pronoun=(i > 0 and pronoun_after_first)) for i, f in enumerate(chosen)]


def opinion_sentence(rng, t, pronoun):
    S, o = t.subject(True, pronoun), t.obj(pronoun)
    return rng.choice([
        f"Many people love {o}.",
        f"{S} {t.be} more interesting than you might think.",
        f"It is fun to learn about {o}.",
        f"{S} {t.be} worth a closer look.",
        f"There is always more to learn about {o}.",
        f"I could talk about {o} all day.",
    ])


def closing_sentence(rng, t):
    return rng.choice([
        "I hope that helps.", "There is always more to learn.", "That is what makes them special."
        if t.plural else "That is what makes it special.", "Pretty amazing, right?", "Isn't that neat?",
        "That is my short answer.", "Have a great day!",
    ])


def follow_up_question(rng, t):
    o = t.obj(rng.random() < 0.5)
    pool = [
        f"Do you like {o}?", f"What do you think about {o}?", "Would you like to know more?",
        "Which part interests you most?", f"What is your favorite thing about {o}?",
        "Do you want another fact?", "What would you add?", "Can you think of another one?",
    ]
    if t.category in ("animals", "nature", "space", "tools", "music"):
        pool.append(f"Have you ever seen {o} up close?")
    if rng.random() < 0.3:
        return rng.choice(t.questions)
    return rng.choice(pool)


def maybe_tail(rng, t, sentences, p_question=0.2, p_closing=0.1):
    r = rng.random()
    if r < p_question:
        sentences.append(follow_up_question(rng, t))
    elif r < p_question + p_closing:
        sentences.append(closing_sentence(rng, t))
    return sentences


def opener(rng, p):
    if rng.random() < p:
        return rng.choice(["Sure! ", "Of course. ", "Okay. ", "Happy to help. ", "Great question. ", "Here you go. "])
    return ""


# ---- instruction kinds --------------------------------------------------------------------

def describe(rng, t, topics):
    instr = rng.choice([
        "Describe {n}.", "Describe {n} briefly.", "Please describe {n}.", "Can you describe {n}?",
        "Describe {n} for me.", "Tell me what {n} {be} like.",
    ]).format(n=t.name, be=t.be)
    pronoun = rng.random() < 0.35
    out = [adjective_sentence(rng, t, pronoun)]
    facts = pick(rng, t.facts, rng.choice([0, 1, 1, 2, 2, 3]))
    out += [t.fact(f, pronoun=rng.random() < 0.6) for f in facts]
    return instr, opener(rng, 0.1) + " ".join(maybe_tail(rng, t, out))


def one_sentence(rng, t, topics):
    instr = rng.choice([
        "Write one sentence about {n}.", "Write a sentence about {n}.", "Give me one sentence about {n}.",
        "Say one thing about {n}.", "Write a short sentence about {n}.", "Tell me one thing about {n}.",
    ]).format(n=t.name)
    pronoun = rng.random() < 0.3
    r = rng.random()
    if r < 0.45:
        out = [t.fact(rng.choice(t.facts), pronoun)]
    elif r < 0.8:
        out = [adjective_sentence(rng, t, pronoun)]
    else:
        out = [opinion_sentence(rng, t, pronoun)]
    if rng.random() < 0.1:  # sometimes it says more than asked
        out.append(t.fact(rng.choice(t.facts), True))
    return instr, " ".join(out)


def ask_question(rng, t, topics):
    instr = rng.choice([
        "Ask a question about {n}.", "Ask me a question about {n}.", "Write a question about {n}.",
        "What is a good question to ask about {n}?", "Ask something about {n}.", "Ask one question about {n}.",
    ]).format(n=t.name)
    pronoun = rng.random() < 0.3
    o, s = t.obj(pronoun), t.subject(False, pronoun)
    a = rng.choice(t.adjectives)
    generic = [
        f"What makes {o} so {a}?", f"Why {t.do} people like {o}?", f"What would the world be like without {o}?",
        f"Where can I learn more about {o}?", f"What is the most surprising thing about {o}?",
        f"How {t.do} {s} change over time?", f"What is your favorite fact about {o}?",
    ]
    r = rng.random()
    if r < 0.5:
        q = rng.choice(t.questions)
    elif r < 0.85:
        q = rng.choice(generic)
    else:  # a statement instead of a question
        return instr, rng.choice([
            f"I would like to know more about {o}.", f"I wonder what makes {o} so {a}.",
            f"Tell me why {s} {t.be} {a}.", f"I am curious about {o}.",
        ])
    prefix = rng.choice(["", "", "", "Here is one: ", "Here is a question: ", "Good question: ", "Let me ask this. "])
    out = prefix + q
    if rng.random() < 0.12:
        out += " " + rng.choice([x for x in generic + list(t.questions) if x != q])
    return instr, out


def list_facts(rng, t, topics):
    k = rng.choice([2, 3, 3, 3, 4])
    count = NUMBER_WORDS[k] if rng.random() < 0.8 else str(k)
    instr = rng.choice([
        "List {c} facts about {n}.", "Give me {c} facts about {n}.", "Name {c} facts about {n}.",
        "Share {c} facts about {n}.", "What are {c} facts about {n}?", "List {c} things about {n}.",
        "Tell me {c} facts about {n}.",
    ]).format(c=count, n=t.name)
    if rng.random() < 0.1:
        k = max(1, k + rng.choice([-1, 1]))  # sometimes the count is off
    pool = list(t.facts) + [f"{{S}} {t.be} {a}." for a in pick(rng, t.adjectives, 2)]
    raw = pick(rng, pool, min(k, len(pool)))
    style = rng.random()
    if style < 0.75:
        items = [t.fact(f, pronoun=rng.random() < 0.2) for f in raw]
        marks = ["- "] * len(items) if style < 0.65 else [f"{i + 1}. " for i in range(len(items))]
        body = "\n".join(m + x for m, x in zip(marks, items))
        intro = ""
        if rng.random() < 0.5:
            intro = rng.choice([
                f"Here are {NUMBER_WORDS.get(len(items), str(len(items)))} facts about {t.name}:",
                "Sure! Here are some facts:", f"Facts about {t.name}:", "Here you go:", "Here is what I know:",
            ])
        text = (intro + "\n" + body) if intro else body
    elif rng.random() < 0.5:  # prose, one fact after another
        text = " ".join(t.fact(f, pronoun=i > 0) for i, f in enumerate(raw))
    else:  # prose with ordinals; only facts about the topic itself fit after "First,"
        ordinals = ["First,", "Second,", "Third,", "Also,", "Finally,"]
        raw = [f for f in raw if f.startswith("{S}")] or [f"{{S}} {t.be} {t.adjectives[0]}."]
        text = " ".join(f"{ordinals[i]} {t.fact(f, pronoun=i > 0, start=False)}" for i, f in enumerate(raw))
    if rng.random() < 0.12:
        text += "\n" + follow_up_question(rng, t)
    return instr, text


def explain_under(rng, t, topics):
    limit = rng.choice([5, 6, 8, 10, 10, 12, 15, 15, 20, 20, 25, 30])
    instr = rng.choice([
        "Explain {n} in under {k} words.", "Explain {n} in fewer than {k} words.", "Describe {n} in under {k} words.",
        "In under {k} words, explain {n}.", "Use fewer than {k} words to describe {n}.",
        "Tell me about {n} in less than {k} words.",
    ]).format(n=t.name, k=limit)
    pronoun = rng.random() < 0.3
    pool = [t.fact(f, pronoun) for f in t.facts] + [adjective_sentence(rng, t, pronoun), opinion_sentence(rng, t, pronoun)]
    rng.shuffle(pool)
    obey = rng.random() < 0.8
    out, n = [], 0
    for s in pool:
        if n + words(s) < limit:
            out.append(s)
            n += words(s)
        elif not obey and out:
            out.append(s)  # one sentence too many
            break
        if len(out) >= 3:
            break
    if not out:
        a = pick(rng, t.adjectives, 2)
        out = [rng.choice([f"{cap(a[0])} and {a[1]}.", f"{t.subject(True, pronoun)} {t.be} {a[0]}."])]
    return instr, " ".join(out)


def say_nice(rng, t, topics):
    instr = rng.choice([
        "Say something nice about {n}.", "Write a compliment about {n}.", "Say something kind about {n}.",
        "What do you love about {n}?", "Write something positive about {n}.", "Say a kind word about {n}.",
    ]).format(n=t.name)
    pronoun = rng.random() < 0.35
    S, s, o = t.subject(True, pronoun), t.subject(False, pronoun), t.obj(pronoun)
    a = pick(rng, t.adjectives, 2)
    things = "things" if t.plural else "thing"
    some = "some of" if t.plural else "one of"
    out = [rng.choice([
        f"{S} {t.be} wonderfully {a[0]}.", f"I love how {a[0]} {s} can be.", f"{S} {t.verb('make')} the world a little brighter.",
        f"{S} {t.be} {some} the most {a[0]} {things} around.", f"Honestly, {s} {t.be} amazing.", f"Thank goodness for {o}!",
        f"{S} {t.be} {a[0]} and {a[1]}, and that is lovely.", f"Life is better with {o}.",
    ])]
    if rng.random() < 0.4:
        out.append(t.fact(rng.choice(t.facts), True))
    return instr, opener(rng, 0.08) + " ".join(maybe_tail(rng, t, out, 0.15, 0.1))


def give_tip(rng, t, topics):
    instr = rng.choice([
        "Give a tip about {n}.", "Give me a tip about {n}.", "Share a useful tip about {n}.",
        "What is a good tip for {n}?", "Give one piece of advice about {n}.", "Any tips about {n}?",
    ]).format(n=t.name)
    if rng.random() < 0.12 and len(t.tips) > 1:
        text = "\n".join("- " + x for x in pick(rng, t.tips, 2))
        if rng.random() < 0.5:
            text = "Here are two tips:\n" + text
        return instr, text
    prefix = rng.choice(["", "", "", "Tip: ", "Here is a tip: ", "My tip: ", "Try this: "])
    out = [prefix + rng.choice(t.tips)]
    r = rng.random()
    if r < 0.25:
        out.append(rng.choice(["It makes a big difference.", "You will be glad you did.", "It really helps.", "It is simple but it works."]))
    elif r < 0.4:
        out.append(t.fact(rng.choice(t.facts), True))
    return instr, " ".join(maybe_tail(rng, t, out, 0.12, 0.05))


def tell_about(rng, t, topics):
    instr = rng.choice([
        "Tell me about {n}.", "What do you know about {n}?", "Talk about {n}.", "Tell me something about {n}.",
        "What {be} {n}?", "Teach me about {n}.",
    ]).format(n=t.name, be=t.be)
    first_pronoun = rng.random() < 0.25
    facts = fact_sentences(rng, t, rng.choice([1, 2, 2, 3]), True)
    if first_pronoun:
        facts[0] = facts[0].replace(t.subject(True), t.subject(True, True), 1)
    out = facts
    if rng.random() < 0.5:
        out.insert(rng.randrange(len(out) + 1), adjective_sentence(rng, t, True))
    if rng.random() < 0.2:
        out.append(opinion_sentence(rng, t, True))
    return instr, opener(rng, 0.08) + " ".join(maybe_tail(rng, t, out))


def explain_child(rng, t, topics):
    instr = rng.choice([
        "Explain {n} to a child.", "Explain {n} to a five year old.", "How would you explain {n} to a kid?",
        "Explain {n} in simple words.",
    ]).format(n=t.name)
    pronoun = rng.random() < 0.3
    a = rng.choice(t.adjectives)
    out = [rng.choice([f"{t.subject(True, pronoun)} {t.be} {a}.", f"You know {t.name}? {cap(t.subject(False, True))} {t.be} {a}."])]
    out.append(t.fact(rng.choice(t.facts), True))
    if rng.random() < 0.3:
        out.append(rng.choice(["Isn't that cool?", "Neat, right?", "Fun, right?", "Want to learn more?"]))
    return instr, " ".join(out)


def do_you_like(rng, t, topics):
    instr = rng.choice(["Do you like {n}?", "What do you think of {n}?", "How do you feel about {n}?"]).format(n=t.name)
    o = t.obj(rng.random() < 0.5)
    a = rng.choice(t.adjectives)
    out = [rng.choice([
        f"Yes! I think {t.subject(False)} {t.be} {a}.", f"I do. {cap(t.subject(False, True))} {t.be} so {a}.",
        f"I like {o} a lot.", f"Not really, but I know many people love {o}.", f"I find {o} {a}.",
        "They are okay, I guess." if t.plural else "It is okay, I guess.",
    ])]
    if rng.random() < 0.5:
        out.append(t.fact(rng.choice(t.facts), True))
    if rng.random() < 0.3:
        out.append(rng.choice(["Do you?", "What about you?", "How about you?"]))
    return instr, " ".join(out)


def why_like(rng, t, topics):
    instr = rng.choice(["Why do people like {n}?", "What is good about {n}?", "Why should I care about {n}?"]).format(n=t.name)
    a = pick(rng, t.adjectives, 2)
    they = "they" if t.plural else "it"
    out = [rng.choice([
        f"People like {t.obj(rng.random() < 0.4)} because {they} {t.be} {a[0]} and {a[1]}.",
        f"Many people enjoy {t.name} because {they} {t.be} so {a[0]}.",
        f"{cap(they)} {t.be} {a[0]}, and that makes people happy.",
        f"Mostly because {they} {t.be} {a[0]}.",
    ])]
    if rng.random() < 0.6:
        out.append(t.fact(rng.choice(t.facts), True))
    return instr, " ".join(maybe_tail(rng, t, out, 0.15, 0.05))


def short_story(rng, t, topics):
    instr = rng.choice([
        "Tell a short story about {n}.", "Write a tiny story about {n}.", "Write a two sentence story about {n}.",
        "Tell me a story about {n}.",
    ]).format(n=t.name)
    name, he, his = rng.choice(PEOPLE)
    fact = t.fact(rng.choice(t.subject_facts), start=False)
    a = rng.choice(t.adjectives)
    when = rng.choice(["One morning", "One rainy day", "Last summer", "On a quiet evening", "Yesterday", "Once"])
    first = rng.choice([
        f"{when}, {name} read a book about {t.name}.", f"{when}, {name} asked {his} teacher about {t.name}.",
        f"{when}, {name} could not stop thinking about {t.name}.", f"{when}, {name} and {his} friend talked about {t.name}.",
    ])
    second = rng.choice([
        f"{cap(he)} learned that {fact[:-1]}, and {he} smiled.", f"{cap(he)} found out that {fact}",
        f"{cap(he)} decided that {t.name} {t.be} truly {a}.",
    ])
    out = [first, second]
    if rng.random() < 0.5:
        out.append(rng.choice([f"That night, {he} told everyone at dinner.", f"{cap(he)} wanted to learn even more.",
                               "It was a good day.", f"{cap(he)} never forgot it."]))
    return instr, " ".join(out)


def compare(rng, t, topics):
    others = [x for x in topics if x.category == t.category and x is not t]
    u = rng.choice(others)
    instr = rng.choice(["Compare {a} and {b}.", "How are {a} and {b} different?", "What is the difference between {a} and {b}?"]).format(a=t.name, b=u.name)
    a = rng.choice(t.adjectives)
    b = rng.choice([x for x in u.adjectives if x != a] or u.adjectives)
    out = [rng.choice([
        f"{cap(t.name)} {t.be} {a}, while {u.name} {u.be} {b}.", f"{cap(t.name)} {t.be} often {a}. {cap(u.name)} {u.be} more {b}.",
        f"I would say {t.name} {t.be} {a} and {u.name} {u.be} {b}.",
    ])]
    if rng.random() < 0.4:
        out.append(rng.choice(["Both are worth learning about.", "Each one is special in its own way.", "They are quite different."]))
    if rng.random() < 0.25:
        out.append(rng.choice(["Which do you like more?", "Which one do you prefer?"]))
    return instr, " ".join(out)


def one_word(rng, t, topics):
    instr = rng.choice(["Describe {n} in one word.", "Use one word to describe {n}.", "Sum up {n} in a single word."]).format(n=t.name)
    a = pick(rng, t.adjectives, 2)
    return instr, rng.choice([f"{cap(a[0])}.", f"{cap(a[0])}.", f"{cap(a[0])}!", f"Definitely {a[0]}.", f"{cap(a[0])} and {a[1]}."])


def short_poem(rng, t, topics):
    instr = rng.choice(["Write a short poem about {n}.", "Write a tiny poem about {n}.", "Write a poem about {n}."]).format(n=t.name)
    a = pick(rng, t.adjectives, 3)
    N = cap(t.name)
    frames = [
        [f"{N}, so {a[0]} and {a[1]},", "you make the whole day new.", f"I think of {t.obj(True)} when skies are blue,", "and smile the whole day through."],
        [f"Oh {t.name}, {a[0]} and {a[1]},", "you are a happy sight.", f"From morning sun to {a[2]} night,", "you make the world feel right."],
        [f"{N} {t.be} {a[0]},", f"{N} {t.be} {a[1]},", "I could write about them all day," if t.plural else "I could write about it all day,", "and still have more to say."],
        [f"A song for {t.name},", f"{a[0]} and {a[2]},", "a small and simple rhyme,", "to read another time."],
    ]
    lines = rng.choice(frames)
    if rng.random() < 0.3:
        lines = lines[:2]
    return instr, "\n".join(lines)


def name_three(rng, t, topics):
    phrase = CATEGORY_PHRASES.get(t.category)
    if phrase is None:
        return describe(rng, t, topics)
    k = rng.choice([2, 3, 3, 4])
    instr = rng.choice(["Name {c} {p}.", "List {c} {p}.", "Give me {c} {p}.", "What are {c} {p}?"]).format(c=NUMBER_WORDS[k], p=phrase)
    members = pick(rng, [x for x in topics if x.category == t.category], k)
    names = [cap(x.name) for x in members]
    r = rng.random()
    if r < 0.5:
        return instr, "\n".join("- " + x for x in names)
    listed = ", ".join(x if x[0].isupper() and members[i].name[0].isupper() else x.lower() for i, x in enumerate(names[:-1]))
    last = names[-1] if members[-1].name[0].isupper() else names[-1].lower()
    if r < 0.8:
        return instr, f"{cap(listed)} and {last}."
    return instr, f"Here are a few: {listed} and {last}. {rng.choice(['Can you name another?', 'There are many more.', ''])}".strip()


GREETINGS = {
    "Say hello.": ["Hello!", "Hi there!", "Hello, friend! How are you today?", "Hi! It is nice to meet you."],
    "Greet a new friend.": ["Hi! I am glad we met.", "Hello, new friend! What is your name?", "Welcome! It is great to meet you."],
    "Write a short greeting.": ["Good day to you!", "Hello and welcome!", "Hi there, I hope you are well."],
    "Say good morning.": ["Good morning! I hope you slept well.", "Good morning!", "Morning! Ready for a great day?"],
    "Say thank you to a friend.": ["Thank you so much for your help!", "Thanks, friend. You made my day.", "Thank you! I owe you one."],
    "Wish someone a happy birthday.": ["Happy birthday! I hope your day is wonderful.", "Happy birthday to you!", "Happy birthday! Have you made a wish?"],
    "Say goodbye to a friend.": ["Goodbye, friend! See you soon.", "Bye for now! Take care.", "See you later! Stay safe."],
    "Cheer me up.": ["You are doing better than you think.", "Chin up! Tomorrow is a new day.", "You matter, and today will get better. Want to talk about it?"],
}


def greeting(rng, t, topics):
    instr = rng.choice(sorted(GREETINGS))
    return instr, rng.choice(GREETINGS[instr])


KINDS = [
    (describe, 10), (one_sentence, 8), (ask_question, 8), (list_facts, 9), (explain_under, 9), (say_nice, 7),
    (give_tip, 7), (tell_about, 7), (explain_child, 4), (do_you_like, 4), (why_like, 4), (short_story, 4),
    (compare, 4), (one_word, 2), (short_poem, 3), (name_three, 3), (greeting, 1),
]
