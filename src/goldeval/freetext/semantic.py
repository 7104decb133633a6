"""Semantic similarity of a prediction and a reference: the cosine of their WordLlama embeddings.

**What it measures.** Each text is embedded by WordLlama (``l2_supercat``, 256 dimensions): the text is split into
Llama-2 tokens, each token is looked up in a static table of vectors (distilled from the token embeddings of large
language models), and the vectors are averaged. The score is the cosine of the two averages, in [-1, 1] (in practice
about 0 for unrelated English texts and 1 for the same text). Word order does not count, context does not change a
word's vector, and a long note averages many words: it rewards saying things *about the same topics in similar
words or their near-synonyms*, which token F1 and ROUGE miss ("vehicle" against "car").

**What it does not measure.** It is not clinical equivalence: negation (``no chest pain`` against ``chest pain``),
a wrong dose, laterality or a swapped value barely move an average of word vectors, and two notes that disagree on
the one fact that matters can score above 0.9. Use it beside token F1 / ROUGE and a human or an LLM judge, never as
a correctness score.

**Published figure.** WordLlama's README reports MTEB STS 67.91 for this model (``l2_supercat``, 256 dimensions),
against 78.90 for all-MiniLM-L6-v2 and 61.85 for GloVe 300d (dleemiller/WordLlama, "MTEB Results").

**Weights.** They ship inside the ``wordllama`` wheel (``wordllama/weights/l2_supercat_256.safetensors``, its
tokenizer under ``wordllama/tokenizers/``): they are loaded from the installed package with downloads disabled,
so a run never reaches a model hub. Install with ``pip install 'goldeval[semantic]'``.

Empty texts: a text that is empty or only whitespace has no embedding; two such texts score 1.0 and one scores 0.0
against any text, and the record says so (``empty``), as token F1 does for texts without tokens.
"""

from __future__ import annotations

import importlib.metadata
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from goldeval.errors import InputError, shorten

__all__ = ["MODEL", "MODEL_DIM", "SemanticModel", "load_model", "model_info", "semantic_similarity",
           "similarity_pairs"]

#: The WordLlama configuration whose weights ship in the ``wordllama`` wheel, and its dimension.
MODEL = "l2_supercat"
MODEL_DIM = 256
#: How many texts are embedded at once (WordLlama pads a batch to its longest text: small batches bound memory).
_BATCH = 32


class SemanticModel:
    """A loaded WordLlama model: its embedding function and what identifies it (:func:`model_info`)."""

    def __init__(self, inference: Any, info: dict[str, Any]) -> None:
        self.inference = inference
        self.info = info

    def embed(self, texts: list[str]) -> Any:
        """The float32 embeddings of *texts*, shape ``(len(texts), 256)``, as WordLlama's ``embed`` gives them."""
        return self.inference.embed(texts, batch_size=_BATCH)


def _missing() -> InputError:
    return InputError("semantic similarity needs the optional package 'wordllama' (its weights ship inside its "
                      "wheel, nothing is downloaded). Install it with: pip install 'goldeval[semantic]'.")


def model_info() -> dict[str, Any]:
    """What identifies the model, for the run key and the results: ``{"library", "library_version", "name",
    "dim", "weights"}`` (``weights``: the file inside the installed package).

    Raises:
        InputError: ``wordllama`` is not installed (with the command that installs it).
    """
    try:
        version = importlib.metadata.version("wordllama")
    except importlib.metadata.PackageNotFoundError:
        raise _missing() from None
    return {"library": "wordllama", "library_version": version, "name": MODEL, "dim": MODEL_DIM,
            "weights": f"wordllama/weights/{MODEL}_{MODEL_DIM}.safetensors"}


