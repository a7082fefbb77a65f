"""PyTorch knowledge as data: which ops write in place, which return views, which may alias.

Nothing here is logic. ``tests/test_catalog.py`` checks every entry against the installed torch,
so when torch grows a new in-place or view op the test says so.
"""

from __future__ import annotations

# Tensor methods that write into their receiver (schema alias_info.is_write on ``self``).
# Names that end in ``_`` but do not write values are listed in NOT_WRITING_UNDERSCORE_METHODS.
INPLACE_METHODS = frozenset(
    """
    abs_ absolute_ acos_ acosh_ add_ addbmm_ addcdiv_ addcmul_ addmm_ addmv_ addr_ apply_
    arccos_ arccosh_ arcsin_ arcsinh_ arctan2_ arctan_ arctanh_ asin_ asinh_ atan2_ atan_
    atanh_ baddbmm_ bernoulli_ bitwise_and_ bitwise_left_shift_ bitwise_not_ bitwise_or_
    bitwise_right_shift_ bitwise_xor_ cauchy_ ceil_ clamp_ clamp_max_ clamp_min_ clip_
    conj_physical_ copy_ copysign_ cos_ cosh_ cumprod_ cumsum_ deg2rad_ digamma_ div_ divide_
    eq_ erf_ erfc_ erfinv_ exp2_ exp_ expm1_ exponential_ fill_ fill_diagonal_ fix_
    float_power_ floor_ floor_divide_ fmod_ frac_ gcd_ ge_ geometric_ greater_ greater_equal_
    gt_ heaviside_ hypot_ i0_ igamma_ igammac_ index_add_ index_copy_ index_fill_ index_put_
    index_reduce_ lcm_ ldexp_ le_ lerp_ less_ less_equal_ lgamma_ log10_ log1p_ log2_ log_
    log_normal_ logical_and_ logical_not_ logical_or_ logical_xor_ logit_ lt_ map2_ map_
    masked_fill_ masked_scatter_ mul_ multiply_ mvlgamma_ nan_to_num_ ne_ neg_ negative_
    nextafter_ normal_ not_equal_ polygamma_ pow_ put_ rad2deg_ random_ reciprocal_ relu_
    remainder_ renorm_ resize_ resize_as_ round_ rsqrt_ scatter_ scatter_add_ scatter_reduce_
    set_ sgn_ sigmoid_ sign_ sin_ sinc_ sinh_ sqrt_ square_ sub_ subtract_ tan_ tanh_ tril_
    triu_ true_divide_ trunc_ uniform_ xlogy_ zero_
    """.split()
)

# In-place ops that change a tensor's shape or strides rather than its values
# (torch.Tag.inplace_view); they still modify the tensor object every alias shares.
INPLACE_VIEW_METHODS = frozenset(
    "as_strided_ squeeze_ swapaxes_ swapdims_ t_ transpose_ unsqueeze_".split()
)
# In-place ops that give a tensor other storage or another size (its values follow from that).
STORAGE_WRITING_METHODS = frozenset("set_ resize_ resize_as_".split())

# What ``X`` keeps when one of the ops above runs on ``X.data`` (or ``X.detach()``): the op
# changes only the alias, never ``X`` (torch 2.13; releases from 1.1 on raised "set_sizes_contiguous
# is not allowed on Tensor created from .data" there instead). "shape": ``X`` keeps its size and
# strides over the storage it still shares (``resize_`` grows that storage in place: values written
# through the alias then land in ``X``'s memory, laid out by the alias's shape); "storage": the
# alias takes another tensor's storage, ``X`` keeps its own and its shape. Measured in
# tests/test_catalog.py.
KEPT_THROUGH_DATA = {
    **dict.fromkeys(INPLACE_VIEW_METHODS, "shape and strides"),
    "resize_": "shape", "resize_as_": "shape", "set_": "storage",
}
# The same holds through any alias that is another tensor object over ``X``'s memory (a view,
# ``X[0]``): ``X`` keeps its shape, strides, storage and values. The op still moves the version
# counter the alias shares with ``X`` where it shares one: by how the alias was made (the
# ``Relation`` names of the alias analysis), whether an op through it, these included, moves ``X``'s
# (a backward that saved ``X`` then raises). Measured in tests/test_catalog.py.
VERSION_SHARED_THROUGH = {"detach": True, "view": True, "data": False}
# Conversions that return the very tensor object they convert when nothing needs converting
# (``x.cpu() is x`` on a CPU tensor): an op above run on the result changes ``x`` itself. A reshape
# (a view), ``torch.from_numpy`` and ``.numpy()`` make another object. Measured in tests/test_catalog.py.
OBJECT_RETURNING_CONVERSIONS = frozenset(
    """
    bfloat16 contiguous cpu cuda double float half positive resolve_conj resolve_neg to type type_as
    as_tensor asarray atleast_1d atleast_2d atleast_3d
    """.split()
)
# Ops that raise on a tensor that requires grad even under ``torch.no_grad()`` ("cannot resize
# variables that require grad"): only a new tensor bound to the name changes such a one's size.
GRAD_REFUSING_METHODS = frozenset("resize_ resize_as_".split())

# Methods that end in ``_`` yet write no tensor values (flags, sharing, autograd bookkeeping,
# private helpers). Listed so the catalogue test can prove INPLACE_METHODS is complete.
NOT_WRITING_UNDERSCORE_METHODS = frozenset(
    """
    requires_grad_ share_memory_ detach_ resize_as_sparse_ sparse_resize_
    sparse_resize_and_clear_ _coalesced_ _dtensor__new__ _philox_normal_ _philox_uniform_
    """.split()
)

