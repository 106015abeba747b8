"""A throwaway Django app for ``bench/bench_history_libraries.py``: the same tool-like and
prompt-like (parent + two inline child) models three times: no history, django-simple-history,
django-reversion. Never installed in the project."""
