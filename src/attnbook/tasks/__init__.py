"""The tasks the book trains on: data generators, one tokenizer and one vocabulary.

* :mod:`~attnbook.tasks.vocab` — :func:`~attnbook.tasks.vocab.tokenize` and
  :class:`~attnbook.tasks.vocab.Vocabulary`, shared by every task;
* :mod:`~attnbook.tasks.lookup` — chapter 3's two-lookup task (previous and first token);
* :mod:`~attnbook.tasks.numbers` — chapter 5's complete Transformer: number words to digits (a translation task);
* :mod:`~attnbook.tasks.coref` — chapters 6-8: pronoun resolution in English and Chinese (its
  words in :mod:`~attnbook.tasks.coref_lexicon`); :mod:`~attnbook.tasks.shortcuts` — rules that
  skip a clue, the task's shortcut test; :mod:`~attnbook.tasks.counterfactuals` — sentences with
  one clue changed, the controls of chapters 6 and 8;
* :mod:`~attnbook.tasks.synthetic` — chapter 10's offset-copy and retrieval tasks;
* Part V: :mod:`~attnbook.tasks.translation` — dates and numbers, English <-> Chinese;
  :mod:`~attnbook.tasks.stories` — bAbI-style stories with questions and supporting facts;
  :mod:`~attnbook.tasks.summaries` — paragraphs with one key sentence;
  :mod:`~attnbook.tasks.digits` — scikit-learn's 8x8 digits, split and batched;
* :mod:`~attnbook.tasks.probes` — sentence sets for a pretrained word-piece model (Part VI):
  balanced coreference sentences with their shortcut baselines, and labelled paraphrase /
  non-paraphrase pairs.
"""
