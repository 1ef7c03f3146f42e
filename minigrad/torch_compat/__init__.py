"""PyTorch compatibility: what makes minigrad answer to PyTorch's names, forms and rules.

Nothing here teaches a layer or a backward; it lets a program written for torch run
on minigrad, and lets a student check minigrad against torch.  Read the course's
code first (tensor.py, autograd.py, functions/, nn/); come here to see how a torch
habit is honoured.

    absent.py            names torch has and minigrad leaves out on purpose, and what to use instead
    arguments.py         arguments torch takes in several forms (sizes, dims, array-likes) -> one form
    promotion.py         dtype promotion where torch's rules differ from NumPy's
    numpy_interop.py     NumPy meets a Tensor as it meets a CPU torch tensor (np.asarray(t), np.exp(t))
    devices.py           minigrad.device, as torch.device
    return_types.py      the named tuples of max(dim), topk, sort, as torch.return_types
    tensor_math.py       torch.Tensor's arithmetic beyond the operators (outer, dot, cumprod, ...)
    in_place_methods.py  torch.Tensor's in-place methods beyond tensor.py's (x.clamp_, x.exp_, ...)
"""
