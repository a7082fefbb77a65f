"""The PyTorch catalogue checked against the installed torch (CI installs torch==2.13.0)."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest

from detachlint.knowledge import catalog

torch = pytest.importorskip("torch")
F = torch.nn.functional


def _aten_overloads(name):
    packet = getattr(torch.ops.aten, name, None)
    if packet is None:
        return []
    return [getattr(packet, o) for o in packet.overloads()]


def test_inplace_methods_exist_and_write_self():
    for name in catalog.INPLACE_METHODS | catalog.INPLACE_VIEW_METHODS:
        assert hasattr(torch.Tensor, name), name
        overloads = _aten_overloads(name)
        if not overloads:  # apply_, map_, map2_: Python-level, documented in-place
            continue
        writes_self = any(
            o._schema.arguments and o._schema.arguments[0].alias_info is not None
            and o._schema.arguments[0].alias_info.is_write
            for o in overloads
        )
        assert writes_self, f"{name} does not write its receiver"


def test_every_underscore_method_is_classified():
    underscored = {n for n in dir(torch.Tensor) if n.endswith("_") and not n.startswith("__")}
    known = catalog.INPLACE_METHODS | catalog.INPLACE_VIEW_METHODS | catalog.NOT_WRITING_UNDERSCORE_METHODS
    assert underscored - known == set(), "new in-place methods in torch: add them to the catalogue"


# Arguments for each op of ``catalog.KEPT_THROUGH_DATA``, run on the ``.data`` of a (1, 3) tensor.
_METADATA_CALLS = {
    "resize_": (4, 5), "resize_as_": (torch.ones(2),), "set_": (torch.ones(4),), "as_strided_": ((3, 1), (1, 1)),
    "t_": (), "transpose_": (0, 1), "swapdims_": (0, 1), "swapaxes_": (0, 1), "unsqueeze_": (0,), "squeeze_": (0,),
}


def _layout(t):
    return tuple(t.shape), t.stride(), t.storage_offset()


def test_metadata_ops_are_torchs_inplace_view_ops():
    """The ops that change a tensor's size, strides or storage are those torch tags
    ``inplace_view`` (``detach_`` changes autograd metadata only)."""
    tagged = {n for n in dir(torch.Tensor) if n.endswith("_") and not n.startswith("__")
              and any(torch.Tag.inplace_view in o.tags for o in _aten_overloads(n))}
    assert set(catalog.KEPT_THROUGH_DATA) == tagged - {"detach_"}
    assert set(catalog.KEPT_THROUGH_DATA) == catalog.INPLACE_VIEW_METHODS | catalog.STORAGE_WRITING_METHODS
    assert set(_METADATA_CALLS) == set(catalog.KEPT_THROUGH_DATA)


@pytest.mark.parametrize("name", sorted(catalog.KEPT_THROUGH_DATA))
def test_metadata_ops_through_data_change_only_the_alias(name):
    """``x.data.<op>(...)`` changes the alias's layout (or storage) and leaves ``x`` its shape,
    strides and offset; ``set_`` gives the alias another storage, the others keep ``x``'s."""
    for alias in (lambda x: x.data, lambda x: x.detach()):
        x = torch.zeros(1, 3)
        before, pointer = _layout(x), x.untyped_storage().data_ptr()
        a = alias(x)
        getattr(a, name)(*_METADATA_CALLS[name])
        assert _layout(x) == before and _layout(a) != before, name
        shares = a.untyped_storage().data_ptr() == x.untyped_storage().data_ptr()
        assert shares is (catalog.KEPT_THROUGH_DATA[name] != "storage"), name
        if catalog.KEPT_THROUGH_DATA[name] == "storage":
            assert x.untyped_storage().data_ptr() == pointer
    direct = torch.zeros(1, 3)
    getattr(direct, name)(*_METADATA_CALLS[name])
    assert _layout(direct) != (((1, 3)), (3, 1), 0), name  # without ``.data`` the op reaches the tensor


# An alias of each kind in ``catalog.VERSION_SHARED_THROUGH``, as the alias analysis names them.
_ALIASES = {"detach": (lambda x: x.detach(), lambda x: x.detach()[0:1]),
            "view": (lambda x: x.view(1, 3), lambda x: x[0:1]),
            "data": (lambda x: x.data,)}


@pytest.mark.parametrize("name", sorted(catalog.KEPT_THROUGH_DATA))
def test_metadata_ops_through_any_alias_object_leave_the_tensor_and_move_its_version_as_cataloged(name):
    """``v = y.view(1, 3); v.t_()`` (or ``y.detach()``, ``y[0:1]``): ``y`` keeps its shape, strides,
    offset and values; the op moves the version counter the alias shares with ``y`` (not ``.data``'s),
    so a backward that saved ``y`` raises; on a view of a tensor that requires grad, ``resize_``
    raises by itself."""
    assert set(_ALIASES) == set(catalog.VERSION_SHARED_THROUGH)
    for kind, makers in _ALIASES.items():
        for make in makers:
            w = torch.randn(1, 3, requires_grad=True)
            y = w.sigmoid()  # saves its result
            before, values, version = _layout(y), y.detach().clone(), y._version
            alias = make(y)
            try:
                getattr(alias, name)(*_METADATA_CALLS[name])
            except RuntimeError as error:
                assert kind == "view" and name in catalog.GRAD_REFUSING_METHODS, (kind, name)
                assert "cannot resize variables that require grad" in str(error)
                continue
            assert _layout(y) == before and torch.equal(y.detach(), values), (kind, name)
            moved = y._version != version
            assert moved is catalog.VERSION_SHARED_THROUGH[kind], (kind, name)
            if name == "set_" and kind == "view":
                continue  # backward through a view whose storage was replaced fails on its own (setStorage)
            try:
                y.sum().backward()
                raised = False
            except RuntimeError as error:
                raised = "modified by an inplace operation" in str(error)
            assert raised is moved, (kind, name)


# How each of ``catalog.OBJECT_RETURNING_CONVERSIONS`` is called with nothing to convert (a CPU
# tensor of the dtype it converts to); ``cuda`` is the same on a CUDA tensor, measured where one exists.
_NO_OP_CONVERSIONS = {
    "bfloat16": torch.bfloat16, "double": torch.float64, "half": torch.float16, "float": torch.float32,
    "contiguous": None, "cpu": None, "positive": None, "resolve_conj": None, "resolve_neg": None,
    "to": None, "type": None, "type_as": None, "as_tensor": None, "asarray": None,
    "atleast_1d": None, "atleast_2d": None, "atleast_3d": None,
}


