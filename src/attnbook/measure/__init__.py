"""Measuring attention: FLOPs and bytes by formula and by count, memory, time.

* :mod:`~attnbook.measure.cost` — FLOPs and weight memory by formula, and counted as they run;
* :mod:`~attnbook.measure.memory` — resident memory around one call, in a fresh process;
* :mod:`~attnbook.measure.timing` — interleaved timings, medians, log-log slopes.
"""
