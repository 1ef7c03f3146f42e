"""Losses written as single Functions, for numerical stability and speed."""
from .. import backend
from ..autograd import Function


def _reduce(xp, loss, reduction, count):
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    if reduction == "mean":
        return loss.sum() / count
    raise ValueError(f"reduction must be 'mean', 'sum' or 'none', got {reduction!r}")


def _classes_last(logits):
    """(N, C, d1, ...) -> (N*d1*..., C);  (N, C) stays."""
    xp = backend.array_module(logits)
    if logits.ndim == 2:
        return logits
    return xp.moveaxis(logits, 1, -1).reshape(-1, logits.shape[1])


def _check_targets(name, logits, target):
    if target.dtype.kind not in "iu":
        raise TypeError(f"{name}: targets must be integer class indices, got dtype {target.dtype}: use target.long()")
    if logits.ndim < 2:
        raise ValueError(f"{name}: expected input of shape (N, C) or (N, C, d1, ...), got {tuple(logits.shape)}")
    expected = (logits.shape[0],) + tuple(logits.shape[2:])
    if tuple(target.shape) != expected:
        hint = ""
        if logits.ndim >= 3 and tuple(target.shape) == tuple(logits.shape[:-1]):   # (N, T, V) with (N, T)
            move = "logits.transpose(1, 2)" if logits.ndim == 3 else "logits.movedim(-1, 1)"
            hint = (f"; the classes look like the last dimension ({logits.shape[-1]}): PyTorch's convention, "
                    f"and minigrad's, puts them in dimension 1: pass {move} (shape "
                    f"{(logits.shape[0], logits.shape[-1]) + tuple(logits.shape[1:-1])}), or flatten both: "
                    f"logits.reshape(-1, {logits.shape[-1]}) and target.reshape(-1)")
        elif logits.ndim >= 3 and target.ndim == 1 and target.size == logits.size // logits.shape[-1]:
            hint = (f"; the targets are flat, so flatten the logits too, classes last: "
                    f"logits.reshape(-1, {logits.shape[-1]})")     # (N, T, V) with (N*T,)
        # PyTorch: ValueError when only the batch sizes differ, RuntimeError for the other shapes
        error = ValueError if target.ndim == 1 and logits.ndim == 2 else RuntimeError
        raise error(
            f"{name}: input of shape {tuple(logits.shape)} (N, C, ...) needs targets of shape "
            f"{expected} (N, ...), got {tuple(target.shape)}{hint}"
        )


class CrossEntropy(Function):
    """Cross entropy from logits z (N, C) or (N, C, d1, ...) and class indices t.

        p = softmax(z),   q = (1 - s) onehot(t) + s / C   (s = label_smoothing)
        loss_n = -sum_c q_c log p_c
        dloss_n/dz = p - q

    Positions with t = ignore_index contribute nothing; 'mean' divides by the
    number of the other positions (as PyTorch).
    """

    @staticmethod
    def forward(ctx, logits, target, ignore_index, label_smoothing, reduction):
        _check_targets("cross_entropy", logits, target)
        if logits.dtype.kind != "f":
            raise TypeError(f"cross_entropy: logits must be floating point, got {logits.dtype}")
        xp = backend.array_module(logits, target)
        z = _classes_last(logits)                                   # (M, C)
        t = target.reshape(-1)                                      # (M,)
        n_classes = z.shape[1]
        keep = t != ignore_index
        bad = keep & ((t < 0) | (t >= n_classes))
        if bool(bad.any()):
            raise IndexError(
                f"cross_entropy: target {int(t[bad][0])} is not a class index in 0..{n_classes - 1} "
                f"(and not ignore_index={ignore_index})"
            )
        safe_t = xp.where(keep, t, 0)
        shifted = z - z.max(axis=1, keepdims=True)
        log_p = shifted - xp.log(xp.exp(shifted).sum(axis=1, keepdims=True))   # (M, C)
        rows = xp.arange(z.shape[0])
        nll = -log_p[rows, safe_t]
        if label_smoothing:
            nll = (1 - label_smoothing) * nll - label_smoothing * log_p.mean(axis=1)
        nll = nll * keep
        count = keep.sum()
        ctx.save_for_backward(log_p, safe_t, keep)
        ctx.count, ctx.smoothing, ctx.reduction = count, label_smoothing, reduction
        ctx.logits_shape = logits.shape
        loss = nll.reshape(target.shape) if reduction == "none" else nll
        return _reduce(xp, loss, reduction, count).astype(logits.dtype)

    @staticmethod
    def backward(ctx, dout):
        log_p, safe_t, keep = ctx.saved_tensors
        xp = backend.array_module(log_p)
        s = ctx.smoothing
        n_classes = log_p.shape[1]
        dz = xp.exp(log_p)                                         # p
        if s:
            dz -= s / n_classes                                    # p - s/C
        dz[xp.arange(dz.shape[0]), safe_t] -= 1 - s                # p - q
        if ctx.reduction == "none":
            scale = dout.reshape(-1, 1)
        elif ctx.reduction == "mean":
            scale = dout / ctx.count
        else:
            scale = dout
        dz *= keep[:, None] * scale                                # ignored rows get 0; in place keeps
                                                                   # dz's dtype (count is an int64 array)
        if len(ctx.logits_shape) > 2:
            n, c = ctx.logits_shape[0], ctx.logits_shape[1]
            dz = xp.moveaxis(dz.reshape((n,) + tuple(ctx.logits_shape[2:]) + (c,)), -1, 1)
        return dz, None, None, None, None