# Tensor methods and attributes whose result is a view of the receiver (same storage, `_base`).
# From the "Tensor Views" documentation and the aten schemas, checked in torch-semantics.md §4.
VIEW_METHODS = frozenset(
    """
    adjoint as_strided chunk diagonal dsplit expand expand_as hsplit movedim moveaxis narrow
    permute select split split_with_sizes squeeze swapaxes swapdims t tensor_split transpose
    unbind unflatten unfold unsqueeze view view_as vsplit values indices
    """.split()
)
VIEW_ATTRIBUTES = frozenset("T H mT mH real imag".split())

# Methods that return a tensor aliasing the receiver without being a view: the same object
# when nothing changes (contiguous input, same dtype/device), or storage shared without `_base`.
MAY_ALIAS_METHODS = frozenset(
    """
    contiguous cpu cuda to float double half bfloat16 type type_as reshape reshape_as flatten
    ravel positive resolve_conj resolve_neg coalesce pin_memory detach
    """.split()
)

# Ways to obtain an alias of a tensor that autograd's version counter does not see.
UNTRACKED_ALIAS_ATTRIBUTES = frozenset({"data"})
UNTRACKED_ALIAS_METHODS = frozenset({"detach"})

# Methods that return fresh storage (the alias ends there).
COPY_METHODS = frozenset("clone copy deepcopy".split())

# torch functions (qualified names) whose result may be the very object passed in.
MAY_ALIAS_FUNCTIONS = frozenset(
    """
    torch.as_tensor torch.asarray torch.from_numpy torch.atleast_1d torch.atleast_2d
    torch.atleast_3d torch.nn.functional.dropout
    """.split()
)

# ``torch.nn.init`` functions that fill their first argument in place.
INIT_FUNCTIONS = frozenset(
    """
    uniform_ normal_ trunc_normal_ constant_ ones_ zeros_ eye_ dirac_ xavier_uniform_
    xavier_normal_ kaiming_uniform_ kaiming_normal_ orthogonal_ sparse_
    """.split()
)

# ``torch.distributed`` collectives that write their first argument in place (the result lands in
# the tensor handed over: ``dist.all_reduce(p.data)`` writes through ``.data``).
COLLECTIVE_WRITES = frozenset(
    """
    all_reduce broadcast reduce recv irecv scatter reduce_scatter_tensor all_gather_into_tensor
    all_to_all_single reduce_scatter
    """.split()
)

# Legacy constructors: with a tensor argument they return an alias, not a copy.
LEGACY_CONSTRUCTORS = frozenset(
    """
    Tensor FloatTensor DoubleTensor HalfTensor BFloat16Tensor ByteTensor CharTensor
    ShortTensor IntTensor LongTensor BoolTensor
    """.split()
)

# Constructors that always copy their data argument (``torch.tensor(t)``, ``u.new_tensor(t)``), and
# those that build a tensor from a sequence's values (``torch.tensor([t1, t2])``, ``torch.as_tensor``).
COPY_CONSTRUCTORS = frozenset({"tensor", "new_tensor"})
SEQUENCE_CONSTRUCTORS = frozenset({"tensor", "as_tensor"})

# torch.* functions that return one tensor. Anything not listed is "unknown", never "tensor".
TENSOR_FUNCTIONS = frozenset(
    """
    tensor as_tensor asarray from_numpy frombuffer zeros ones empty full rand randn randint
    randperm arange linspace logspace eye zeros_like ones_like empty_like full_like rand_like
    randn_like randint_like stack cat concat concatenate hstack vstack dstack column_stack
    where clone abs add sub mul div matmul mm bmm einsum exp log sqrt sigmoid tanh relu
    softmax log_softmax sum mean std var prod cumsum cumprod norm clamp clip flatten reshape
    squeeze unsqueeze transpose permute t cdist cross outer inner dot tril triu diag
    diagonal flip roll gather index_select masked_select take nonzero argmax argmin
    bernoulli multinomial normal pow neg reciprocal square abs_ lerp addmm baddbmm bucketize
    searchsorted cumulative_trapezoid trapezoid polar complex view_as_real view_as_complex
    real imag angle conj tile repeat_interleave narrow select movedim broadcast_to
    atleast_1d atleast_2d atleast_3d logsumexp amax amin maximum minimum fmax fmin isnan
    isinf isfinite logical_and logical_or logical_not eq ne lt le gt ge round floor ceil
    trunc sign erf erfinv lgamma digamma sin cos tan asin acos atan atan2 sinh cosh
    kron block_diag cartesian_prod combinations bincount histc tensordot chain_matmul
    empty_strided scalar_tensor sparse_coo_tensor
    """.split()
)

# Context managers and decorators under which autograd records nothing.
GRAD_DISABLING = frozenset({"torch.no_grad", "torch.inference_mode"})