def test_object_returning_conversions_return_the_tensor_itself_and_reshapes_do_not():
    assert set(_NO_OP_CONVERSIONS) | {"cuda"} == catalog.OBJECT_RETURNING_CONVERSIONS
    for name, dtype in _NO_OP_CONVERSIONS.items():
        x = torch.zeros(2, 3, 4, dtype=dtype or torch.float32)
        args = {"to": (x.dtype,), "type": (x.type(),), "type_as": (x,)}.get(name, ())
        method = getattr(x, name, None)
        out = method(*args) if method is not None else getattr(torch, name)(x)
        assert out is x, name
    x = torch.zeros(2, 3)
    assert x.reshape(2, 3) is not x and x.flatten() is not x and torch.from_numpy(x.numpy()) is not x
    if torch.cuda.is_available():
        c = x.cuda()
        assert c.cuda() is c


def test_values_written_after_a_resize_through_data_land_in_the_storage_the_tensor_sees_in_part():
    """faster-rcnn's ``im_data.data.resize_(s).copy_(t)``: ``im_data`` keeps its shape and holds the
    first of the copied values; after ``set_`` nothing written reaches it."""
    x = torch.zeros(1)
    x.data.resize_(3).copy_(torch.tensor([7.0, 8.0, 9.0]))
    assert x.shape == (1,) and x.tolist() == [7.0]
    w, other = torch.zeros(1), torch.zeros(3)
    w.data.set_(other).fill_(5)
    assert w.tolist() == [0.0] and other.tolist() == [5.0, 5.0, 5.0]


def test_grad_refusing_ops_refuse_a_tensor_that_requires_grad_under_no_grad():
    for name in sorted(catalog.KEPT_THROUGH_DATA):
        p = torch.zeros(1, 3, requires_grad=True)
        with torch.no_grad():
            try:
                getattr(p, name)(*_METADATA_CALLS[name])
                refused = False
            except RuntimeError as error:
                refused = "cannot resize variables that require grad" in str(error)
        assert refused is (name in catalog.GRAD_REFUSING_METHODS), name


def test_inplace_methods_bump_the_version_counter():
    x = torch.ones(3)
    for name, args in [("add_", (1,)), ("mul_", (2,)), ("zero_", ()), ("copy_", (torch.ones(3),)),
                       ("clamp_", (0, 1)), ("fill_", (1.0,)), ("normal_", ()), ("index_fill_", (0, torch.tensor([0]), 1.0))]:
        before = x._version
        getattr(x, name)(*args)
        assert x._version > before, name


@pytest.mark.parametrize("name", sorted(catalog.VIEW_METHODS))
def test_view_methods_return_aliases(name):
    assert hasattr(torch.Tensor, name), name
    overloads = _aten_overloads(name)
    if not overloads:
        pytest.fail(f"{name}: no aten schema to check")
    aliased = any(
        o._schema.returns and (
            o._schema.returns[0].alias_info is not None
            or "(a" in str(o._schema.returns[0].type) or "Tensor(a" in str(o._schema)
        )
        for o in overloads
    )
    assert aliased, f"{name} does not return an alias of its input"


def test_view_attributes_share_storage():
    z = torch.randn(2, 3, dtype=torch.complex64)
    for name in catalog.VIEW_ATTRIBUTES:
        out = getattr(z, name)
        assert out.untyped_storage().data_ptr() == z.untyped_storage().data_ptr(), name


def test_may_alias_methods_return_the_same_storage():
    x = torch.randn(4, 3)
    cases = {
        "contiguous": x.contiguous(), "cpu": x.cpu(), "to": x.to(torch.float32), "float": x.float(),
        "type": x.type(torch.float32), "type_as": x.type_as(x), "reshape": x.reshape(-1),
        "reshape_as": x.reshape_as(x), "flatten": x.flatten(), "ravel": x.ravel(), "positive": x.positive(),
        "resolve_conj": x.resolve_conj(), "resolve_neg": x.resolve_neg(), "detach": x.detach(),
        "double": x.double().double(), "half": x.half().half(), "bfloat16": x.bfloat16().bfloat16(),
    }
    for name, out in cases.items():
        assert name in catalog.MAY_ALIAS_METHODS, name
        base = x if name not in ("double", "half", "bfloat16") else None
        if base is not None:
            assert out.untyped_storage().data_ptr() == base.untyped_storage().data_ptr(), name
    for name in catalog.MAY_ALIAS_METHODS:
        assert hasattr(torch.Tensor, name), name
    # cuda/pin_memory need a GPU and coalesce a sparse tensor: checked by their schemas.
    for name in ("cuda", "pin_memory", "coalesce"):
        assert name in catalog.MAY_ALIAS_METHODS and hasattr(torch.Tensor, name)


def test_copy_method_really_copies():
    x = torch.randn(3)
    assert x.clone().untyped_storage().data_ptr() != x.untyped_storage().data_ptr()


def test_may_alias_functions_resolve():
    x = torch.randn(3)
    for qualified in catalog.MAY_ALIAS_FUNCTIONS:
        module, _, attr = qualified.rpartition(".")
        assert hasattr(importlib.import_module(module), attr), qualified
    assert torch.as_tensor(x) is x
    assert F.dropout(x, 0.5, training=False) is x


def test_functions_and_classes_exist():
    for name in catalog.TENSOR_FUNCTIONS | catalog.TENSOR_SEQUENCE_FUNCTIONS | catalog.LEGACY_CONSTRUCTORS:
        assert hasattr(torch, name), name
    for name in catalog.FUNCTIONAL_TENSOR_FUNCTIONS:
        assert hasattr(F, name), name
    for name in catalog.NN_TENSOR_MODULES:
        assert hasattr(torch.nn, name), name
    for name in catalog.INIT_FUNCTIONS:
        assert hasattr(torch.nn.init, name), name
    for name in (catalog.NON_TENSOR_METHODS | catalog.TENSOR_SEQUENCE_METHODS | catalog.AMBIGUOUS_METHODS
                 | catalog.TENSOR_ONLY_METHODS):
        assert hasattr(torch.Tensor, name), name
    for name in catalog.PARAMETER_ITERATORS | catalog.NAMED_PARAMETER_ITERATORS:
        assert hasattr(torch.nn.Module, name), name
    groups = getattr(torch.optim.SGD([torch.nn.Parameter(torch.ones(1))], lr=0.1), catalog.OPTIMIZER_PARAM_GROUPS)
    assert catalog.PARAM_GROUP_PARAMS_KEY in groups[0]
    numpy = pytest.importorskip("numpy")
    for name in catalog.SPARSE_MATRIX_METHODS:  # a call of one shows the receiver is neither
        assert not hasattr(torch.Tensor, name) and not hasattr(numpy.ndarray, name), name