class NLLLoss(Function):
    """Negative log-likelihood from log-probabilities a (N, C) or (N, C, d1, ...).

        loss_n = -a[n, t_n].   dloss_n/da[n, c] = -[c = t_n]
    """

    @staticmethod
    def forward(ctx, log_probs, target, ignore_index, reduction):
        _check_targets("nll_loss", log_probs, target)
        xp = backend.array_module(log_probs, target)
        a = _classes_last(log_probs)
        t = target.reshape(-1)
        keep = t != ignore_index
        if bool((keep & ((t < 0) | (t >= a.shape[1]))).any()):
            raise IndexError(f"nll_loss: targets must be in 0..{a.shape[1] - 1} or ignore_index={ignore_index}")
        safe_t = xp.where(keep, t, 0)
        nll = -a[xp.arange(a.shape[0]), safe_t] * keep
        count = keep.sum()
        ctx.save_for_backward(safe_t, keep)
        ctx.count, ctx.reduction, ctx.shape = count, reduction, log_probs.shape
        loss = nll.reshape(target.shape) if reduction == "none" else nll
        return _reduce(xp, loss, reduction, count).astype(log_probs.dtype)

    @staticmethod
    def backward(ctx, dout):
        safe_t, keep = ctx.saved_tensors
        xp = backend.array_module(dout)
        n, c = ctx.shape[0], ctx.shape[1]
        m = safe_t.shape[0]
        if ctx.reduction == "none":
            scale = dout.reshape(-1)
        elif ctx.reduction == "mean":
            scale = xp.broadcast_to(dout / ctx.count, (m,))
        else:
            scale = xp.broadcast_to(dout, (m,))
        da = xp.zeros((m, c), dtype=dout.dtype)
        da[xp.arange(m), safe_t] = -scale * keep                   # -1 at the target class
        if len(ctx.shape) > 2:
            da = xp.moveaxis(da.reshape((n,) + tuple(ctx.shape[2:]) + (c,)), -1, 1)
        return da, None, None, None


class BCEWithLogits(Function):
    """Binary cross entropy from logits x and targets y in [0, 1]:

        loss = max(x, 0) - x y + log(1 + exp(-|x|))      (= -y log s - (1-y) log(1-s), s = sigmoid(x))
        dloss/dx = sigmoid(x) - y,   dloss/dy = -x
    """

    @staticmethod
    def forward(ctx, x, y, reduction):
        if tuple(x.shape) != tuple(y.shape):
            raise ValueError(
                f"binary_cross_entropy_with_logits: input {tuple(x.shape)} and target {tuple(y.shape)} "
                "must have the same shape"
            )
        xp = backend.array_module(x, y)
        loss = xp.maximum(x, 0) - x * y + xp.log1p(xp.exp(-xp.abs(x)))
        ctx.save_for_backward(x, y)
        ctx.reduction, ctx.count = reduction, x.size
        return _reduce(xp, loss, reduction, x.size)

    @staticmethod
    def backward(ctx, dout):
        x, y = ctx.saved_tensors
        xp = backend.array_module(x)
        scale = dout / ctx.count if ctx.reduction == "mean" else dout
        s = 0.5 * (1 + xp.tanh(0.5 * x))
        dx = (s - y) * scale if ctx.needs_input_grad[0] else None     # sigmoid(x) - y
        dy = -x * scale if ctx.needs_input_grad[1] else None          # -x
        return dx, dy, None


_EPSILON = 9.999999960041972e-13      # PyTorch's 1e-12 floor for p (1 - p), a float32 constant there


class BinaryCrossEntropy(Function):
    """Binary cross entropy from probabilities p in [0, 1] and targets t in [0, 1]:

        loss = -(t log p + (1 - t) log(1 - p)),  each log clamped at -100 (as PyTorch, so p = 0 or 1 is finite)
        dloss/dp = (p - t) / max(p (1 - p), 1e-12),   dloss/dt = log(1 - p) - log(p)   (not clamped, as torch)
    """

    @staticmethod
    def forward(ctx, p, t, reduction):
        if tuple(p.shape) != tuple(t.shape):
            raise ValueError(f"binary_cross_entropy: input {tuple(p.shape)} and target {tuple(t.shape)} "
                             "must have the same shape")
        xp = backend.array_module(p, t)
        if p.size and (bool((p < 0).any()) or bool((p > 1).any())):
            raise ValueError("binary_cross_entropy: input must hold probabilities in [0, 1] "
                             "(apply sigmoid first, or use binary_cross_entropy_with_logits on the logits)")
        log_p = xp.maximum(_quiet(xp, xp.log, p), -100)                # log p, at least -100
        log_q = xp.maximum(_quiet(xp, xp.log1p, -p), -100)            # log(1 - p), at least -100
        ctx.save_for_backward(p, t)
        ctx.reduction, ctx.count = reduction, p.size
        return _reduce(xp, -(t * log_p + (1 - t) * log_q), reduction, p.size)

    @staticmethod
    def backward(ctx, dout):
        p, t = ctx.saved_tensors
        xp = backend.array_module(p)
        scale = dout / ctx.count if ctx.reduction == "mean" else dout
        dp = dt = None
        if ctx.needs_input_grad[0]:
            dp = (p - t) / xp.maximum(p * (1 - p), _EPSILON) * scale    # (p - t) / (p (1 - p))
        if ctx.needs_input_grad[1]:
            dt = (_quiet(xp, xp.log1p, -p) - _quiet(xp, xp.log, p)) * scale    # log(1 - p) - log p
        return dp, dt, None


def _quiet(xp, log, values):
    """log(values) with log(0) = -inf and no NumPy divide-by-zero warning (CuPy never warns)."""
    if not hasattr(xp, "errstate"):
        return log(values)
    with xp.errstate(divide="ignore"):
        return log(values)