@lru_cache(maxsize=1)
def load_model() -> SemanticModel:
    """The WordLlama model, loaded once per process from the installed package, never from the network.

    Returns:
        A :class:`SemanticModel`.

    Raises:
        InputError: ``wordllama`` is not installed, or its wheel lacks the weights (a build without them).
    """
    info = model_info()
    try:  # an optional, heavy dependency (numpy, tokenizers, safetensors; ~0.8 s): imported only when used
        import wordllama
        from wordllama import WordLlama
    except ImportError:
        raise _missing() from None
    root = Path(wordllama.__file__).parent
    try:
        # The package root is passed as the cache folder: WordLlama finds the weights at <root>/weights and the
        # tokenizer at <root>/tokenizers there (its own project-root lookup misses the tokenizer), and
        # disable_download makes a missing file an error instead of a request to the hub.
        inference = WordLlama.load(MODEL, dim=MODEL_DIM, cache_dir=root, disable_download=True)
    except (FileNotFoundError, OSError) as exc:
        raise InputError(f"semantic similarity: the WordLlama weights are not in the installed package {root} ({exc}). "
                         "Reinstall it from its wheel: pip install --force-reinstall 'goldeval[semantic]'.") from None
    return SemanticModel(inference, info)


def _check(texts: Sequence[Any], side: str) -> list[str]:
    for i, t in enumerate(texts):
        if not isinstance(t, str):
            raise InputError(f"similarity_pairs: {side}[{i}] must be a str, got {type(t).__name__} {shorten(t)}.")
    return list(texts)


def similarity_pairs(predictions: Sequence[str], references: Sequence[str], *,
                     model: SemanticModel | None = None) -> list[float]:
    """Cosine similarity of each prediction's embedding with its reference's.

    Args:
        predictions: Model outputs, shape ``(n,)``. references: Gold texts, shape ``(n,)``.
        model: A loaded model (default: :func:`load_model`).

    Returns:
        One float per pair in [-1, 1], in order (the cosine of the two float32 embeddings, computed in float64).
        Both texts empty or whitespace: 1.0; exactly one: 0.0.

    Raises:
        InputError: sequences of different lengths, a text that is not a ``str``, or ``wordllama`` missing.

    Source:
        WordLlama ``WordLlamaInference.similarity`` (cosine of average-pooled token embeddings), batched.

    Example:
        >>> round(similarity_pairs(["i went to the car"], ["i went to the pawn shop"])[0], 4)
        0.0664
    """
    if len(predictions) != len(references):
        raise InputError(f"similarity_pairs: {len(predictions)} predictions but {len(references)} references; pass "
                         "one reference per prediction.")
    preds, refs = _check(predictions, "predictions"), _check(references, "references")
    out = [0.0] * len(preds)
    todo = []
    for i, (p, r) in enumerate(zip(preds, refs)):
        ep, er = not p.strip(), not r.strip()
        if ep or er:
            out[i] = 1.0 if ep and er else 0.0
        else:
            todo.append(i)
    if not todo:
        return out
    m = model or load_model()
    a = m.embed([preds[i] for i in todo]).astype(np.float64)
    b = m.embed([refs[i] for i in todo]).astype(np.float64)
    dots = np.einsum("ij,ij->i", a, b)
    norms = np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1)
    # a text of tokens that all map to the zero vector has no direction: scored 0.0, as an unrelated text
    cos = np.divide(dots, norms, out=np.zeros_like(dots), where=norms > 0)
    for i, c in zip(todo, cos.tolist()):
        out[i] = min(1.0, max(-1.0, c))  # (rounding can put the cosine of a text with itself a hair above 1)
    return out


def semantic_similarity(prediction: str, reference: str) -> float:
    """Cosine similarity of the WordLlama embeddings of two texts (see the module docstring for what it means).

    Args:
        prediction: Model output, any length. reference: Gold text, any length.

    Returns:
        A float in [-1, 1]. Both texts empty or whitespace: 1.0; exactly one: 0.0.

    Raises:
        InputError: a text that is not a ``str``, or ``wordllama`` not installed.

    Source:
        WordLlama (D. L. Miller, 2024), ``l2_supercat`` 256-d; its README's example gives 0.0664 for
        "i went to the car" against "i went to the pawn shop".

    Example:
        >>> round(semantic_similarity("i went to the vehicle", "i went to the car"), 4)
        0.7442
    """
    return similarity_pairs([prediction], [reference])[0]
