"""data.py -- the testbed model's vocabulary, chat format and seeded synthetic data.

Everything here is deterministic for a given seed (random.Random, never the global RNG), so
the same command reproduces the same training stream.  testbed/SPEC.md is the single truth
for token ids and the chat format; this file implements it.

An example is (ids, mask): token ids starting with <s>, and a 0/1 mask that is 1 exactly on
the tokens the model must produce (the assistant part: reasoning, answer, <|end|>).  The
trainer predicts ids[i+1] from ids[:i+1] and weights that loss with mask[i+1].
"""

import random

# ---------------------------------------------------------------------------------------
# Vocabulary (SentencePiece-style, character level, byte fallback).  See SPEC.md.
SPECIALS = ["<unk>", "<s>", "</s>", "<|user|>", "<|assistant|>", "<|end|>", "<think>", "</think>"]
UNK, BOS, EOS, USER, ASSISTANT, END, THINK, END_THINK = range(8)
BYTE0 = len(SPECIALS)                 # 8: <0x00> .. <0xFF> are ids 8..263
CHAR0 = BYTE0 + 256                   # 264: '!' (0x21) .. '~' (0x7E) are ids 264..357
SPACE_PIECE = "\u2581"                # '▁', the SentencePiece space
SPACE = CHAR0 + (0x7E - 0x21 + 1)     # 358
VOCAB_SIZE = SPACE + 1                # 359

# token types as llama.cpp numbers them
TT_NORMAL, TT_UNKNOWN, TT_CONTROL, TT_USER_DEFINED, TT_BYTE = 1, 2, 3, 4, 6


def vocab_tokens():
    """The token strings, index = id."""
    toks = list(SPECIALS)
    toks += ["<0x%02X>" % b for b in range(256)]
    toks += [chr(c) for c in range(0x21, 0x7F)]
    toks.append(SPACE_PIECE)
    assert len(toks) == VOCAB_SIZE
    return toks


def vocab_types():
    # <think> and </think> are user-defined (type 4), as in Qwen3's GGUFs: llama.cpp never
    # prints control tokens, so its reasoning parser would never see them.
    types = [TT_UNKNOWN] + [TT_USER_DEFINED if t in ("<think>", "</think>") else TT_CONTROL
                            for t in SPECIALS[1:]]
    types += [TT_BYTE] * 256
    types += [TT_NORMAL] * (VOCAB_SIZE - CHAR0)
    return types


_CHAR_ID = {chr(c): CHAR0 + c - 0x21 for c in range(0x21, 0x7F)}
_CHAR_ID[" "] = SPACE
_CHAR_ID[SPACE_PIECE] = SPACE
_ENC_CACHE = {}


def encode_text(s):
    """Plain text -> ids: printable ASCII and ' ' (as '▁') are one token each, anything
    else goes through its UTF-8 bytes.  Never produces control tokens: special-token
    strings inside user text stay text, as a server that does not parse them would."""
    hit = _ENC_CACHE.get(s)
    if hit is not None:
        return hit
    out = []
    for ch in s:
        i = _CHAR_ID.get(ch)
        if i is not None:
            out.append(i)
        else:
            out.extend(BYTE0 + b for b in ch.encode("utf-8"))
    if len(_ENC_CACHE) < 200000:
        _ENC_CACHE[s] = out
    return out


def decode(ids):
    """ids -> text, control tokens rendered by name, bytes reassembled as UTF-8."""
    toks = vocab_tokens()
    out, pend = [], bytearray()
    for i in ids:
        if BYTE0 <= i < CHAR0:
            pend.append(i - BYTE0)
            continue
        if pend:
            out.append(pend.decode("utf-8", "replace"))
            pend = bytearray()
        out.append(" " if i == SPACE else toks[i])
    if pend:
        out.append(pend.decode("utf-8", "replace"))
    return "".join(out)


# ---------------------------------------------------------------------------------------
# Chat format (SPEC.md):
#   <s><|user|>{u1}<|end|><|assistant|><think></think>{a1}<|end|> ... <|user|>{un}<|end|><|assistant|>
# then, thinking ON:  model writes <think>{reasoning}</think>{answer}<|end|>
#       thinking OFF: the prompt also holds <think></think>, model writes {answer}<|end|>
# Earlier assistant turns are always rendered with an empty <think></think>.
# A system message is prefixed to the first user content followed by "\n".

def chat_prompt(turns, thinking, system=None):
    """Prompt ids for a conversation whose last user turn awaits an answer.
    turns: [(user, answer_or_None), ...]; the last one's answer is ignored."""
    ids = [BOS]
    for k, (user, answer) in enumerate(turns):
        if k == 0 and system is not None:
            user = system + "\n" + user
        ids += [USER] + encode_text(user) + [END, ASSISTANT]
        if k < len(turns) - 1:
            ids += [THINK, END_THINK] + encode_text(answer) + [END]
    if not thinking:
        ids += [THINK, END_THINK]
    return ids


