"""Drawing category indices from weights (torch.multinomial), from the generator ``manual_seed`` sets."""
import numpy

from . import backend


def multinomial_indices(weights, num_samples, replacement=False):
    """int64 array of ``num_samples`` category indices per row of ``weights`` (C,) or (N, C).

    Row n draws index c with probability weights[n, c] / sum_c weights[n, c]
    (weights need not sum to 1).  Without replacement each index is drawn at
    most once, so num_samples <= C.  The draws happen on the host (one
    generator for every device, as ``manual_seed`` explains) and come back on
    the device of ``weights``.
    """
    device = backend.device_of(weights)
    host = backend.to_numpy(weights).astype(numpy.float64)
    if host.ndim not in (1, 2):
        raise ValueError(f"multinomial: weights must be (C,) or (N, C), got shape {host.shape}")
    rows = host.reshape(-1, host.shape[-1])
    n_categories = rows.shape[1]
    if not numpy.isfinite(rows).all() or (rows < 0).any():
        raise ValueError("multinomial: weights must be finite and non-negative")
    if (rows.sum(axis=1) <= 0).any():
        raise ValueError("multinomial: every row of weights needs a positive sum")
    if not replacement and num_samples > n_categories:
        raise ValueError(f"multinomial: cannot draw {num_samples} samples without replacement from "
                         f"{n_categories} categories; pass replacement=True")
    if not replacement and num_samples > (rows > 0).sum(axis=1).min():
        raise ValueError("multinomial: fewer categories with non-zero weight than num_samples "
                         "(without replacement); pass replacement=True")
    generator = backend.host_generator()
    draws = numpy.stack([
        generator.choice(n_categories, size=num_samples, replace=replacement, p=row / row.sum())
        for row in rows
    ])
    draws = draws.reshape(host.shape[:-1] + (num_samples,)).astype(numpy.int64)
    return backend.asarray(draws, device=device)
