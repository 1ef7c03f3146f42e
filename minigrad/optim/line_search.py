"""The strong Wolfe line search that LBFGS uses (Nocedal & Wright, Numerical Optimization, algorithms 3.5-3.6).

Along a direction d from x, find a step t whose loss f(x + t d) and slope g(x + t d) . d satisfy

    sufficient decrease:   f(t) <= f(0) + c1 t f'(0)
    curvature:             |f'(t)| <= c2 |f'(0)|              (f'(t) = g(x + t d) . d)

First widen t until a bracket [t_lo, t_hi] surely holds such a point, then shrink the bracket
(zoom), each new trial at the minimum of the cubic through both ends' values and slopes.
The same steps, in the same order, as torch.optim.LBFGS's, so the iterates agree.
"""


def cubic_minimum(x1, f1, g1, x2, f2, g2, bounds=None):
    """The minimiser of the cubic with values f1, f2 and slopes g1, g2 at x1, x2, clipped to bounds
    (default: between x1 and x2); the midpoint when the cubic has no minimum."""
    low, high = bounds if bounds is not None else (min(x1, x2), max(x1, x2))
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    d2_square = d1 ** 2 - g1 * g2
    if d2_square < 0:
        return (low + high) / 2.0
    d2 = d2_square ** 0.5
    if x1 <= x2:
        minimum = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
    else:
        minimum = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
    return min(max(minimum, low), high)


def strong_wolfe(evaluate, t, d, f, g, gtd, c1=1e-4, c2=0.9, tolerance_change=1e-9, max_ls=25):
    """evaluate(t) -> (loss, flat gradient) at x + t d.  f, g, gtd: loss, gradient and slope at t = 0.

    Returns (loss, gradient, t, evaluations) at the step found.
    """
    d_max = abs(d).max()                                 # how far one unit of t moves x, at most
    f_new, g_new = evaluate(t)
    evaluations = 1
    gtd_new = g_new.dot(d)
    t_prev, f_prev, g_prev, gtd_prev = 0, f, g.copy(), gtd
    done = False
    iteration = 0
    # 1. widen: find a bracket holding a point that satisfies both conditions
    while iteration < max_ls:
        if f_new > f + c1 * t * gtd or (iteration > 1 and f_new >= f_prev):
            bracket = [[t_prev, f_prev, g_prev, gtd_prev], [t, f_new, g_new.copy(), gtd_new]]
            break
        if abs(gtd_new) <= -c2 * gtd:                    # both conditions hold at t
            bracket, done = [[t, f_new, g_new, gtd_new]], True
            break
        if gtd_new >= 0:                                 # the slope turned: a minimum lies behind
            bracket = [[t_prev, f_prev, g_prev, gtd_prev], [t, f_new, g_new.copy(), gtd_new]]
            break
        t_next = cubic_minimum(t_prev, f_prev, gtd_prev, t, f_new, gtd_new,
                               bounds=(t + 0.01 * (t - t_prev), t * 10))
        t_prev, f_prev, g_prev, gtd_prev = t, f_new, g_new.copy(), gtd_new
        t = t_next
        f_new, g_new = evaluate(t)
        evaluations += 1
        gtd_new = g_new.dot(d)
        iteration += 1
    if iteration == max_ls:
        bracket = [[0, f, g, None], [t, f_new, g_new, None]]
    # 2. zoom: shrink the bracket; "low" is the end with the smaller loss
    insufficient_progress = False
    low, high = (0, 1) if bracket[0][1] <= bracket[-1][1] else (1, 0)
    while not done and iteration < max_ls:
        ends = (bracket[0][0], bracket[1][0])
        if abs(ends[1] - ends[0]) * d_max < tolerance_change:
            break
        t = cubic_minimum(bracket[0][0], bracket[0][1], bracket[0][3], bracket[1][0], bracket[1][1], bracket[1][3])
        # keep the trial 10% of the bracket away from its ends, unless the last trial was fine
        margin = 0.1 * (max(ends) - min(ends))
        if min(max(ends) - t, t - min(ends)) < margin:
            if insufficient_progress or t >= max(ends) or t <= min(ends):
                t = max(ends) - margin if abs(t - max(ends)) < abs(t - min(ends)) else min(ends) + margin
                insufficient_progress = False
            else:
                insufficient_progress = True
        else:
            insufficient_progress = False
        f_new, g_new = evaluate(t)
        evaluations += 1
        gtd_new = g_new.dot(d)
        iteration += 1
        if f_new > f + c1 * t * gtd or f_new >= bracket[low][1]:
            bracket[high] = [t, f_new, g_new.copy(), gtd_new]
            low, high = (0, 1) if bracket[0][1] <= bracket[1][1] else (1, 0)
        else:
            if abs(gtd_new) <= -c2 * gtd:
                done = True
            elif gtd_new * (bracket[high][0] - bracket[low][0]) >= 0:
                bracket[high] = bracket[low]
            bracket[low] = [t, f_new, g_new.copy(), gtd_new]
    t, f_new, g_new, _ = bracket[low]
    return f_new, g_new, t, evaluations