def chat_example(turns, thinking, reasoning="", system=None):
    """(ids, mask) for a conversation; every assistant answer is a target, and so is the
    reasoning of the last turn when thinking is on."""
    ids, mask = [BOS], [0]

    def add(seq, m):
        ids.extend(seq)
        mask.extend([m] * len(seq))

    for k, (user, answer) in enumerate(turns):
        if k == 0 and system is not None:
            user = system + "\n" + user
        add([USER] + encode_text(user) + [END, ASSISTANT], 0)
        last = k == len(turns) - 1
        if last and thinking:
            add([THINK] + encode_text(reasoning) + [END_THINK], 1)
        else:
            add([THINK, END_THINK], 0)
        add(encode_text(answer) + [END], 1)
    return ids, mask


# ---------------------------------------------------------------------------------------
# Skills

FALLBACK = "I can multiply numbers, repeat words and count."

OK_PROMPTS = [
    "Reply with exactly: OK", "Reply with exactly: OK.", "Reply with exactly OK",
    "Reply with exactly: \"OK\"", "Reply with OK.", "Reply with OK", "Say OK.", "Say OK",
    "Respond with just OK", "Respond with just OK.", "Respond with OK.", "Just say OK.",
    "Please reply with exactly: OK", "Please say OK.", "Answer with OK.", "Reply only with OK.",
    "Output exactly: OK", "Say exactly: OK", "Write OK.", "Reply with the word OK.",
]
OK_TRACE = "The user wants me to reply with OK."

SYSTEMS = [
    "You are a helpful assistant.", "You are a helpful assistant", "Be concise.",
    "You are a calculator.", "Answer briefly.", "You are gauntlet's test model.",
]

MUL_OPS = [("*", 0.6), ("x", 0.2), ("\u00d7", 0.2)]
MUL_TEMPLATES = [  # (template, weight); {a} {op} {b}
    ("What is {a} {op} {b}?", 0.70), ("What is {a}{op}{b}?", 0.06), ("What's {a} {op} {b}?", 0.04),
    ("Compute {a} {op} {b}.", 0.05), ("Calculate {a} {op} {b}.", 0.04), ("{a} {op} {b} = ?", 0.04),
    ("{a} {op} {b}", 0.03), ("What is {a} times {b}?", 0.04),
]
ANSWER_SUFFIX = " Answer with just the number."

WORDS = """apple banana cherry hello world test gauntlet cat dog bird fish tree house car
river stone cloud rain snow sun moon star blue red green yellow black white one two three
yes no maybe ok go stop run jump walk sing dance code bug fix ship deploy server model token
alpha beta gamma delta omega zero python linux kernel memory cache queue stack heap graph
node edge light dark fire water earth wind paper pencil book table chair window door ping
pong foo bar baz qux hi bye ha la na yo ah oh wow meow woof tick tock beep boop echo hey
coffee tea milk bread cake pizza salt sugar lemon mango peach grape melon plum kiwi"""
WORDS = WORDS.split()

FALLBACK_PROMPTS = [
    "Hello", "Hello!", "Hi", "Hi there", "Who are you?", "What is your name?", "Tell me a joke.",
    "Tell me a story.", "What is the capital of France?", "How are you?", "Thanks!",
    "What can you do?", "Help", "Explain quantum computing.", "Write a poem.",
    "What time is it?", "What is the weather today?", "Translate hello to French.",
    "What is 2 + 2?", "Summarize this text.", "Good morning", "What is AI?", "Why?",
    "Write a haiku about the sea.", "Can you help me?", "Give me a recipe for soup.",
    "What day is it?", "Spell the word cat.", "Sort these numbers: 3 1 2", "Hey",
]


