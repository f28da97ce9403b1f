"""Studies: experiments that train the book's models to answer one question, kept apart from the
kernels they measure (so that :mod:`attnbook.efficient` imports neither a model nor the training
loop).

* :mod:`~attnbook.studies.retrieval` — chapter 10: softmax against linear attention on
  retrieval, as the number of items grows.
"""