# torch.* factories: their result is a new leaf, whatever the arguments (no graph behind it).
GRAPH_FREE_FACTORIES = frozenset(
    """
    tensor as_tensor asarray from_numpy frombuffer zeros ones empty full rand randn randint
    randperm arange linspace logspace eye zeros_like ones_like empty_like full_like rand_like
    randn_like randint_like empty_strided scalar_tensor bernoulli multinomial
    """.split()
)
# Tensor ops (methods, or members of ``torch`` / ``torch.nn.functional``) whose backward saves
# nothing of their tensor input: a later ``.data`` write to that input cannot change what the
# graph computes backward from (``tests/test_catalog.py`` checks each with saved-tensor hooks).
SAVES_NOTHING_OF_INPUT = frozenset(
    """
    add sub neg sum mean cat stack clone permute expand repeat flatten reshape squeeze unsqueeze
    transpose t view narrow select flip roll masked_fill where index_select contiguous
    argmax argmin argsort eq ne gt lt ge le isnan isinf detach float to type_as zeros_like ones_like
    """.split()
)
# Ops whose gradient is exactly zero where their input is -inf (their result is 0 there and stays
# flat): cells masked with -inf before them get no gradient, whether autograd saw the mask or not.
ZERO_GRADIENT_AT_NEG_INF = frozenset("softmax sigmoid exp logsumexp".split())
# Ops whose result is -inf where their input is -inf and whose gradient there is the loss's gradient
# at that -inf result (log_softmax: g_i - p_i * sum(g), and p_i is 0): a cell masked with exactly
# -inf gets gradient only from a loss that reads its -inf, and such a loss is inf or NaN. Not for a
# finite mask (-1e9): a finite loss can read that cell. ``tests/test_catalog.py`` measures both.
GRADIENT_AT_NEG_INF_ONLY_FROM_INFINITE_LOSS = frozenset("log_softmax logsigmoid".split())
# Qualified names of +inf constants (``-math.inf``, ``-np.inf``, ``-torch.inf``: an exact -inf).
INFINITY_CONSTANTS = frozenset("math.inf numpy.inf torch.inf".split())
# Ops whose result is integer (or boolean) and carries no gradient: a graph that only feeds them is
# never backpropagated through them.
NO_GRADIENT_RESULTS = frozenset("argmax argmin argsort eq ne gt lt ge le isnan isinf".split())
# Reductions whose result is a (values, indices) pair: the indices (``[1]``, ``.indices``, the second
# name of an unpacking) are int64 and carry no gradient; the values keep the graph. Those of
# INDEX_PAIR_WITH_DIM return the pair only when given a dim (``x.max()`` is one value; ``torch.max(x,
# y)`` is elementwise). ``tests/test_catalog.py`` checks both against torch.
INDEX_PAIR_RESULTS = frozenset("topk sort kthvalue mode cummax cummin".split())
INDEX_PAIR_WITH_DIM = frozenset("max min median nanmedian".split())
# Methods whose result carries no graph (a Python value, an array, or a detached tensor).
GRAPH_CUTTING_METHODS = frozenset("detach detach_ item tolist numpy".split())
# Tensor methods whose result is computed from the receiver (it keeps the receiver's graph), besides
# views, conversions and TENSOR_ONLY_METHODS.
GRAPH_KEEPING_METHODS = frozenset("sum mean pow clone".split())

# torch.* functions that return a tuple or list of tensors.
TENSOR_SEQUENCE_FUNCTIONS = frozenset(
    "split chunk unbind tensor_split hsplit vsplit dsplit meshgrid broadcast_tensors".split()
)

# torch.nn.functional functions that return one tensor.
FUNCTIONAL_TENSOR_FUNCTIONS = frozenset(
    """
    relu relu6 elu selu celu gelu silu mish leaky_relu prelu rrelu hardtanh hardswish
    hardsigmoid sigmoid tanh softplus softsign softmax log_softmax softmin normalize linear
    bilinear conv1d conv2d conv3d conv_transpose1d conv_transpose2d conv_transpose3d
    max_pool1d max_pool2d max_pool3d avg_pool1d avg_pool2d avg_pool3d adaptive_avg_pool1d
    adaptive_avg_pool2d adaptive_avg_pool3d adaptive_max_pool2d dropout dropout2d dropout3d
    alpha_dropout embedding one_hot pad interpolate upsample grid_sample affine_grid
    layer_norm group_norm batch_norm instance_norm local_response_norm mse_loss l1_loss
    smooth_l1_loss huber_loss cross_entropy nll_loss binary_cross_entropy
    binary_cross_entropy_with_logits kl_div cosine_similarity pairwise_distance
    triplet_margin_loss margin_ranking_loss hinge_embedding_loss soft_margin_loss
    multilabel_soft_margin_loss cosine_embedding_loss poisson_nll_loss gaussian_nll_loss
    ctc_loss pixel_shuffle pixel_unshuffle unfold fold glu logsigmoid tanhshrink softshrink
    hardshrink threshold scaled_dot_product_attention
    """.split()
)

# torch.nn layer classes whose call returns one tensor (so ``self.fc(x)`` is a tensor).
NN_TENSOR_MODULES = frozenset(
    """
    Linear Bilinear LazyLinear Conv1d Conv2d Conv3d ConvTranspose1d ConvTranspose2d
    ConvTranspose3d BatchNorm1d BatchNorm2d BatchNorm3d LayerNorm GroupNorm InstanceNorm1d
    InstanceNorm2d InstanceNorm3d Embedding EmbeddingBag Dropout Dropout1d Dropout2d
    Dropout3d ReLU ReLU6 LeakyReLU PReLU ELU SELU CELU GELU SiLU Mish Sigmoid Tanh Softmax
    LogSoftmax Softplus Identity Flatten Unflatten MaxPool1d MaxPool2d MaxPool3d AvgPool1d
    AvgPool2d AvgPool3d AdaptiveAvgPool1d AdaptiveAvgPool2d AdaptiveAvgPool3d Upsample
    PixelShuffle MSELoss L1Loss CrossEntropyLoss NLLLoss BCELoss BCEWithLogitsLoss
    SmoothL1Loss HuberLoss KLDivLoss CosineSimilarity
    """.split()
)