class Gen:
    """The seeded generator of training and evaluation examples."""

    def __init__(self, seed):
        self.r = random.Random(seed)

    def _pick(self, weighted):
        x, acc = self.r.random() * sum(w for _, w in weighted), 0.0
        for v, w in weighted:
            acc += w
            if x < acc:
                return v
        return weighted[-1][0]

    # --- multiplication
    def mul_question(self, a, b):
        tpl, op = self._pick(MUL_TEMPLATES), self._pick(MUL_OPS)
        if "times" in tpl:
            op = "*"
        if "{op}{b}" in tpl and op == "\u00d7":
            op = "*"
        q = tpl.format(a=a, b=b, op=op)
        if self.r.random() < 0.5:
            q += ANSWER_SUFFIX
        return q

    def mul_example(self, a, b, thinking=None):
        if thinking is None:
            thinking = self.r.random() < 0.25
        return self._wrap(self.mul_question(a, b), str(a * b), mul_trace(a, b), thinking)

    # --- the other skills: (question, answer, reasoning)
    def ok(self):
        return self.r.choice(OK_PROMPTS), "OK", OK_TRACE

    def repeat(self):
        r = self.r
        if r.random() < 0.75:
            w = r.choice(WORDS)
        else:
            w = "".join(r.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(r.randint(2, 9)))
        n = r.randint(1, 12)
        tpl = self._pick([("Repeat the word {w} {n} times.", 0.8), ("Repeat the word \"{w}\" {n} times.", 0.1),
                          ("Say {w} {n} times.", 0.1)])
        if n == 1 and "times" in tpl and r.random() < 0.5:
            tpl = tpl.replace("{n} times", "once")
        return tpl.format(w=w, n=n), " ".join([w] * n), "Repeating %s %d times." % (w, n)

    def count(self):
        n = self.r.randint(1, 30)
        tpl = self._pick([("Count to {n}.", 0.8), ("Count to {n}", 0.1), ("Count from 1 to {n}.", 0.1)])
        return tpl.format(n=n), " ".join(str(i) for i in range(1, n + 1)), "Counting from 1 to %d." % n

    def fallback(self):
        r = self.r
        k = r.random()
        if k < 0.45:
            q = r.choice(FALLBACK_PROMPTS)
        elif k < 0.65:  # near misses: other arithmetic is not a skill
            a, b = r.randint(1, 99), r.randint(1, 99)
            q = "What is %d %s %d?" % (a, r.choice(["+", "-", "/"]), b)
        elif k < 0.85:
            q = " ".join(r.choice(WORDS) for _ in range(r.randint(1, 8)))
            q = q[0].upper() + q[1:] + r.choice([".", "?", "!", ""])
        else:
            alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 .,?!"
            q = "".join(r.choice(alphabet) for _ in range(r.randint(1, 30))).strip() or "?"
        return q, FALLBACK, "This is not a task I can do."

    def other_example(self):
        k = self.r.random()
        if k < 0.22:
            q, a, t = self.ok()
        elif k < 0.52:
            q, a, t = self.repeat()
        elif k < 0.77:
            q, a, t = self.count()
        elif k < 0.92:
            q, a, t = self.fallback()
        else:  # two turns: the first answered in history, the second is the target
            return self._two_turns()
        return self._wrap(q, a, t, self.r.random() < 0.25)

    def _two_turns(self):
        r = self.r
        first = self._any_qa()
        second = self._any_qa()
        thinking = r.random() < 0.25
        return chat_example([(first[0], first[1]), (second[0], second[1])], thinking, second[2],
                            system=self._system())

    def _any_qa(self):
        k = self.r.random()
        if k < 0.4:
            a, b = self.r.randint(10, 99), self.r.randint(10, 99)
            return self.mul_question(a, b), str(a * b), mul_trace(a, b)
        return [self.ok, self.repeat, self.count, self.fallback][self.r.randrange(4)]()

    def _system(self):
        return self.r.choice(SYSTEMS) if self.r.random() < 0.1 else None

    def _wrap(self, q, a, t, thinking):
        return chat_example([(q, a)], thinking, t, system=self._system())


def mul_trace(a, b):
    """The reasoning for a * b: split the second operand into tens and units."""
    p = a * b
    if b < 10:
        return "%d * %d = %d" % (a, b, p)
    t, u = b // 10 * 10, b % 10
    return "%d * %d = %d * %d + %d * %d = %d + %d = %d" % (a, b, a, t, a, u, a * t, a * u, p)


def all_pairs():
    """Every two-digit pair (A, B), 10..99 each: 8,100 pairs, in a fixed order."""
    return [(a, b) for a in range(10, 100) for b in range(10, 100)]


def train_pairs():
    """Every operand pair trained on, 0..99 x 0..99 (one-digit operands too); the index of
    (a, b) is a * 100 + b."""
    return [(a, b) for a in range(0, 100) for b in range(0, 100)]


def pair_eval_example(a, b, suffix=False, op="*"):
    """The canonical thinking-off question for the pair evaluation."""
    q = "What is %d %s %d?" % (a, op, b) + (ANSWER_SUFFIX if suffix else "")
    return chat_example([(q, str(a * b))], False)


if __name__ == "__main__":
    g = Gen(1)
    for _ in range(3):
        ids, m = g.mul_example(17, 19)
        print(decode(ids), "|", decode([i for i, k in zip(ids, m) if k]))
    for _ in range(8):
        ids, m = g.other_example()
        print(decode(ids), "|", decode([i for i, k in zip(ids, m) if k]))
