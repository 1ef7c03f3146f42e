"""Datasets: generated tasks, standard-library prose, the classic corpora that ship with minigrad
(Shakespeare, names by language, English-French pairs), the large ones with one download call
(IMDB, Multi30k), and loaders for your own files."""
from . import synthetic
from .corpus import STDLIB_MODULES, read_text, stdlib_corpus
from .downloads import DATASETS, ChecksumError, DownloadError, UnsafeArchiveError, cache_dir, download, imdb
from .loaders import load_embeddings, load_parallel, load_text_folder, read_vectors
from .shipped import LANGUAGES, SPLITS, names_by_language, shakespeare, translation_pairs
from .synthetic import (adding_problem, copy_task, dates, reverse_task, sentiment, sine_waves, time_series,  # noqa: F401
                        translation)
