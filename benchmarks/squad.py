"""The SQuAD v1.1 evaluation script's answer normalisation and token F1, as source text for an anchor process.

The functions are the script's own (``evaluate-v1.1.py``: ``normalize_answer``, ``f1_score``), with its punctuation
set built once per call, as the script builds it. Benchmarks that time goldeval's token F1 against "a SQuAD-style
scorer" run this text, followed by their own reading loop, in a fresh interpreter (``python -c``), so the anchor
pays no import of goldeval and the two scripts can never drift apart (an earlier copy built the set once per
character and ran about 10× slower than the real script, which flattered goldeval).
"""

SQUAD_FUNCTIONS = r'''
import collections, re, string
def normalize_answer(s):
    def remove_articles(text):
        return re.sub(r"\b(a|an|the)\b", " ", text)
    def white_space_fix(text):
        return " ".join(text.split())
    def remove_punc(text):
        exclude = set(string.punctuation)
        return "".join(ch for ch in text if ch not in exclude)
    return white_space_fix(remove_articles(remove_punc(s.lower())))
def f1_score(prediction, ground_truth):
    p, g = normalize_answer(prediction).split(), normalize_answer(ground_truth).split()
    common = collections.Counter(p) & collections.Counter(g)
    num_same = sum(common.values())
    if num_same == 0:
        return 0.0
    precision, recall = num_same / len(p), num_same / len(g)
    return (2 * precision * recall) / (precision + recall)
'''
