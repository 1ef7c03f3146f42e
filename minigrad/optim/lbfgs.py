"""L-BFGS (Liu & Nocedal, 1989), as torch.optim.LBFGS: a quasi-Newton method that needs a closure."""
from .. import backend
from ..autograd import enable_grad, no_grad
from ..checks import grad_array
from .line_search import strong_wolfe
from .optimizer import Optimizer


class LBFGS(Optimizer):
    """``optimizer.step(closure)`` runs up to max_iter iterations; closure() clears the gradients,
    computes the loss, calls backward() and returns the loss.  All parameters form one flat vector x.

    Each iteration, with g the gradient at x and the last m = history_size pairs
    s_k = x_{k+1} - x_k, y_k = g_{k+1} - g_k (kept only when y.s > 1e-10):

        d = -H g      H: the inverse-Hessian estimate, applied by the two-loop recursion
                      (Nocedal & Wright, algorithm 7.4), starting from H_0 = (y.s / y.y) I
        x = x + t d   t = lr (the first iteration: min(1, 1 / |g|_1) * lr),
                      or the step a strong Wolfe line search finds (line_search_fn="strong_wolfe")

    It stops early when max |g| <= tolerance_grad, when the loss or max |t d| changes less
    than tolerance_change, or after max_eval evaluations of the closure (default max_iter * 5 / 4).
    The state (directions, history) carries over between calls to ``step``, as PyTorch's.
    """

    def __init__(self, params, lr=1, max_iter=20, max_eval=None, tolerance_grad=1e-7, tolerance_change=1e-9,
                 history_size=100, line_search_fn=None):
        if not lr >= 0:
            raise ValueError(f"LBFGS: lr must be >= 0, got {lr}")
        if line_search_fn not in (None, "strong_wolfe"):
            raise ValueError(f"LBFGS: line_search_fn must be None or 'strong_wolfe', got {line_search_fn!r}")
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        super().__init__(params, dict(lr=lr, max_iter=max_iter, max_eval=max_eval, tolerance_grad=tolerance_grad,
                                      tolerance_change=tolerance_change, history_size=history_size,
                                      line_search_fn=line_search_fn))
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS: parameter groups are not supported (one lr for all): pass the parameters")
        self.params = self.param_groups[0]["params"]

    # ------------------------------------------------------------------ x as one flat vector
    def flat_grad(self):
        xp = backend.array_module(self.params[0]._data)
        return xp.concatenate([grad_array("LBFGS.step", p).reshape(-1) if p.grad is not None
                               else xp.zeros(p.numel(), p._data.dtype)
                               for p in self.params])

    def move(self, t, d):
        """x <- x + t d, parameter by parameter."""
        offset = 0
        for p in self.params:
            self._subtract(p, -t * d[offset:offset + p.numel()].reshape(p.shape))
            offset += p.numel()

    def set_params(self, saved):
        with no_grad():
            for p, data in zip(self.params, saved):
                p._data[...] = data
                p._version[0] += 1

    def step(self, closure):
        """Up to max_iter iterations; returns the loss closure() gave first (before any update)."""
        if closure is None:
            raise TypeError("LBFGS.step needs a closure: a function that zeroes the gradients, computes the "
                            "loss, calls loss.backward() and returns the loss")
        group = self.param_groups[0]
        lr, history_size = group["lr"], group["history_size"]
        max_iter, max_eval = group["max_iter"], group["max_eval"]
        tolerance_grad, tolerance_change = group["tolerance_grad"], group["tolerance_change"]
        state = self.state.setdefault(self.params[0], {})
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)

        def evaluate():
            with enable_grad():
                return closure()

        first_loss = evaluate()
        loss = float(first_loss)
        evaluations = 1
        state["func_evals"] += 1
        g = self.flat_grad()
        if abs(g).max() <= tolerance_grad:
            return first_loss
        d, t = state.get("d"), state.get("t")
        old_dirs, old_steps, rho = state.get("old_dirs"), state.get("old_stps"), state.get("ro")
        H_diag, prev_g, prev_loss = state.get("H_diag"), state.get("prev_flat_grad"), state.get("prev_loss")

        iteration = 0
        while iteration < max_iter:
            iteration += 1
            state["n_iter"] += 1
            if state["n_iter"] == 1:                      # steepest descent to start
                d = -g
                old_dirs, old_steps, rho, H_diag = [], [], [], 1
            else:
                y, s = g - prev_g, d * t                   # y_k, s_k
                ys = y.dot(s)
                if ys > 1e-10:                             # keep the pair only if the curvature is positive
                    if len(old_dirs) == history_size:
                        old_dirs.pop(0), old_steps.pop(0), rho.pop(0)
                    old_dirs.append(y), old_steps.append(s), rho.append(1.0 / ys)
                    H_diag = ys / y.dot(y)
                # two-loop recursion: d = -H g
                alpha = [None] * len(old_dirs)
                q = -g
                for i in reversed(range(len(old_dirs))):
                    alpha[i] = old_steps[i].dot(q) * rho[i]
                    q = q - alpha[i] * old_dirs[i]
                d = q * H_diag
                for i in range(len(old_dirs)):
                    beta = old_dirs[i].dot(d) * rho[i]
                    d = d + (alpha[i] - beta) * old_steps[i]
            prev_g, prev_loss = g.copy(), loss
            t = min(1.0, 1.0 / abs(g).sum()) * lr if state["n_iter"] == 1 else lr
            gtd = g.dot(d)                                  # the slope along d
            if gtd > -tolerance_change:                     # not a descent direction: stop
                break

            step_evaluations = 0
            if group["line_search_fn"] == "strong_wolfe":
                start = [p._data.copy() for p in self.params]

                def evaluate_at(step):                       # loss and gradient at x + step d; x unchanged
                    self.move(step, d)
                    value = float(evaluate())
                    gradient = self.flat_grad()
                    self.set_params(start)
                    return value, gradient

                loss, g, t, step_evaluations = strong_wolfe(evaluate_at, t, d, loss, g, gtd,
                                                            max_ls=max_eval - evaluations)
                self.move(t, d)
                converged = abs(g).max() <= tolerance_grad
            else:
                self.move(t, d)
                converged = False
                if iteration != max_iter:                   # the last iteration's loss is not needed
                    loss = float(evaluate())
                    g = self.flat_grad()
                    converged = abs(g).max() <= tolerance_grad
                    step_evaluations = 1
            evaluations += step_evaluations
            state["func_evals"] += step_evaluations

            if iteration == max_iter or evaluations >= max_eval or converged:
                break
            if abs(d * t).max() <= tolerance_change or abs(loss - prev_loss) < tolerance_change:
                break

        state.update(d=d, t=t, old_dirs=old_dirs, old_stps=old_steps, ro=rho, H_diag=H_diag,
                     prev_flat_grad=prev_g, prev_loss=prev_loss)
        return first_loss