# Tensor methods whose result is not a tensor.
NON_TENSOR_METHODS = frozenset(
    """
    item tolist size dim ndimension numel nelement element_size is_contiguous data_ptr
    const_data_ptr stride storage_offset storage untyped_storage get_device is_floating_point
    is_complex is_signed is_set_to is_shared is_pinned is_same_size equal allclose
    is_nonzero backward register_hook register_post_accumulate_grad_hook retain_grad
    dense_dim sparse_dim storage_type dim_order record_stream q_scale q_zero_point
    q_per_channel_axis qscheme tolist __len__ __repr__ module_load
    """.split()
)
# Tensor predicates (``is_contiguous``, ``is_floating_point``, ...) all start with this.
NON_TENSOR_METHOD_PREFIX = "is_"
# Tensor methods that return a tuple of tensors, or a tuple only for some arguments.
TENSOR_SEQUENCE_METHODS = frozenset(
    """
    split chunk unbind tensor_split hsplit vsplit dsplit split_with_sizes unsafe_chunk
    unsafe_split sort topk kthvalue aminmax frexp slogdet cummax cummin histogram
    """.split()
)
AMBIGUOUS_METHODS = frozenset("max min median mode nanmedian unique".split())
# Conversion methods that, called with no argument, return a name instead (``t.type()`` is the
# string ``'torch.FloatTensor'``): no memory of the receiver.
NAMING_WITHOUT_ARGUMENTS = frozenset({"type"})

# Tensor attributes that are tensors, and those that are not.
TENSOR_ATTRIBUTES = frozenset("data grad T mT H mH real imag".split())
NON_TENSOR_ATTRIBUTES = frozenset(
    """
    shape dtype device requires_grad is_leaf ndim grad_fn layout is_cuda is_cpu is_sparse
    is_quantized is_meta itemsize nbytes output_nr retains_grad _version _base
    """.split()
)

# Factories that read only the shape, dtype and device of their tensor argument, never its
# values: a Function's backward that keeps a tensor just for ``zeros_like(ctx.b)`` reads no value.
SHAPE_READING_FACTORIES = frozenset(
    "zeros_like ones_like empty_like full_like rand_like randn_like randint_like".split()
)
# Methods through which metadata is still read of the same memory (``w.data.storage().data_ptr()``).
METADATA_PASSAGES = frozenset("data detach storage untyped_storage".split())

# Methods that, on a receiver of unknown type, only a tensor has: the result is a tensor.
TENSOR_ONLY_METHODS = frozenset(
    "detach new_tensor new_zeros new_ones new_full new_empty type_as view_as expand_as".split()
)

# nn.Module attributes that hold parameters or buffers.
MODULE_TENSOR_ATTRIBUTES = frozenset("weight bias running_mean running_var".split())

# Wrappers that make a module's parameter (``name=``, default ``weight``) a computed tensor, so an
# in-place write to it (``m.weight.data.normal_()``, ``nn.init.normal_(m.weight)``) is lost: wrapper ->
# when it is recomputed (``forward``: by a forward pre-hook, so the write lasts until the next call;
# ``access``: on every read of ``m.weight``, so the write lands in a temporary) and the tensors it is
# computed from (``{}``: the parameter's name). Measured by tests/test_catalog.py. Not here: the old
# ``torch.nn.utils.spectral_norm``, whose ``weight`` shares ``weight_orig``'s memory until the first
# forward, so an initialisation before it reaches ``weight_orig`` (then divided by its norm, as meant).
RECOMPUTED_PARAMETERS = {
    "torch.nn.utils.weight_norm": ("forward", ("{}_g", "{}_v")),
    "torch.nn.utils.weight_norm.weight_norm": ("forward", ("{}_g", "{}_v")),
    "torch.nn.utils.parametrizations.weight_norm": ("access", ("parametrizations.{}.original0",
                                                               "parametrizations.{}.original1")),
    "torch.nn.utils.parametrizations.spectral_norm": ("access", ("parametrizations.{}.original",)),
}

# Module methods that iterate over tensors: ``for p in model.parameters()``.
PARAMETER_ITERATORS = frozenset({"parameters", "buffers"})
NAMED_PARAMETER_ITERATORS = frozenset({"named_parameters", "named_buffers"})
# An optimizer's attribute holding its parameter groups, and the key of a group's parameters:
# ``for p in group["params"]`` over ``self.param_groups`` walks the parameters it updates.
OPTIMIZER_PARAM_GROUPS = "param_groups"
PARAM_GROUP_PARAMS_KEY = "params"

# The qualified names of the tensor and parameter classes, for annotations and isinstance.
TENSOR_TYPES = frozenset({"torch.Tensor", "torch.nn.Parameter", "torch.nn.parameter.Parameter"})

# Other tensor libraries, whose tensors have ``permute``, ``reshape``, ``view``, ``x[..., i]`` and
# in-place-named methods with semantics of their own (a MegEngine ``__setitem__`` on a reshaped
# result does not reach its source): in a module that imports one and never torch, those names
# show no torch tensor (``TorchNames.foreign``).
FOREIGN_TENSOR_LIBRARIES = frozenset(
    "megengine tensorflow jax jaxlib flax paddle mindspore oneflow cupy mxnet tinygrad mlx".split()
)

# Libraries whose functions take NumPy arrays and nothing array-like: OpenCV converts an argument
# only from an ndarray (or a number or tuple), and a tensor raises "src is not a numpy array, neither
# a scalar". So what a function of one is handed first is an array, not a tensor (``param_evidence``).
NUMPY_ONLY_LIBRARIES = frozenset({"cv2"})
# Methods NumPy arrays have and tensors lack: a value one is called on is an array.
NUMPY_ONLY_METHODS = frozenset({"astype"})

# Classes whose instances are tensors: calling one makes a tensor (``nn.UninitializedBuffer()`` of
# a lazy module). Not for isinstance narrowing: failing a subclass's check says nothing.
TENSOR_CLASSES = frozenset(
    "torch.nn.Parameter torch.nn.Buffer torch.nn.UninitializedParameter torch.nn.UninitializedBuffer".split()
)