def test_matmul_is_the_left_operands():
    """What ``TensorFacts`` says of ``a @ b``: a tensor on the left gives a tensor (an ndarray on
    the right too); an ndarray on the left does not, so an operand of unknown kind there (a
    scipy.sparse matrix gives an ndarray) leaves the product unknown."""
    numpy = pytest.importorskip("numpy")
    t, a = torch.ones(2, 2), numpy.ones((2, 2))
    assert isinstance(t @ a, torch.Tensor)
    try:
        product = a @ t
    except TypeError:
        product = None
    assert not isinstance(product, torch.Tensor)


def test_tensor_attributes():
    x = torch.randn(2, 2, requires_grad=True)
    (x * 2).sum().backward()
    for name in catalog.TENSOR_ATTRIBUTES - {"real", "imag"}:
        assert isinstance(getattr(x, name), torch.Tensor), name
    for name in catalog.NON_TENSOR_ATTRIBUTES - {"_base", "grad_fn"}:
        assert not isinstance(getattr(x, name), torch.Tensor), name


def test_legacy_constructors_alias():
    x = torch.randn(3)
    assert torch.Tensor(x).untyped_storage().data_ptr() == x.untyped_storage().data_ptr()
    assert torch.FloatTensor(x).untyped_storage().data_ptr() == x.untyped_storage().data_ptr()


def test_canonical_names_are_the_same_objects():
    for alias, canonical in catalog.CANONICAL_NAMES.items():
        objs = []
        for qualified in (alias, canonical):
            module, _, attr = qualified.rpartition(".")
            objs.append(getattr(importlib.import_module(module), attr))
        assert objs[0] is objs[1], alias


def test_tensor_classes_make_tensors():
    for qualified in catalog.TENSOR_CLASSES:
        module, _, attr = qualified.rpartition(".")
        cls = getattr(importlib.import_module(module), attr)
        assert issubclass(cls, torch.Tensor), qualified


def test_module_tensor_dicts():
    bn = torch.nn.BatchNorm1d(3)
    for name in catalog.MODULE_TENSOR_DICTS:
        assert all(isinstance(t, torch.Tensor) for t in getattr(bn, name).values()), name


def test_module_tensor_attributes():
    bn = torch.nn.BatchNorm1d(3)
    for name in catalog.MODULE_TENSOR_ATTRIBUTES:
        assert isinstance(getattr(bn, name), torch.Tensor), name


# --- what ops save for backward (TAL202) ---------------------------------------------------------

