"""An aclImdb-shaped folder of generated reviews, for running and timing `--data imdb` without IMDB.

    write_imdb_standin(root, reviews_per_class=1000, words=230)
    # root/imdb/aclImdb/{train,test}/{pos,neg}/<i>_<rating>.txt, and train/unsup/ as in the real archive

Each review is filler prose with a few clauses of ``minigrad.data.sentiment`` whose polarity is
the review's label, so a model can learn it; its length is what matters for timing.  The real
IMDB figure cannot be measured from these.
"""
import os
import random

from minigrad import data

FILLER = ("the a of and to in it this that was is for with as on his her they one all film movie story about "
          "from at by an be have had who what there so out when more some very just time like even would only "
          "well much after can scene scenes first two people into most other its character characters than "
          "watch seen make director actor actors role plays life years see way too also then where many").split()


def _review(rng, label, words, clauses):
    parts = [text for text, y in clauses if y == label]
    chosen = [rng.choice(parts) for _ in range(8)]
    filler = [rng.choice(FILLER) for _ in range(words - sum(len(c.split()) for c in chosen))]
    for clause in chosen:
        filler.insert(rng.randrange(len(filler) + 1), clause + " .")
    return " ".join(filler).capitalize() + "<br /><br />"


def write_imdb_standin(root, reviews_per_class=1000, words=230, seed=0):
    """Write the folder; returns root/imdb (what ``minigrad.data.download("imdb")`` would return)."""
    rng = random.Random(seed)
    clauses = data.sentiment(2000, seed=seed)
    folder = os.path.join(os.fspath(root), "imdb", "aclImdb")
    for split in ("train", "test"):
        for label, name in ((0, "neg"), (1, "pos")):
            os.makedirs(os.path.join(folder, split, name), exist_ok=True)
            for i in range(reviews_per_class):
                rating = rng.choice((1, 2, 3, 4) if label == 0 else (7, 8, 9, 10))
                with open(os.path.join(folder, split, name, f"{i}_{rating}.txt"), "w") as file:
                    file.write(_review(rng, label, words, clauses))
    os.makedirs(os.path.join(folder, "train", "unsup"), exist_ok=True)
    with open(os.path.join(folder, "train", "unsup", "0_0.txt"), "w") as file:
        file.write("an unlabeled review, which the loader must leave out")
    return os.path.join(os.fspath(root), "imdb")