# ``module._parameters[name]`` / ``module._buffers[name]``: the dicts behind a module's tensors.
MODULE_TENSOR_DICTS = frozenset({"_parameters", "_buffers"})

# Re-exports met in practice, mapped to their canonical public name.
CANONICAL_NAMES = {
    "torch._tensor.Tensor": "torch.Tensor",
    "torch.nn.parameter.Parameter": "torch.nn.Parameter",
    "torch.nn.parameter.Buffer": "torch.nn.Buffer",
    "torch.nn.parameter.UninitializedParameter": "torch.nn.UninitializedParameter",
    "torch.nn.parameter.UninitializedBuffer": "torch.nn.UninitializedBuffer",
    "torch.nn.modules.module.Module": "torch.nn.Module",
    "torch.autograd.variable.Variable": "torch.autograd.Variable",
    "torch.functional.split": "torch.split",
}

# --------------------------------------------------------------------------------------------
# Alias dataflow (analysis/aliases.py): how storage is shared, copied and updated.

# torch.* functions that return a view of their first argument (torch.transpose(x, 0, 1)).
VIEW_FUNCTIONS = frozenset(
    """
    adjoint as_strided chunk diagonal dsplit hsplit movedim moveaxis narrow permute select
    split split_with_sizes squeeze swapaxes swapdims t tensor_split transpose unbind unflatten
    unsqueeze vsplit view_as_real view_as_complex broadcast_to
    """.split()
)

# numpy functions whose result is the very array passed in when no conversion is needed.
NUMPY_MAY_ALIAS_FUNCTIONS = frozenset("numpy.asarray numpy.asanyarray numpy.ascontiguousarray".split())
# numpy functions whose result is an ndarray made from their argument (a copy, or the same memory).
NDARRAY_FUNCTIONS = NUMPY_MAY_ALIAS_FUNCTIONS | {"numpy.array", "numpy.copy"}

# Keyword arguments that make a call write: ``out=`` the tensor given, ``inplace=True`` the input.
WRITE_KEYWORDS = frozenset({"out", "inplace"})

# numpy functions that write into their first argument.
NUMPY_INPLACE_FUNCTIONS = frozenset(
    "numpy.copyto numpy.put numpy.place numpy.putmask numpy.fill_diagonal".split()
)

# ndarray methods that always return new memory, although the tensor method of the same name
# may return its receiver (``ndarray.flatten()`` copies; ``Tensor.flatten()`` may not).
# scipy.sparse conversions: what they return is a sparse matrix, neither a tensor nor an ndarray
# (``X = X.tolil(); r = X[:, j]`` is a copy). No tensor or ndarray has these methods (test_catalog).
SPARSE_MATRIX_METHODS = frozenset("tolil tocsr tocsc tocoo todok todia tobsr todense getA1".split())

NDARRAY_COPY_METHODS = frozenset("flatten astype copy tolist".split())

# Methods that return their receiver unchanged in value (no write, no copy).
SELF_RETURNING_METHODS = frozenset("requires_grad_ share_memory_ detach_ retain_grad".split())

# Augmented assignment on a tensor is the in-place method (``x *= 2`` is ``x.mul_(2)``).
AUGMENTED_INPLACE = {
    "AddAssign": "add_", "SubtractAssign": "sub_", "MultiplyAssign": "mul_", "DivideAssign": "div_",
    "FloorDivideAssign": "floor_divide_", "ModuloAssign": "remainder_", "PowerAssign": "pow_",
    "BitAndAssign": "bitwise_and_", "BitOrAssign": "bitwise_or_", "BitXorAssign": "bitwise_xor_",
    "LeftShiftAssign": "bitwise_left_shift_", "RightShiftAssign": "bitwise_right_shift_",
}

# Live state and what updates it. ``model.state_dict()`` (and ``optimizer.state_dict()``) hold
# references to the live tensors; ``optimizer.step()`` writes the parameters it was given (and its
# own state); ``load_state_dict`` writes its receiver's tensors.
STATE_SNAPSHOT_METHODS = frozenset({"state_dict"})
OPTIMIZER_UPDATE_METHODS = frozenset({"step"})
STATE_LOAD_METHODS = frozenset({"load_state_dict"})
# The standard library's container classes: what one makes is a container (a state dict when made
# of one), whose item assignment replaces an entry and writes no tensor.
CONTAINER_CLASSES = frozenset(
    "collections.OrderedDict collections.defaultdict collections.Counter collections.deque collections.ChainMap "
    "typing.OrderedDict".split()
)

# Functions that load a checkpoint into the state dict they are handed, writing its tensors in place
# (torch.distributed.checkpoint: ``dcp.load(model.state_dict(), ...)`` fills the model's own
# tensors): a live state dict passed to one is a template to be filled, not a snapshot read.
STATE_DICT_FILLING_LOADS = frozenset({
    "torch.distributed.checkpoint.load", "torch.distributed.checkpoint.load_state_dict",
    "torch.distributed.checkpoint.state_dict_loader.load", "torch.distributed.checkpoint.state_dict_loader.load_state_dict",
})
# Calls that make a shallow container: the elements are the same tensors.
SHALLOW_COPY_FUNCTIONS = frozenset("dict list tuple collections.OrderedDict typing.OrderedDict copy.copy".split())
# Calls that return fresh storage, whatever they are given.
DEEP_COPY_FUNCTIONS = frozenset("copy.deepcopy numpy.array numpy.copy torch.clone".split())