def _saved_tool():
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "tools" / "saved_for_backward.py"
    spec = importlib.util.spec_from_file_location("saved_for_backward", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_saved_ops_are_what_the_installed_torch_saves():
    from detachlint.knowledge import saved_ops

    result, first = _saved_tool().measure()
    assert saved_ops.SAVES_RESULT == frozenset(result)
    assert saved_ops.SAVES_INPUT == frozenset(first)
    assert {"sigmoid", "tanh", "exp", "softmax", "relu"} <= saved_ops.SAVES_RESULT
    assert "add" not in saved_ops.SAVES_INPUT | saved_ops.SAVES_RESULT  # add's backward needs no values


def test_saved_modules_are_what_the_installed_torch_modules_save():
    """The module table (``saved_ops.MODULE_*``) is what ``tools/saved_for_backward.py`` measures
    on the installed torch, and says what a reader of ``torch.nn`` expects of the usual ones."""
    from detachlint.knowledge import saved_ops

    tool = _saved_tool()
    measured = tool.measure_modules()
    assert saved_ops.MODULE_SAVES_RESULT == frozenset(measured["saves-result"])
    assert saved_ops.MODULE_SAVES_INPUT == frozenset(measured["saves-input"])
    assert saved_ops.MODULE_INPLACE == frozenset(measured["inplace"])
    assert saved_ops.MODULE_INPLACE_SAVES_RESULT == frozenset(measured["inplace-saves-result"])
    assert saved_ops.MODULE_RETURNS_INPUT == frozenset(measured["returns-input"])
    assert saved_ops.MODULE_WITH_PARAMETERS == frozenset(measured["parameters"])
    assert saved_ops.MODULE_INPLACE_POSITION == {n: int(i) for n, i in (e.split(":") for e in measured["inplace-position"])}
    assert {"Sigmoid", "Tanh", "Softmax"} <= saved_ops.MODULE_SAVES_RESULT
    assert {"Linear", "Conv2d", "LayerNorm", "BatchNorm2d"} <= saved_ops.MODULE_SAVES_INPUT
    assert "BatchNorm2d" not in saved_ops.MODULE_SAVES_RESULT  # a residual ``out += x`` after bn is fine
    assert {"ReLU", "Dropout"} <= saved_ops.MODULE_INPLACE and "Identity" in saved_ops.MODULE_RETURNS_INPUT
    assert tool.render() == (Path(tool.OUT)).read_text()  # the data file is the tool's output


def test_weight_writing_modules_are_what_the_installed_torch_modules_write():
    """``saved_ops.MODULE_WRITES_WEIGHT`` is measured, and a lookup with ``max_norm`` after an op
    saved the weight raises at backward, as TAL202 says (and not with the weight cloned)."""
    import torch
    from detachlint.knowledge import saved_ops

    assert saved_ops.MODULE_WRITES_WEIGHT == _saved_tool().measure_weight_writes()
    assert saved_ops.MODULE_WRITES_WEIGHT["Embedding"] == "max_norm"

    def run(clone: bool) -> None:
        torch.manual_seed(0)
        emb = torch.nn.Embedding(10, 3, max_norm=1.0)
        with torch.no_grad():
            emb.weight.mul_(10)  # rows longer than max_norm: the lookup renormalises them
        other = torch.randn(2, 3, requires_grad=True)
        kept = (emb.weight.clone() if clone else emb.weight) @ other.t()
        (kept.sum() + emb(torch.tensor([1, 2])).sum()).backward()

    assert _raises_version_error(lambda: run(False), "Embedding(max_norm)")
    run(True)


def _raises_version_error(run, name: str) -> bool:
    """Whether ``run()`` raises autograd's "modified by an inplace operation" (and nothing else)."""
    try:
        run()
    except RuntimeError as exc:
        assert "modified by an inplace operation" in str(exc), (name, exc)
        return True
    return False


def test_tal202_fixture_raises_exactly_where_it_expects():
    """Each function of the TAL202 fixture run with inputs that require grad: the ones holding an
    ``# expect`` line raise autograd's version error at backward, the traps do not."""
    import importlib.util
    import inspect

    from fixture_expectations import FIXTURES, expectations

    path = FIXTURES / "tal202_saved_tensor_inplace.py"
    text = path.read_text()
    expected_rows = {row for row, _, _ in expectations(text)}
    spec = importlib.util.spec_from_file_location("tal202_fixture", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    torch.manual_seed(0)
    checked = 0
    for name, obj in list(vars(module).items()):  # a warning adds __warningregistry__
        if getattr(obj, "__module__", None) != module.__name__:
            continue
        if inspect.isclass(obj) and issubclass(obj, torch.nn.Module):
            fn, lines = obj.forward, inspect.getsourcelines(obj.forward)
            def run(obj=obj):  # the caller's backward, where the module's own parameters make a graph
                out = obj()(torch.rand(2, 3))
                if out.requires_grad:
                    out.sum().backward()
        elif inspect.isfunction(obj):
            fn, lines = obj, inspect.getsourcelines(obj)
            args = [torch.rand(3, 3, requires_grad=True) if p.annotation in (torch.Tensor, "torch.Tensor")
                    else torch.nn.Linear(3, 3) if "model" in p.name else torch.rand(3, 3)
                    for p in inspect.signature(fn).parameters.values()]
            run = lambda fn=fn, args=args: fn(*args)  # noqa: E731
        else:
            continue
        first = lines[1]
        rows = set(range(first, first + len(lines[0])))
        assert _raises_version_error(run, name) == bool(rows & expected_rows), name
        checked += 1
    assert checked >= 12


@pytest.mark.parametrize("fixture, least", [("tal202_across_functions.py", 7), ("tal202_held_modules.py", 16)])
def test_tal202_across_functions_fixture_raises_exactly_where_it_expects(monkeypatch, fixture, least):
    """Each ``run_<case>`` of the cross-function fixture (and of the held-modules one) run with
    inputs that require grad raises autograd's version error exactly when what it names (the
    function ``<case>``, a helper whose result a caller backpropagates, or a class) holds an
    ``# expect`` line."""
    import inspect

    from fixture_expectations import FIXTURES, expectations

    path = FIXTURES / fixture
    expected_rows = {row for row, _, _ in expectations(path.read_text())}
    spec = importlib.util.spec_from_file_location("tal202_across_fixture", path)
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, module)  # ``inspect`` finds a class's source through it
    spec.loader.exec_module(module)
    checked = 0
    for name, run in vars(module).items():
        if not name.startswith("run_"):
            continue
        called = [obj for obj in vars(module).values() if getattr(obj, "__module__", None) == module.__name__
                  and getattr(obj, "__name__", "") in inspect.getsource(run) and obj is not run]
        rows = set()
        for obj in called:
            lines, first = inspect.getsourcelines(obj)
            rows |= set(range(first, first + len(lines)))
        raised = _raises_version_error(lambda run=run: run(torch.rand(3, 3, requires_grad=True)), name)
        assert raised == bool(rows & expected_rows), name
        checked += 1
    assert checked >= least


def test_optimizer_classes_are_what_torch_optim_calls_optimizers():
    """``torch_facts.is_optimizer_class`` on every public class ``torch.optim`` and its submodules
    define: an optimizer exactly when it subclasses ``torch.optim.Optimizer`` (schedulers and
    averaged models are not)."""
    import inspect
    import pkgutil

    from detachlint.knowledge.torch_facts import is_optimizer_class

    names = ["torch.optim"] + [f"torch.optim.{m.name}" for m in pkgutil.iter_modules(torch.optim.__path__)
                               if not m.name.startswith("_")]
    seen = 0
    for name in names:
        module = importlib.import_module(name)
        for attr, value in vars(module).items():
            if inspect.isclass(value) and not attr.startswith("_") and value.__module__.startswith("torch.optim"):
                seen += 1
                expected = issubclass(value, torch.optim.Optimizer)  # the base class too: ``opt: Optimizer``
                assert is_optimizer_class(f"{value.__module__}.{value.__qualname__}") == expected, (name, attr)
                if value.__module__ == name or name == "torch.optim":  # as imported (not a re-export)
                    assert is_optimizer_class(f"{name}.{attr}") == expected, (name, attr)
    assert seen > 20


# One call per op of SAVES_NOTHING_OF_INPUT, on ``x`` (3x4 float, requires grad) and a second
# input ``y`` that also requires grad (so a binary op would save ``x`` for ``y``'s gradient).
_NOTHING_SAVED_CALLS = {
    "add": lambda x, y: x + y, "sub": lambda x, y: x - y, "neg": lambda x, y: -x,
    "sum": lambda x, y: x.sum(), "mean": lambda x, y: x.mean(), "cat": lambda x, y: torch.cat([x, y]),
    "stack": lambda x, y: torch.stack([x, y]), "clone": lambda x, y: x.clone(),
    "permute": lambda x, y: x.permute(1, 0), "expand": lambda x, y: x[None].expand(2, 3, 4),
    "repeat": lambda x, y: x.repeat(2, 1), "flatten": lambda x, y: x.flatten(),
    "reshape": lambda x, y: x.reshape(-1), "squeeze": lambda x, y: x[None].squeeze(0),
    "unsqueeze": lambda x, y: x.unsqueeze(0), "transpose": lambda x, y: x.transpose(0, 1),
    "t": lambda x, y: x.t(), "view": lambda x, y: x.view(-1), "narrow": lambda x, y: x.narrow(1, 0, 2),
    "select": lambda x, y: x.select(0, 1), "flip": lambda x, y: x.flip(0), "roll": lambda x, y: x.roll(1, 0),
    "masked_fill": lambda x, y: x.masked_fill(y.detach() > 0, 0.0),
    "where": lambda x, y: torch.where(y.detach() > 0, x, y),
    "index_select": lambda x, y: x.index_select(0, torch.tensor([0, 2])),
    "contiguous": lambda x, y: x.t().contiguous(), "argmax": lambda x, y: x.argmax(1),
    "argmin": lambda x, y: torch.argmin(x, 1), "argsort": lambda x, y: x.argsort(1),
    "eq": lambda x, y: x.eq(y), "ne": lambda x, y: x.ne(y), "gt": lambda x, y: x.gt(y),
    "lt": lambda x, y: x.lt(y), "ge": lambda x, y: x.ge(y), "le": lambda x, y: x.le(y),
    "isnan": lambda x, y: x.isnan(), "isinf": lambda x, y: x.isinf(), "detach": lambda x, y: x.detach(),
    "float": lambda x, y: x.float(), "to": lambda x, y: x.to(torch.float64), "type_as": lambda x, y: x.type_as(y),
    "zeros_like": lambda x, y: torch.zeros_like(x), "ones_like": lambda x, y: torch.ones_like(x),
}


def test_ops_that_save_nothing_of_their_input_save_nothing():
    """Under saved-tensor hooks, none of these keeps ``x``'s memory (nor a view of it) for backward;
    ``mul``, the control, does."""
    assert set(_NOTHING_SAVED_CALLS) == set(catalog.SAVES_NOTHING_OF_INPUT)

    def kept(call) -> bool:
        x = torch.randn(3, 4, requires_grad=True)
        y = torch.randn(3, 4, requires_grad=True)
        storages = []
        with torch.autograd.graph.saved_tensors_hooks(lambda t: storages.append(t.untyped_storage().data_ptr()) or t,
                                                      lambda t: t):
            call(x, y)
        return x.untyped_storage().data_ptr() in storages

    assert kept(lambda x, y: x * y)
    assert kept(lambda x, y: x.gather(1, torch.tensor([[0], [1], [2]])))  # gather keeps its input
    assert [name for name, call in _NOTHING_SAVED_CALLS.items() if kept(call)] == []


def test_ops_give_no_gradient_to_neg_inf_cells():
    for name in catalog.ZERO_GRADIENT_AT_NEG_INF:
        x = torch.tensor([[0.5, float("-inf"), 1.0]], requires_grad=True)
        op = getattr(torch, name)
        out = op(x, dim=-1) if name in ("softmax", "logsumexp") else op(x)
        out.backward(torch.ones_like(out) if name == "logsumexp" else torch.tensor([[1.0, 2.0, 3.0]]))
        assert x.grad[0, 1].item() == 0.0, name
    x = torch.tensor([[0.5, float("-inf"), 1.0]], requires_grad=True)
    torch.log_softmax(x, dim=-1).backward(torch.tensor([[1.0, 2.0, 3.0]]))
    assert x.grad[0, 1].item() != 0.0  # the control: log_softmax passes it on


# One call per op of GRADIENT_AT_NEG_INF_ONLY_FROM_INFINITE_LOSS, and losses over its result that
# read no masked cell (the first), or read them (the others: a target on the mask, every cell).
_NEG_INF_LOG_OPS = {"log_softmax": lambda s: torch.log_softmax(s, dim=-1),
                    "logsigmoid": lambda s: torch.nn.functional.logsigmoid(s)}
_MASK = torch.tensor([[False, False, False, False, True, True]] * 4)
_LOG_LOSSES = {
    "nll, targets off the mask": lambda o: torch.nn.functional.nll_loss(o, torch.tensor([0, 1, 2, 3])),
    "nll, targets on the mask": lambda o: torch.nn.functional.nll_loss(o, torch.tensor([4, 5, 0, 1])),
    "every cell": lambda o: -o.sum(),
    "kl_div to a full target": lambda o: torch.nn.functional.kl_div(o, torch.full((4, 6), 1 / 6), reduction="batchmean"),
    "masked cells weighted 0": lambda o: -(o * (~_MASK).float()).sum(),
}


def _masked_gradient(op, loss, fill: float, tracked: bool):
    """The loss and the gradient of a weight whose product is masked with ``fill`` before ``op``:
    through ``.data`` (unseen by autograd) or by an out-of-place ``masked_fill`` (``tracked``)."""
    generator = torch.Generator().manual_seed(0)
    weight = torch.randn(6, 6, generator=generator).requires_grad_()
    scores = torch.randn(4, 6, generator=generator) @ weight
    if tracked:
        scores = scores.masked_fill(_MASK, fill)
    else:
        scores.data.masked_fill_(_MASK, fill)
    value = loss(op(scores))
    value.backward()
    return value.item(), weight.grad


def test_a_neg_inf_mask_before_a_log_op_changes_no_finite_losss_gradient():
    """Masked with exactly -inf, a ``.data`` write before these ops gives the gradient of an
    out-of-place ``masked_fill`` wherever the loss is finite; where the loss reads a masked cell it
    is inf or NaN. A finite mask (-1e9) is no such thing: a finite loss reads it and the gradients
    differ (the control)."""
    import math

    for name, op in _NEG_INF_LOG_OPS.items():
        differ = {False: [], True: []}  # finite loss -> the losses whose gradients differ
        for fill in (float("-inf"), -1e9):
            for label, loss in _LOG_LOSSES.items():
                value, unseen = _masked_gradient(op, loss, fill, tracked=False)
                _, tracked = _masked_gradient(op, loss, fill, tracked=True)
                if not torch.equal(unseen, tracked):
                    differ[math.isfinite(value)].append((fill, label))
        assert not [d for d in differ[True] if d[0] == float("-inf")], name
        assert [d for d in differ[False] if d[0] == float("-inf")], name  # reading a -inf cell: infinite loss
        assert [d for d in differ[True] if d[0] == -1e9], name  # the control: a finite loss sees a finite mask
    finite, _ = _masked_gradient(_NEG_INF_LOG_OPS["log_softmax"], _LOG_LOSSES["nll, targets off the mask"],
                                 float("-inf"), tracked=False)
    assert math.isfinite(finite)  # not vacuous: the loss that reads no masked cell is finite


def test_infinity_constants_are_inf():
    for qualified in catalog.INFINITY_CONSTANTS:
        module, _, member = qualified.rpartition(".")
        assert getattr(importlib.import_module(module), member) == float("inf"), qualified


def test_ops_with_results_that_carry_no_gradient():
    x = torch.randn(3, 4, requires_grad=True)
    y = torch.randn(3, 4)
    for name in catalog.NO_GRADIENT_RESULTS:
        method = getattr(x, name)
        out = method() if name in ("isnan", "isinf") else method(y) if len(name) == 2 else method(1)
        assert not out.requires_grad and not out.is_floating_point(), name


# One call per op of INDEX_PAIR_RESULTS (none needs a dim for its pair) and INDEX_PAIR_WITH_DIM (with one).
_INDEX_PAIR_CALLS = {
    "topk": lambda x: x.topk(2), "sort": lambda x: torch.sort(x), "kthvalue": lambda x: x.kthvalue(2),
    "mode": lambda x: torch.mode(x), "cummax": lambda x: x.cummax(1), "cummin": lambda x: torch.cummin(x, 1),
    "max": lambda x: torch.max(x, 1), "min": lambda x: x.min(dim=1), "median": lambda x: x.median(1),
    "nanmedian": lambda x: torch.nanmedian(x, -1),
}


def test_index_pairs_give_indices_without_gradient_and_values_with_it():
    """Each op returns (values, indices): the values keep the graph, the indices (element 1 and
    ``.indices``) are int64 without one; those that need a dim give one value without it (and
    ``torch.max(x, y)`` is elementwise)."""
    assert set(_INDEX_PAIR_CALLS) == catalog.INDEX_PAIR_RESULTS | catalog.INDEX_PAIR_WITH_DIM
    x = torch.randn(3, 4, requires_grad=True)
    for name, call in _INDEX_PAIR_CALLS.items():
        out = call(x)
        assert out[1] is out.indices and out[0] is out.values, name
        assert out.values.requires_grad and not out.indices.requires_grad, name
        assert out.indices.dtype == torch.int64, name
    for name in catalog.INDEX_PAIR_WITH_DIM:
        one = getattr(x, name)()
        assert isinstance(one, torch.Tensor) and one.dim() == 0 and one.requires_grad, name
    assert isinstance(torch.max(x, torch.randn(3, 4)), torch.Tensor)


# Expressions whose dtype class ``analysis/dtypes.py`` tells from the catalogue (issue 41), each
# evaluated with torch: the class it gives must be the class of the dtype torch returns.
DTYPE_CLASS_CASES = [
    "torch.arange(3)", "torch.arange(0, 3, 0.5)", "torch.randint(0, 5, (2,))", "torch.randperm(4)",
    "torch.zeros(2)", "torch.ones(2, 2)", "torch.empty(2)", "torch.rand(2)", "torch.randn(2)", "torch.eye(2)",
    "torch.linspace(0, 1, 5)", "torch.logspace(0, 1, 5)", "torch.zeros(2, dtype=torch.long)",
    "torch.full((2,), 1)", "torch.full((2,), 1.5)", "torch.full((2,), True)", "torch.tensor([1, 2])",
    "torch.tensor([1.0])", "torch.tensor([True])", "torch.tensor([1j])",
    "torch.stack(torch.meshgrid(torch.arange(2), torch.arange(3), indexing='ij'))",
    "torch.cat([torch.arange(2), torch.arange(3)])", "torch.arange(3) > 1", "torch.arange(3).float()",
    "torch.arange(3) / 2", "torch.arange(3) * 2", "torch.arange(3) + 0.5", "torch.ones(2).long()",
    "torch.ones(2).int()", "torch.ones(2).bool()", "torch.ones(2).half()", "torch.ones(2).to(torch.int64)",
    "torch.ones(2).to(dtype=torch.int32)", "torch.arange(2).to(torch.ones(1))", "torch.arange(2).to('cpu')",
    "torch.arange(2).type_as(torch.ones(1))", "torch.LongTensor([1])", "torch.BoolTensor([True])",
    "torch.zeros_like(torch.arange(3))", "torch.ones_like(torch.ones(1))", "torch.arange(3)[0]",
    "torch.arange(3).view(3, 1)", "torch.arange(6).reshape(2, 3).t()", "torch.arange(3).clone()",
    "torch.arange(3).new_zeros(2)", "-torch.arange(3)", "torch.arange(3).to(torch.cfloat)",
    "(torch.arange(3) > 0) & (torch.arange(3) < 2)",
]


def _torch_class(dtype) -> str:
    return "complex" if dtype.is_complex else "float" if dtype.is_floating_point else \
        "bool" if dtype == torch.bool else "int"


@pytest.mark.parametrize("source", DTYPE_CLASS_CASES)
def test_dtype_classes_are_torchs(source):
    import libcst as cst

    from detachlint.analysis.dtypes import DtypeClasses
    from detachlint.analysis.torchnames import TorchNames

    module = cst.parse_module(f"import torch\nx = {source}\n")
    classes = DtypeClasses(module, TorchNames(module))
    assert classes.of(module.body[1].body[0].value) == _torch_class(eval(source).dtype), source


def test_dtype_class_catalogue_is_torchs():
    for name, cls in catalog.DTYPE_CLASSES.items():
        assert _torch_class(getattr(torch, name)) == cls, name
    for spelling, name in {**catalog.DTYPE_NAMES, **catalog.DTYPE_NAMES_MORE}.items():
        assert getattr(torch, spelling) == getattr(torch, name), spelling
    for method, cls in catalog.CLASS_METHODS.items():
        assert _torch_class(getattr(torch.ones(1), method)().dtype) == cls, method
    for name, cls in catalog.TYPED_TENSOR_CLASSES.items():
        assert _torch_class(getattr(torch, name)([1]).dtype) == cls, name
    for name in catalog.INT_FACTORIES:
        assert _torch_class(getattr(torch, name)(*((0, 5, (2,)) if name == "randint" else (4,))).dtype) == "int"
    for name in catalog.FLOAT_FACTORIES:
        args = (0, 1, 3) if name in ("linspace", "logspace") else (0.0, 1.0, (2,)) if name == "normal" else (2,)
        assert _torch_class(getattr(torch, name)(*args).dtype) == "float", name


def test_index_facts_are_torchs():
    """``copies.Indexing``: one-dimensional factories; a 0-d integer tensor index gives a view, an
    integer array, a list or a mask a copy (so an in-place write into that result is lost)."""
    import numpy as np

    for name in catalog.ONE_D_FACTORIES:
        args = (0, 1, 3) if name in ("linspace", "logspace") else (4,)
        assert getattr(torch, name)(*args).dim() == 1, name
    for name in catalog.NUMPY_ONE_D_INDEX_FUNCTIONS:
        module, _, member = name.rpartition(".")
        func = getattr(np.random if module.endswith("random") else np, member)
        made = func(np.array([0, 1, 0, 1])) if member == "flatnonzero" else func(4)
        assert made.ndim == 1 and made.dtype.kind == "i", name
    w = torch.zeros(4, 3, 4)
    perm = torch.randperm(4)
    assert w[:, :, perm[1]]._base is w  # 0-d integer tensor: an integer, a view
    for index in (np.array([1, 2]), [0, 1], w > 0, torch.tensor([1]), torch.tensor(True)):
        assert w[index]._base is None  # advanced indexing: a copy
    ones = torch.ones(4)
    ones.clone().masked_fill_(ones > 0, 0.0)
    ones[np.array([1, 2])].zero_()
    assert (ones == 1).all()  # both writes reached only a dropped copy


def test_rank_facts_are_torchs():
    """``copies.Indexing._ranked`` and the project index's ``_IndexRanks``: which methods keep,
    set or add dimensions, so that an index built by them has one or more, and indexing with it
    copies (fresh sets 15 and 23: pointnet's ``index_points``), where a 0-d one gives a view."""
    for rank in (0, 1, 2):
        t = torch.zeros((3,) * rank, dtype=torch.long)
        for name in catalog.RANK_KEEPING_METHODS:
            if name != "cuda" or torch.cuda.is_available():
                args = (torch.long,) if name == "to" else ()
                assert getattr(t, name)(*args).dim() == rank, name
        for name in catalog.RANK_ADDING_METHODS:
            assert getattr(t, name)(0).dim() == rank + 1, name
        for name in catalog.RANKED_RESULTS:  # ``multinomial`` takes probabilities of one or two dimensions
            source = t if name == "nonzero" else torch.ones((3,) * max(rank, 1))
            for made in (getattr(source, name)(1) if name == "multinomial" else getattr(source, name)(),
                         getattr(torch, name)(source, 1) if name == "multinomial" else getattr(torch, name)(source)):
                assert made.dim() >= 1, name
    for name in catalog.RANK_SETTING_METHODS:
        one = torch.zeros(1, dtype=torch.long)
        assert getattr(one, name)(1).dim() == 1 and getattr(one, name)(1, 1).dim() == 2, name
        assert getattr(one, name)([1, 1, 1]).dim() == 3, name
    assert torch.zeros(1).view([]).dim() == 0 and torch.zeros(1).reshape([]).dim() == 0  # no size: 0-d
    with pytest.raises(RuntimeError):
        torch.zeros(2, 2).repeat([2])  # fewer sizes than dimensions
    points, idx = torch.zeros(2, 5, 3), torch.zeros(2, 4, dtype=torch.long)
    repeat_shape = list(idx.shape)
    repeat_shape[0] = 1
    batch_indices = torch.arange(2).view(2, 1).repeat(repeat_shape)
    gathered = points[batch_indices, idx, :]
    gathered -= 1
    assert gathered._base is None and (points == 0).all()  # advanced: a copy
    assert points[torch.tensor(0)]._base is points and points[torch.randperm(2)[0]]._base is points


def test_what_each_dtype_or_device_conversion_may_change():
    """TAL003's message names what a conversion may change: ``cuda``/``cpu`` only the device, the
    dtype methods only the dtype, ``to``/``type``/``type_as`` either."""
    t = torch.ones(2)
    other = torch.ones(2, device="meta", dtype=torch.float64)
    for name in catalog.DEVICE_METHODS:
        if name == "cpu" or torch.cuda.is_available():
            assert getattr(torch.ones(2, dtype=torch.float64), name)().dtype == torch.float64, name
    dtype_only = catalog.DTYPE_DEVICE_CONVERSIONS - catalog.DEVICE_OR_DTYPE_CONVERSIONS - set(catalog.DEVICE_METHODS)
    for name in dtype_only:
        assert getattr(t, name)().device == t.device, name
        with pytest.raises(TypeError):
            getattr(t, name)(device="meta")
    assert catalog.DEVICE_OR_DTYPE_CONVERSIONS <= catalog.DTYPE_DEVICE_CONVERSIONS
    for moved in (t.to(other), t.type_as(other)):
        assert (moved.device.type, moved.dtype) == ("meta", torch.float64)
    try:  # a legacy type name carries the device: a CUDA tensor, or torch trying to start CUDA
        legacy = t.type("torch.cuda.DoubleTensor")
    except RuntimeError as e:
        assert "CUDA" in str(e), e
    else:
        assert legacy.is_cuda


def test_shape_reading_factories_read_no_values():
    x = torch.randn(3, 2)
    for name in catalog.SHAPE_READING_FACTORIES:  # the same result whatever the argument holds
        args = (x, 7) if name == "full_like" else (x, 5) if name == "randint_like" else (x,)
        made, other = getattr(torch, name)(*args), getattr(torch, name)(torch.full_like(x, float("nan")), *args[1:])
        assert made.shape == other.shape and made.dtype == other.dtype, name
        if name in ("zeros_like", "ones_like", "full_like"):
            assert torch.equal(made, other), name


def test_metadata_passages_keep_the_memory():
    x = torch.randn(3, requires_grad=True)
    for name in catalog.METADATA_PASSAGES:
        through = getattr(x, name)
        through = through() if callable(through) else through
        assert through.data_ptr() == x.data_ptr(), name


def test_contiguous_after_a_reordering_copies():
    """``torch_facts.reorders_dimensions``: ``.contiguous()`` right after a non-identity reordering
    copies unless only size-1 dimensions move; after the identity, after ``view``, and ``reshape``
    keeping the reordered shape, it shares memory."""
    from detachlint.knowledge.torch_facts import copies_after_reordering, reorders_dimensions

    x = torch.randn(2, 3, 4, 5, 6)
    m = torch.randn(3, 4)
    reordered = {
        ("permute", (0, 1, 3, 4, 2)): x.permute(0, 1, 3, 4, 2), ("permute", (0, -1, 2, 3, 1)): x.permute(0, -1, 2, 3, 1),
        ("transpose", (1, 2)): x.transpose(1, 2), ("swapaxes", (-1, -2)): x.swapaxes(-1, -2),
        ("swapdims", (0, 4)): x.swapdims(0, 4), ("movedim", (0, 1)): x.movedim(0, 1),
        ("moveaxis", (2, 0)): x.moveaxis(2, 0), ("t", ()): m.t(), ("T", ()): m.T, ("mT", ()): x.mT,
    }
    ops = {op for op, _ in reordered}
    assert ops == catalog.DIMENSION_REORDERING_METHODS | catalog.DIMENSION_REORDERING_ATTRIBUTES
    for (op, dims), out in reordered.items():
        assert reorders_dimensions(op, list(dims)), op
        for method in catalog.COPYING_AFTER_REORDERING:
            assert copies_after_reordering(method)
            copied = getattr(out, method)()
            assert copied.untyped_storage().data_ptr() != out.untyped_storage().data_ptr(), op
    # degenerate: only size-1 dimensions move, and the result is the same memory
    ones = torch.randn(2, 1, 1, 5)
    assert ones.permute(0, 2, 1, 3).contiguous().data_ptr() == ones.data_ptr()
    same = {
        ("permute", (0, 1, 2, 3, 4)): x.permute(0, 1, 2, 3, 4), ("permute", (-5, 1, 2, 3, -1)): x.permute(-5, 1, 2, 3, -1),
        ("transpose", (1, 1)): x.transpose(1, 1),
    }
    for (op, dims), out in same.items():
        assert not reorders_dimensions(op, list(dims)), (op, dims)
        assert out.contiguous().data_ptr() == x.data_ptr(), (op, dims)
    assert not reorders_dimensions("transpose", [1, -1])  # the same dimension for a 2-D tensor
    assert m.transpose(1, -1).contiguous().data_ptr() == m.data_ptr()
    assert x.view(6, -1).contiguous().data_ptr() == x.data_ptr()
    assert x.permute(0, 2, 1, 3, 4).reshape(2, 4, 3, 5, 6).data_ptr() == x.data_ptr()  # reshape: a view here


def test_numpy_only_methods_are_not_tensor_methods():
    numpy = pytest.importorskip("numpy")
    for name in catalog.NUMPY_ONLY_METHODS:
        assert hasattr(numpy.ndarray, name) and not hasattr(torch.Tensor, name), name


def test_container_classes_make_containers():
    for qualified in catalog.CONTAINER_CLASSES:
        module, _, attr = qualified.rpartition(".")
        made = getattr(importlib.import_module(module), attr)()
        assert not isinstance(made, torch.Tensor) and hasattr(made, "__len__"), qualified


def test_state_dict_filling_loads_write_the_live_tensors(tmp_path):
    """``dcp.load(model.state_dict(), ...)`` writes the model's own tensors: the dict handed to it
    is filled in place, not read (TAL401)."""
    import warnings

    import torch.distributed.checkpoint as dcp

    for qualified in catalog.STATE_DICT_FILLING_LOADS:
        module, _, attr = qualified.rpartition(".")
        assert hasattr(importlib.import_module(module), attr), qualified
    model = torch.nn.Linear(2, 2)
    saved = {k: v.clone() for k, v in model.state_dict().items()}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        dcp.save(model.state_dict(), checkpoint_id=tmp_path, no_dist=True)
        with torch.no_grad():
            for p in model.parameters():
                p.zero_()
        dcp.load(model.state_dict(), checkpoint_id=tmp_path, no_dist=True)
    assert all(torch.equal(model.state_dict()[k], v) for k, v in saved.items())


@pytest.mark.parametrize("wrapper", sorted(catalog.RECOMPUTED_PARAMETERS))
def test_recomputed_parameters_lose_an_in_place_initialisation(wrapper):
    """After ``m = weight_norm(nn.Conv1d(...))``, ``m.weight`` is computed from the tensors the
    catalogue names: a write to it is gone after the next forward (``forward``) or at once
    (``access``), by ``.data``, ``nn.init`` or ``copy_``; initialising before wrapping is kept."""
    import warnings

    module, _, member = wrapper.rpartition(".")
    wrap = getattr(importlib.import_module(module), member)
    when, originals = catalog.RECOMPUTED_PARAMETERS[wrapper]
    x = torch.randn(2, 4, 16)
    writes = (lambda w: w.data.normal_(0, 0.01), lambda w: torch.nn.init.normal_(w, 0, 0.01),
              lambda w: w.data.copy_(torch.full_like(w, 0.01)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the old weight_norm is deprecated
        for write in writes:
            m = wrap(torch.nn.Conv1d(4, 8, 3))
            assert not isinstance(m.weight, torch.nn.Parameter)
            assert {n for n, _ in m.named_parameters()} == {"bias", *(o.format("weight") for o in originals)}
            write(m.weight)
            assert (m.weight.std().item() < 0.02) is (when == "forward")  # kept until the next call, or never
            assert (m.weight is m.weight) is (when == "forward")
            m(x)
            assert m.weight.std().item() > 0.05  # recomputed from the originals: the write is gone
        conv = torch.nn.Conv1d(4, 8, 3)
        init = conv.weight.data.normal_(0, 0.01).clone()
        m = wrap(conv)
        m(x)  # initialised before wrapping: the (last) original holds it
        assert torch.equal(m.get_parameter(originals[-1].format("weight")).detach(), init)


def test_old_spectral_norm_weight_shares_its_original_until_the_first_forward():
    """Why the old ``spectral_norm`` is not in ``RECOMPUTED_PARAMETERS``."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = torch.nn.utils.spectral_norm(torch.nn.Conv1d(4, 8, 3))
    assert "torch.nn.utils.spectral_norm" not in catalog.RECOMPUTED_PARAMETERS
    assert m.weight.data_ptr() == m.weight_orig.data_ptr()
    m(torch.randn(2, 4, 16))
    assert m.weight.data_ptr() != m.weight_orig.data_ptr()
