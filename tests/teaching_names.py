"""The torch names that classic teaching material uses, by namespace (issue 18).

Gathered by reading the programs, not generated: the PyTorch tutorials (the 60-minute blitz,
"learning PyTorch with examples", the three NLP-from-scratch tutorials: char-RNN classification,
char-RNN generation, seq2seq translation; word_language_model), d2l.ai's PyTorch chapters
(preliminaries, linear and softmax regression from scratch and concise, MLP, RNN from scratch and
concise, GRU/LSTM, seq2seq, attention, Transformer), the CS231n PyTorch notebook (assignment 2) and
the CS224n assignments (parser, NMT with attention), nanoGPT / minGPT / makemore, the Annotated
Transformer, and the IMDB sentiment tutorials' binary accuracy, ``torch.round(torch.sigmoid(preds))``;
``torch.autograd.Variable`` from the tutorials written before PyTorch 0.4 (the first char-RNN and
seq2seq tutorials, word_language_model's old ``repackage_hidden``), which torch still runs.
tests/test_teaching_names.py checks each one: present in minigrad with PyTorch's arguments
in PyTorch's order, or absent on purpose with an error that says what to use instead.

Vision-only names (conv, pooling, batch norm) are listed where these programs use them, so that a
learner who meets them sees why minigrad leaves them out.
"""

TORCH = """
tensor Tensor zeros ones zeros_like ones_like full full_like empty empty_like arange linspace eye
rand randn randint rand_like randn_like randint_like randperm normal bernoulli multinomial manual_seed
from_numpy as_tensor is_tensor numel clone detach
cat stack split chunk unbind reshape squeeze unsqueeze transpose permute flatten flip roll t
matmul mm bmm mv dot outer einsum
exp log sqrt rsqrt tanh sigmoid relu abs pow sin cos square sign softmax log_softmax
round floor ceil trunc
clamp clip max min maximum minimum argmax argmin amax amin sum mean prod std var norm logsumexp
cumsum cumprod sort argsort topk where gather scatter index_select masked_fill masked_select nonzero
tril triu repeat_interleave narrow select
isnan isinf allclose equal add sub mul div neg
no_grad enable_grad set_grad_enabled inference_mode
float32 float64 float16 float double half long int int64 int32 bool uint8 get_default_dtype
set_default_dtype device save load cuda nn optim utils FloatTensor LongTensor
DoubleTensor compile jit autocast amp backends linalg fft meshgrid
"""

TENSOR = """
shape size dim ndim numel dtype device item tolist numpy detach clone data grad requires_grad
requires_grad_ backward grad_fn is_leaf retain_grad
view view_as reshape reshape_as permute transpose t T mT contiguous unsqueeze squeeze flatten expand
expand_as repeat chunk split unbind narrow select flip roll
to cpu cuda float double long int bool half type type_as is_floating_point new_zeros new_ones new_full
new_tensor
sum mean max min amax amin argmax argmin std var norm prod logsumexp cumsum cumprod any all
exp log sqrt rsqrt tanh sigmoid relu abs pow sin cos square sign clamp clip softmax log_softmax
round floor ceil trunc
add sub mul div neg matmul mm bmm mv dot outer eq ne lt le gt ge
topk sort argsort gather scatter index_select masked_fill masked_select nonzero multinomial tril triu
repeat_interleave isnan
zero_ fill_ copy_ add_ sub_ mul_ div_ masked_fill_ scatter_ index_fill_ index_copy_ clamp_ clip_
neg_ abs_ exp_ log_ sqrt_ tanh_ sigmoid_ relu_ pow_ normal_ uniform_ bernoulli_ unsqueeze_ squeeze_
transpose_ t_ detach_ addcmul_ addcdiv_
register_hook stride is_contiguous index_add_ scatter_add_ tril_ triu_
"""

NN = """
Module Parameter Linear Embedding RNN LSTM GRU RNNCell LSTMCell GRUCell Dropout ReLU Tanh
Sigmoid GELU Softmax LogSoftmax LayerNorm Identity Flatten Sequential ModuleList ModuleDict
ParameterList CrossEntropyLoss NLLLoss MSELoss L1Loss SmoothL1Loss BCELoss BCEWithLogitsLoss KLDivLoss
MultiheadAttention Transformer TransformerEncoder TransformerEncoderLayer TransformerDecoder
TransformerDecoderLayer init utils functional
Conv1d Conv2d MaxPool2d BatchNorm1d BatchNorm2d
"""

FUNCTIONAL = """
relu gelu tanh sigmoid softmax log_softmax dropout linear embedding layer_norm one_hot pad normalize
cosine_similarity cross_entropy nll_loss mse_loss l1_loss smooth_l1_loss binary_cross_entropy
binary_cross_entropy_with_logits kl_div scaled_dot_product_attention
conv2d max_pool2d
"""

INIT = """
normal_ uniform_ zeros_ ones_ constant_ xavier_uniform_ xavier_normal_ kaiming_uniform_ kaiming_normal_
orthogonal_
"""

NN_UTILS = """
clip_grad_norm_ rnn
"""

NN_UTILS_RNN = """
pad_sequence pack_padded_sequence pad_packed_sequence pack_sequence PackedSequence
"""

OPTIM = """
SGD Adam AdamW RMSprop Adagrad Optimizer lr_scheduler LBFGS
"""

LR_SCHEDULER = """
LambdaLR StepLR ExponentialLR CosineAnnealingLR LinearLR
ReduceLROnPlateau MultiStepLR OneCycleLR CosineAnnealingWarmRestarts CyclicLR SequentialLR ChainedScheduler
MultiplicativeLR ConstantLR PolynomialLR
"""

AUTOGRAD = """
Variable
"""

UTILS_DATA = """
Dataset TensorDataset DataLoader Subset random_split Sampler RandomSampler SequentialSampler
BatchSampler default_collate dataloader dataset sampler IterableDataset
"""

NAMES = {
    "torch": TORCH.split(),
    "torch.Tensor": TENSOR.split(),
    "torch.nn": NN.split(),
    "torch.nn.functional": FUNCTIONAL.split(),
    "torch.nn.init": INIT.split(),
    "torch.nn.utils": NN_UTILS.split(),
    "torch.nn.utils.rnn": NN_UTILS_RNN.split(),
    "torch.optim": OPTIM.split(),
    "torch.optim.lr_scheduler": LR_SCHEDULER.split(),
    "torch.utils.data": UTILS_DATA.split(),
    "torch.autograd": AUTOGRAD.split(),
}