# Receivers of ``.step()`` / ``.state_dict()`` are recognised by kind, or else by name. Names
# matching OPTIMIZER_NAME_PATTERN are optimizers; names containing a NOT_PARAMETER_STATE_HINTS
# word are schedulers, scalers, samplers, ... whose state_dict() is a fresh dict of numbers.
OPTIMIZER_NAME_PATTERN = r"(?:^|_)(?:optim\w*|opt)(?:$|_)|optimi[sz]er"
# ... unless the name ends in a word for something about an optimizer: ``optim_checkpoint_name``,
# ``optimizer_path``, ``optimizer_cls``, ``optimizer_state``.
NOT_OPTIMIZER_SUFFIXES = ("name", "path", "dir", "file", "filename", "config", "cfg", "cls", "class", "type",
                          "kwargs", "args", "state", "sd", "dict", "ckpt", "checkpoint", "fn", "factory", "params",
                          "groups", "key", "keys", "id", "ids", "str")
NOT_PARAMETER_STATE_HINTS = ("sched", "scaler", "sampler", "loader", "rng", "generator", "lr", "metric",
                             "meter", "logger", "stats", "dataset", "iterator")
# A call that receives an optimizer is taken to train with it (``train_one_epoch(model, opt)``),
# unless its name says it only saves, loads or logs.
NOT_TRAINING_CALL_HINTS = ("save", "load", "log", "print", "checkpoint", "sched", "state", "build", "make",
                           "create", "get", "init", "lr", "learning_rate", "adjust", "set", "zero", "wrap",
                           "scale", "unscale", "update_bn", "param", "group", "register", "add")

# Tensor methods that read shape or layout, not values (reading them from a stale alias is fine),
# the dict method that reads only keys, and ``record_stream`` (it tells the caching allocator
# which CUDA stream uses the memory; no value is read).
METADATA_METHODS = frozenset(
    """
    size dim ndimension numel nelement element_size is_contiguous stride storage_offset
    get_device is_floating_point is_complex is_signed data_ptr keys record_stream
    """.split()
)
# Ops only tensors (or arrays) have: a value made through one is a tensor even where its kind is
# unknown. ``to``/``type``/``float``/``cpu`` are left out (modules have them too), as are
# ``split``/``transpose``/``reshape``/``T`` (strings, images, arrays of other libraries).
TENSOR_EVIDENCE_OPS = frozenset(
    """
    detach data numpy contiguous view view_as permute unsqueeze narrow unfold expand expand_as
    as_strided diagonal movedim moveaxis select as_tensor asarray from_numpy
    """.split()
)
# Ops by which a value crosses between a tensor and a NumPy array (``t.numpy()``,
# ``torch.from_numpy(a)``, ``torch.as_tensor(a)``): an alias made through one involves a tensor.
ARRAY_TENSOR_BRIDGE_OPS = frozenset("numpy from_numpy as_tensor Tensor".split())
# Conversions an author writes when a copy is meant (``batch.cpu().float().numpy()``); they return
# the very same memory when nothing needs converting. ``reshape``/``flatten`` are used as views.
# The functions among them (``np.asarray(x)``, ``torch.as_tensor(x)``), by their last name.
COPY_INTENT_CONVERSION_FUNCTIONS = frozenset("as_tensor asarray from_numpy asanyarray".split())
COPY_INTENT_CONVERSIONS = frozenset(
    "cpu cuda to float double half bfloat16 type type_as numpy".split()
) | COPY_INTENT_CONVERSION_FUNCTIONS
# Conversions written for memory layout, not for a copy: an in-place write after one reaches the
# source on purpose (an in-place transpose through ``data.contiguous()`` saves memory).
LAYOUT_CONVERSIONS = frozenset({"contiguous", "ascontiguousarray"})
# Views that reorder a tensor's dimensions (``x.permute(0, 2, 1)``, ``x.transpose(1, 2)``, ``x.mT``):
# any reordering but the identity leaves the tensor non-contiguous unless only size-1 dimensions
# move, so a layout conversion right after one copies. ``reshape`` after one is still a view where
# it keeps the reordered shape, so only ``contiguous`` is taken for a copy there.
DIMENSION_REORDERING_METHODS = frozenset("permute transpose swapaxes swapdims movedim moveaxis t".split())
DIMENSION_REORDERING_ATTRIBUTES = frozenset("T mT".split())
COPYING_AFTER_REORDERING = frozenset({"contiguous"})
# Annotations of values none of which is a tensor (``size: tuple``, ``Tuple[int, int]``,
# ``np.ndarray``): a call passing such a parameter on passes no tensor.
PLAIN_ANNOTATIONS = frozenset(
    """
    int float str bool bytes tuple list dict typing.Tuple typing.List typing.Dict typing.Sequence
    collections.abc.Sequence numpy.ndarray
    """.split()
)
# Every conversion whose result may be the receiver's own memory.
MAY_ALIAS_CONVERSIONS = COPY_INTENT_CONVERSIONS | LAYOUT_CONVERSIONS
# Factories of uninitialised memory: views of such a buffer are windows to be filled, never a copy
# of its (garbage) values.
UNINITIALISED_FACTORIES = frozenset("empty empty_like empty_strided new_empty".split())
# Factories of a buffer filled with one constant (``torch.zeros(steps, dim)``): a view taken before
# anything is written into it is a window to be filled (an episode of a rollout buffer), as its
# copy would be the constant alone (issue 41).
CONSTANT_FACTORIES = frozenset("zeros ones full zeros_like ones_like full_like new_zeros new_ones new_full".split())

