"""Everyday nouns without topic notes, written for this repository. Responses about them can
only use general statements and must copy the noun from the instruction, which teaches the
model to mention whatever topic a user asks about, not only the topics of topics.txt.
"""
import random

from topics import Topic

PLURAL = """
giraffes bicycles umbrellas lemons bridges firefighters buses candles windows shoes hats
pencils notebooks clocks mirrors pillows blankets cookies sandwiches noodles tomatoes potatoes
onions strawberries bananas grapes peaches cherries mushrooms peppers cupcakes muffins
lions tigers bears wolves zebras monkeys sharks octopuses eagles ducks geese crows pigeons
butterflies ladybugs spiders snails squirrels hamsters goats sheep cows pigs chickens donkeys
camels kangaroos koalas seals otters beavers crabs jellyfish lizards snakes swans
castles towers lighthouses museums bakeries markets farms villages islands beaches caves lakes
ponds waterfalls valleys hills meadows parks playgrounds zoos stadiums theaters hospitals
kites balloons puzzles crayons paintings photographs letters postcards stamps coins keys
boxes baskets backpacks suitcases tents rockets planets satellites telescopes microscopes
magnets batteries wheels engines tractors trucks taxis subways ferries helicopters sailboats
cameras radios phones keyboards printers lamps fans stoves ovens fridges spoons forks cups
plates bowls kettles jars bottles buttons zippers socks gloves scarves boots jackets sweaters
dresses glasses watches rings necklaces gardens fences gates doors stairs roofs chimneys
bells drums flutes violins trumpets songs stories poems jokes riddles games toys dolls
marbles dominoes cards maps calendars newspapers magazines comics movies cartoons
friends neighbors grandparents babies nurses doctors farmers bakers pilots sailors painters
writers scientists inventors builders gardeners musicians dancers athletes students
holidays birthdays weekends mornings evenings seasons clouds puddles storms waves shells
pebbles rocks crystals leaves acorns pinecones roses tulips sunflowers daisies cactuses
"""

SINGULAR = """
music art history science friendship coffee chocolate summer winter autumn spring
kindness patience courage laughter silence sunshine moonlight breakfast lunch dinner
gardening cooking reading writing painting dancing hiking fishing knitting baking
photography poetry geography biology chemistry physics recycling electricity gravity
traffic weather money time nature technology the internet the ocean the forest the city
Berlin Madrid Lisbon Vienna Toronto Chicago Seoul Bangkok Nairobi Lima Oslo Dublin
"""

ADJECTIVES = [
    "interesting", "useful", "lovely", "special", "common", "simple", "fun", "important", "wonderful",
    "surprising", "nice", "popular", "amazing", "unusual", "helpful", "beautiful", "curious", "cheerful",
]

FACTS = [
    "{S} {be} more interesting than you might think.",
    "{S} {mean} different things to different people.",
    "{S} {have} a longer history than most people know.",
    "{S} {show} up in many stories and songs.",
    "{S} can be {a0} and {a1} at the same time.",
    "{S} {make} people curious.",
    "{S} {be} part of everyday life for many people.",
    "{S} {be} worth learning about.",
]


def generic_topics(seed=12345):
    """Topic objects for the nouns above, with general facts, tips and questions."""
    rng = random.Random(seed)
    out = []
    for words, plural in ((PLURAL, True), (SINGULAR, False)):
        for name in _names(words):
            adjectives = tuple(rng.sample(ADJECTIVES, 5))
            probe = Topic(name, "misc", plural, adjectives, (), (), ())
            forms = {"be": probe.be, "have": probe.have, "mean": probe.verb("mean"), "show": probe.verb("show"),
                     "make": probe.verb("make"), "a0": adjectives[0], "a1": adjectives[1], "S": "{S}"}
            facts = tuple(f.format(**forms) for f in FACTS)
            tips = (f"Read a little about {name} before you decide.", f"Ask a friend what they know about {name}.",
                    f"Take a closer look at {name} the next time you can.")
            questions = (f"What makes {name} special?", f"Where can I learn more about {name}?",
                         f"Why {probe.do} people like {name}?", f"What is the best thing about {name}?")
            out.append(Topic(name, "misc", plural, adjectives, facts, tips, questions))
    return out


def _names(words):
    """Splits a word list, keeping "the internet" style two-word names together."""
    tokens = words.split()
    names, i = [], 0
    while i < len(tokens):
        if tokens[i] == "the" and i + 1 < len(tokens):
            names.append("the " + tokens[i + 1])
            i += 2
        else:
            names.append(tokens[i])
            i += 1
    return names
