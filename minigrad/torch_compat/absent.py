"""What minigrad leaves out of torch on purpose, and what to use instead.

``minigrad``, ``minigrad.nn``, ``minigrad.functional`` and ``minigrad.utils.data`` end with a module
``__getattr__`` (and ``minigrad.Tensor`` with a ``__getattr__``) that looks a missing name up here, so
``minigrad.compile`` or ``x.register_hook`` raises an AttributeError that explains itself instead of a bare one.
"""

NO_CONV = "minigrad has no convolutions or pooling (it teaches sequence models): use nn.Linear, RNNs or attention"
NO_GPU_TUNING = "minigrad has no mixed precision or GPU tuning switches: use float32 (or float64), no autocast"

MISSING = {
    "minigrad": {
        "compile": "minigrad has no compiler: call the model directly",
        "jit": "minigrad has no TorchScript: call the model directly",
        "einsum": "minigrad has no einsum: write it with matmul (@), permute/transpose, reshape and sum",
        "complex64": "minigrad has no complex numbers", "complex128": "minigrad has no complex numbers",
        "cfloat": "minigrad has no complex numbers", "cdouble": "minigrad has no complex numbers",
        "bfloat16": "NumPy has no bfloat16: use minigrad.float16 or minigrad.float32",
        "sparse": "minigrad has no sparse tensors: use dense ones",
        "sparse_coo_tensor": "minigrad has no sparse tensors: use dense ones",
        "autocast": NO_GPU_TUNING, "amp": NO_GPU_TUNING, "backends": NO_GPU_TUNING,
        "distributed": "minigrad runs on one device: no distributed training",
        "multiprocessing": "minigrad runs in one process",
        "onnx": "minigrad has no model export: save the state_dict with minigrad.save",
        "fft": "minigrad has no FFT: use numpy.fft on t.detach().numpy()",
        "meshgrid": "minigrad has no meshgrid (a vision helper): use x[:, None] and y[None, :], which broadcast",
        "linalg": "minigrad has no linalg module: matmul (@) is the linear algebra it differentiates",
        "Generator": "minigrad has one random generator, seeded by minigrad.manual_seed (no generator objects)",
        "get_rng_state": "minigrad has no generator state to save: call minigrad.manual_seed(seed) again",
        "set_rng_state": "minigrad has no generator state to restore: call minigrad.manual_seed(seed) again",
        "set_printoptions": "tensors print through NumPy: use numpy.set_printoptions",
        "DoubleTensor": "use minigrad.tensor(data, dtype=minigrad.double) (torch.DoubleTensor is legacy)",
        "IntTensor": "use minigrad.tensor(data, dtype=minigrad.int) (torch.IntTensor is legacy)",
        "BoolTensor": "use minigrad.tensor(data, dtype=minigrad.bool) (torch.BoolTensor is legacy)",
    },
    "minigrad.nn": {
        "Conv1d": NO_CONV, "Conv2d": NO_CONV, "MaxPool1d": NO_CONV, "MaxPool2d": NO_CONV,
        "AvgPool1d": NO_CONV, "AvgPool2d": NO_CONV,
        "BatchNorm1d": "minigrad has no batch norm: sequence models use nn.LayerNorm",
        "BatchNorm2d": "minigrad has no batch norm: sequence models use nn.LayerNorm",
        "LazyLinear": "minigrad has no lazy layers: give nn.Linear its in_features",
        "DataParallel": "minigrad runs on one device: no DataParallel",
        "parallel": "minigrad runs on one device: no nn.parallel",
        "EmbeddingBag": "use nn.Embedding and sum or mean over the bag dimension",
    },
    "minigrad.Tensor": {
        "stride": "a minigrad tensor holds a NumPy/CuPy array: t.numpy().strides gives its strides (in bytes)",
        "is_contiguous": "minigrad has no strides API: call x.contiguous() before x.view(...) (it copies only a "
                         "non-contiguous view), or use x.reshape(...)",
        "index_add_": "write x = x + F.one_hot(index, n).T.to(x.dtype) @ source for dim 0 (repeated indices add "
                      "up), or x[index] += source when the indices are distinct",
        "scatter_add_": "use x + minigrad.zeros_like(x).scatter(dim, index, src) when the indices are distinct, "
                        "or a one-hot matmul (F.one_hot(index, n)) when they repeat",
    },
    "minigrad.utils.data": {
        "IterableDataset": "minigrad's DataLoader indexes its dataset: subclass Dataset (__getitem__, __len__), "
                           "or iterate your generator and minigrad.stack each batch yourself",
        "WeightedRandomSampler": "draw the indices with minigrad.multinomial(weights, n, replacement=True) "
                                 "and pass them as sampler=",
        "get_worker_info": "minigrad's DataLoader has no worker processes (num_workers changes nothing)",
        "DistributedSampler": "minigrad runs on one device: use RandomSampler",
    },
    "minigrad.functional": {
        "conv1d": NO_CONV, "conv2d": NO_CONV, "max_pool1d": NO_CONV, "max_pool2d": NO_CONV,
        "avg_pool1d": NO_CONV, "avg_pool2d": NO_CONV,
        "batch_norm": "minigrad has no batch norm: sequence models use F.layer_norm",
        "interpolate": "minigrad has no resampling (it has no images)",
        "ctc_loss": "minigrad has no CTC loss",
        "multi_head_attention_forward": "use nn.MultiheadAttention (or F.scaled_dot_product_attention)",
        "embedding_bag": "use F.embedding and sum or mean over the bag dimension",
    },
}


def explain(module, name, out_of_place=None):
    """Raise the AttributeError for ``module.name``, with the reason and the alternative when known.
    out_of_place: for a missing in-place Tensor method (``floor_``), the method that exists (``floor``)."""
    reason = MISSING.get(module, {}).get(name)
    if reason is None and out_of_place is not None:
        reason = (f"minigrad has no in-place {name}: write x = x.{out_of_place}(...) (a new tensor), or "
                  f"x.copy_(x.{out_of_place}(...)) inside `with minigrad.no_grad():` to change x itself")
    if reason is None:
        if module == "minigrad.Tensor":
            raise AttributeError(f"'Tensor' object has no attribute '{name}'")
        raise AttributeError(f"module '{module}' has no attribute '{name}'")
    raise AttributeError(f"{module}.{name} is not in minigrad: {reason}")