# Tensor methods that move to one device (``x.cpu()``), by the device's type.
DEVICE_METHODS = {"cpu": "cpu", "cuda": "cuda"}
# Tensor methods that convert to one dtype (``x.float()``), by the dtype's canonical name, and the
# names ``torch`` gives each dtype (``torch.half`` is ``torch.float16``).
DTYPE_METHODS = {"float": "float32", "double": "float64", "half": "float16", "bfloat16": "bfloat16"}
# Tensor methods whose result may have another dtype or device than the receiver (``p.data.half()``,
# ``p.data.to(device)``): ``p.data = p.data.to(torch.bfloat16)`` rebinds to a converted tensor, which
# ``p.copy_(...)`` would convert back to ``p``'s old dtype and device.
DTYPE_DEVICE_CONVERSIONS = frozenset(
    "to type type_as cpu cuda float double half bfloat16 long int short char byte bool cfloat cdouble".split()
)
# Of those, the ones that may change the device as well as the dtype (``x.type("torch.cuda.HalfTensor")``);
# the others change only the device (``DEVICE_METHODS``) or only the dtype (``half``, ``long``).
DEVICE_OR_DTYPE_CONVERSIONS = frozenset("to type type_as".split())
DTYPE_NAMES = {
    "float": "float32", "float32": "float32", "double": "float64", "float64": "float64", "half": "float16",
    "float16": "float16", "bfloat16": "bfloat16", "int": "int32", "int32": "int32", "long": "int64",
    "int64": "int64", "short": "int16", "int16": "int16", "int8": "int8", "uint8": "uint8", "bool": "bool",
}

# The class of each dtype's values (issue 41): a conversion between classes (an int64 grid ``.to()``
# a float tensor, ``.float()`` of a long tensor) always allocates, so it is no alias.
DTYPE_CLASSES = {
    "float32": "float", "float64": "float", "float16": "float", "bfloat16": "float",
    "int64": "int", "int32": "int", "int16": "int", "int8": "int", "uint8": "int",
    "bool": "bool", "complex64": "complex", "complex128": "complex",
}
DTYPE_NAMES_MORE = {"cfloat": "complex64", "complex64": "complex64", "cdouble": "complex128",
                    "complex128": "complex128"}
# torch factories by the class of what they return when no ``dtype=`` is given: integers
# (``randint``, ``randperm``), floating point (the default dtype); ``arange`` and ``full`` follow
# their arguments, the ``*_like`` ones their first argument.
INT_FACTORIES = frozenset("randint randperm".split())
# torch factories whose result is one-dimensional (``x[p[i]]``: an element of one is a 0-d tensor, which
# indexes as an integer does, giving a view), and numpy's that make a 1-D integer array (an index
# that is always advanced, giving a copy).
ONE_D_FACTORIES = frozenset("arange randperm linspace logspace".split())
# Tensor methods whose result has the receiver's number of dimensions (conversions, moves, copies),
# those whose result has as many dimensions as sizes are given (``.view(b, 1)``, ``.repeat(shape)``
# with a list: its length; ``.repeat`` refuses fewer sizes than dimensions), and those that add one
# (issue 41: ``torch.arange(b).to(device).view(shape).repeat(shape)``, an index of one dimension or
# more, is advanced: the subscript is a copy, where a 0-d one indexes as an integer, a view).
RANK_KEEPING_METHODS = frozenset("to long int short byte bool float double half cuda cpu detach clone contiguous".split())
RANK_SETTING_METHODS = frozenset("view reshape expand repeat".split())
RANK_ADDING_METHODS = frozenset("unsqueeze".split())
# torch functions and tensor methods whose result always has a dimension or more, whatever the
# input's (``nonzero`` without ``as_tuple``: two; ``multinomial``: one or two).
RANKED_RESULTS = frozenset("nonzero multinomial".split())
NUMPY_ONE_D_INDEX_FUNCTIONS = frozenset("numpy.arange numpy.flatnonzero numpy.random.permutation".split())
FLOAT_FACTORIES = frozenset("zeros ones empty rand randn linspace logspace eye normal".split())
LIKE_FACTORIES = frozenset("zeros_like ones_like empty_like full_like clone".split())
# torch functions whose result has the class of their tensor arguments (``torch.stack`` of ints).
CLASS_KEEPING_FUNCTIONS = frozenset("stack cat concat hstack vstack meshgrid flatten reshape".split())
# Tensor methods whose result has the receiver's dtype: views, copies, moves between devices.
CLASS_KEEPING_METHODS = frozenset(
    """
    view reshape permute transpose flatten unsqueeze squeeze clone detach contiguous expand
    repeat flip t cpu cuda narrow select unbind chunk split
    """.split()
)
# Tensor methods that convert to a dtype named by their argument (a dtype, or another tensor's).
DTYPE_ARGUMENT_METHODS = frozenset("to type type_as".split())
# Tensor attributes whose value has the tensor's dtype (``x.T``).
CLASS_KEEPING_ATTRIBUTES = frozenset("T mT".split())
# Tensor methods that give a result of a fixed class (``.long()``, ``.bool()``).
CLASS_METHODS = {"long": "int", "int": "int", "short": "int", "byte": "int", "char": "int", "bool": "bool",
                 "float": "float", "double": "float", "half": "float", "bfloat16": "float"}
# Legacy typed constructors and annotations by class (``torch.LongTensor``).
TYPED_TENSOR_CLASSES = {"FloatTensor": "float", "DoubleTensor": "float", "HalfTensor": "float",
                        "BFloat16Tensor": "float", "LongTensor": "int", "IntTensor": "int", "ShortTensor": "int",
                        "ByteTensor": "int", "CharTensor": "int", "BoolTensor": "bool"}

# Methods that hand out one sample of a dataset: an in-place write to a view of ``self.<data>``
# there changes the dataset itself, and again on every epoch.
SAMPLE_ACCESS_METHODS = frozenset({"__getitem__", "__getitems__"})

# Legacy constructors by qualified name: the one answer to "is this call a legacy constructor".
LEGACY_CONSTRUCTOR_NAMESPACES = ("torch", "torch.cuda")
LEGACY_CONSTRUCTOR_NAMES = frozenset(f"{ns}.{m}" for ns in LEGACY_CONSTRUCTOR_NAMESPACES for m in LEGACY_CONSTRUCTORS)

