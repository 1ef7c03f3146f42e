"""Datasets that need no download: generated tasks, standard-library prose, and loaders for your files."""
from . import synthetic
from .corpus import STDLIB_MODULES, read_text, stdlib_corpus
from .loaders import load_embeddings, load_parallel, load_text_folder, read_vectors
from .synthetic import (adding_problem, copy_task, dates, reverse_task, sentiment, sine_waves, time_series,  # noqa: F401
                        translation)