# Container methods that add one element / many elements (``losses.append(loss)``): the container
# then holds what was added; adding reads nothing it already holds.
CONTAINER_ADD_METHODS = frozenset("append insert add".split())
CONTAINER_EXTEND_METHODS = frozenset({"extend"})
# Methods of Python's containers that tensors and arrays lack: a name they are called on holds a
# dict or a list, so ``obj[key] = v`` through it writes no tensor (a helper moving a structure).
CONTAINER_ONLY_METHODS = frozenset("items keys values append extend insert setdefault get popitem".split())
# Types an ``isinstance`` test names for a container: under it, item writes write no tensor.
CONTAINER_TYPES = frozenset(
    "dict list tuple set Mapping MutableMapping Sequence MutableSequence OrderedDict defaultdict UserDict".split()
)
# Mapping methods that hand out the held values themselves (``sd.items()``, ``sd.values()``).
CONTAINER_VALUE_METHODS = frozenset({"items", "values"})

# --- what each op does to storage: the alias interpreter's table --------------------------------
# One effect per method name or qualified function, built from the sets above. Where a name is in
# several sets, the effect listed later wins (``copy`` is a copy, not a may-alias conversion).
WRITE = "write"  # writes its receiver (method) or first argument (function) in place
SELF = "self"  # returns its receiver, values unchanged
DETACH = "detach"  # same memory, cut from the graph
COPY = "copy"  # fresh memory
SHALLOW_COPY = "shallow-copy"  # a new container holding the same tensors
VIEW = "view"  # a window on the same memory
MAY_ALIAS = "may-alias"  # the same memory when nothing needs converting
LEGACY = "legacy"  # a legacy constructor: with a tensor argument, the same memory
SNAPSHOT = "snapshot"  # references to every live tensor of a module or optimizer
PARAMS = "params"  # the live parameters themselves
UPDATE = "update"  # an optimizer step: writes every parameter it was given
LOAD = "load"  # load_state_dict: writes its receiver's tensors
ADD = "add"  # adds to a container
VALUES = "values"  # the values a mapping holds
METADATA = "metadata"  # shape and layout, not values


def _effects(*groups):
    table = {}
    for effect, names in groups:
        for name in names:
            table[name] = effect
    return table


METHOD_EFFECTS = _effects(
    (MAY_ALIAS, MAY_ALIAS_METHODS | {"numpy"}),
    (VIEW, VIEW_METHODS - {"values", "indices"}),
    (VALUES, CONTAINER_VALUE_METHODS),
    (ADD, CONTAINER_ADD_METHODS),
    (LOAD, STATE_LOAD_METHODS),
    (UPDATE, OPTIMIZER_UPDATE_METHODS),
    (PARAMS, PARAMETER_ITERATORS | NAMED_PARAMETER_ITERATORS),
    (SNAPSHOT, STATE_SNAPSHOT_METHODS),
    (COPY, COPY_METHODS),
    (DETACH, {"detach"}),
    (SELF, SELF_RETURNING_METHODS),
    (WRITE, INPLACE_METHODS | INPLACE_VIEW_METHODS),
    (METADATA, METADATA_METHODS),
)

FUNCTION_EFFECTS = _effects(
    (LEGACY, LEGACY_CONSTRUCTOR_NAMES),
    (DETACH, {"torch.detach"}),
    (VIEW, {f"torch.{m}" for m in VIEW_FUNCTIONS}),
    (MAY_ALIAS, MAY_ALIAS_FUNCTIONS | NUMPY_MAY_ALIAS_FUNCTIONS),
    (WRITE, {f"torch.{m}" for m in INPLACE_METHODS} | {f"torch.nn.init.{m}" for m in INIT_FUNCTIONS}
     | NUMPY_INPLACE_FUNCTIONS),
    (SHALLOW_COPY, SHALLOW_COPY_FUNCTIONS),
    (COPY, DEEP_COPY_FUNCTIONS),
)

# Calls that run backward, and the objects that run it for the loss they are handed
# (``accelerator.backward(loss)``, ``fabric.backward(loss)``, DeepSpeed's ``engine.backward(loss)``,
# Lightning's ``self.manual_backward(loss)``); ``loss.backward(gradient)`` runs it for ``loss``.
BACKWARD_METHODS = frozenset({"backward", "manual_backward"})
BACKWARD_WRAPPER_HINTS = ("accelerator", "fabric", "engine", "deepspeed", "booster", "strategy", "trainer", "amp")

# Base classes whose subclasses are modules (their parameters are live state), besides torch.nn's.
MODULE_BASE_CLASSES = frozenset(
    "pytorch_lightning.LightningModule lightning.LightningModule lightning.pytorch.LightningModule".split()
)
# Annotations of a sequence or iterable whose elements are of the annotated type.
SEQUENCE_ANNOTATIONS = frozenset("List list Sequence Tuple tuple Iterable Iterator Collection".split())
# Conversions that also take lists and numbers, and then return new memory: they alias only an
# argument that is already a tensor or an array.
LIST_ACCEPTING_CONVERSIONS = frozenset(
    "torch.as_tensor torch.asarray numpy.asarray numpy.asanyarray numpy.ascontiguousarray".split()
)
# In-place methods that replace every value of their receiver without reading it.
OVERWRITING_METHODS = frozenset("copy_ fill_ zero_".split())
# Words in an attribute's name that say it keeps a value as it was (``batch.policy.orig_rew``): held
# by the caller, such an attribute is read later as a copy.
KEPT_AS_COPY_WORDS = frozenset("orig original old prev previous init initial backup before saved".split())
