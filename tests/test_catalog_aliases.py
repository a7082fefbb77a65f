"""The catalogue entries the alias dataflow relies on, checked against the installed torch/numpy."""

from __future__ import annotations

import copy
import importlib

import pytest

from detachlint.knowledge import catalog

torch = pytest.importorskip("torch")
np = pytest.importorskip("numpy")


def _same_storage(a, b) -> bool:
    return a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()


def test_view_functions_return_views_of_their_first_argument():
    x = torch.randn(4, 4, 2).clone()
    args = {
        "adjoint": (), "as_strided": ((2,), (1,)), "chunk": (2,), "diagonal": (), "dsplit": (2,),
        "hsplit": (2,), "movedim": (0, 1), "moveaxis": (0, 1), "narrow": (0, 0, 2), "permute": ((1, 0, 2),),
        "select": (0, 0), "split": (2,), "split_with_sizes": ([2, 2],), "squeeze": (), "swapaxes": (0, 1),
        "swapdims": (0, 1), "t": (), "tensor_split": (2,), "transpose": (0, 1), "unbind": (),
        "unflatten": (0, (2, 2)), "unsqueeze": (0,), "vsplit": (2,), "view_as_real": (),
        "view_as_complex": (), "broadcast_to": ((2, 4, 4, 2),),
    }
    assert set(args) == set(catalog.VIEW_FUNCTIONS)
    for name, extra in args.items():
        source = x
        if name == "t":
            source = x[:, :, 0]
        elif name == "view_as_real":
            source = torch.randn(3, dtype=torch.complex64)
        elif name == "adjoint":
            source = x[:, :, 0]
        out = getattr(torch, name)(source, *extra)
        first = out[0] if isinstance(out, (tuple, list)) else out
        assert _same_storage(first, source), name


def test_numpy_may_alias_functions_return_the_array_itself():
    a = np.arange(4.0)
    for qualified in catalog.NUMPY_MAY_ALIAS_FUNCTIONS:
        module, _, attr = qualified.rpartition(".")
        assert getattr(importlib.import_module(module), attr)(a) is a, qualified


def test_numpy_inplace_functions_write_their_first_argument():
    for qualified in catalog.NUMPY_INPLACE_FUNCTIONS:
        module, _, attr = qualified.rpartition(".")
        assert hasattr(importlib.import_module(module), attr), qualified
    a = np.zeros(3)
    np.copyto(a, 1.0)
    np.put(a, [0], 5.0)
    assert a.tolist() == [5.0, 1.0, 1.0]


def test_ndarray_copy_methods_copy():
    a = np.arange(6.0).reshape(2, 3)
    assert not np.shares_memory(a.flatten(), a)
    assert not np.shares_memory(a.astype(np.float64), a)
    assert not np.shares_memory(a.copy(), a)
    assert np.shares_memory(a.ravel(), a)  # not listed: ravel returns a view


def test_self_returning_methods_return_the_receiver():
    x = torch.randn(3)
    for name in catalog.SELF_RETURNING_METHODS - {"retain_grad"}:
        assert getattr(x.clone(), name)() is not None, name
    y = torch.randn(3)
    assert y.requires_grad_() is y and y.detach_() is y and y.share_memory_() is y


def test_augmented_assignment_is_the_inplace_method():
    for operator, method in catalog.AUGMENTED_INPLACE.items():
        assert method in catalog.INPLACE_METHODS, operator
    x = torch.ones(3)
    before = x
    x *= 2
    assert x is before and x._version == 1


def test_copy_intent_conversions_return_the_same_memory_when_nothing_changes():
    x = torch.randn(3)
    same = {
        "cpu": x.cpu(), "to": x.to("cpu"), "float": x.float(), "type": x.type(torch.float32), "type_as": x.type_as(x),
        "numpy": x.numpy(), "as_tensor": torch.as_tensor(x), "asarray": torch.asarray(x, requires_grad=False),
        "from_numpy": torch.from_numpy(x.numpy()), "contiguous": x.contiguous(),
    }
    for name, out in same.items():
        assert name in catalog.MAY_ALIAS_CONVERSIONS
        assert (name in catalog.LAYOUT_CONVERSIONS) == (name == "contiguous")  # written for layout, not a copy
        ptr = out.ctypes.data if isinstance(out, np.ndarray) else out.untyped_storage().data_ptr()
        assert ptr == x.untyped_storage().data_ptr(), name
    assert x.double().double().untyped_storage().data_ptr() != x.untyped_storage().data_ptr()


def test_tensor_evidence_ops_are_tensor_only():
    for op in catalog.TENSOR_EVIDENCE_OPS:
        if op in ("as_tensor", "asarray", "from_numpy"):
            assert hasattr(torch, op), op
            continue
        assert hasattr(torch.Tensor, op), op
        assert not hasattr(torch.nn.Module, op), op
        assert not hasattr(str, op) and not hasattr(list, op), op


def test_metadata_methods_exist():
    for name in catalog.METADATA_METHODS - {"keys"}:
        assert hasattr(torch.Tensor, name), name


def test_state_dict_snapshot_is_updated_by_step_and_load():
    torch.manual_seed(0)
    model = torch.nn.Linear(2, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    best = model.state_dict()
    shallow = dict(model.state_dict())
    kept = copy.deepcopy(model.state_dict())
    before = kept["weight"].clone()
    model(torch.ones(1, 2)).sum().backward()
    getattr(optimizer, next(iter(catalog.OPTIMIZER_UPDATE_METHODS)))()
    assert torch.equal(best["weight"], model.weight) and not torch.equal(best["weight"], before)
    assert torch.equal(shallow["weight"], model.weight)
    assert torch.equal(kept["weight"], before)
    getattr(model, next(iter(catalog.STATE_LOAD_METHODS)))(kept)
    assert torch.equal(best["weight"], before)


def test_optimizer_state_dict_holds_live_state():
    p = torch.nn.Parameter(torch.ones(2))
    optimizer = torch.optim.Adam([p])
    p.grad = torch.ones(2)
    optimizer.step()
    state = optimizer.state_dict()
    p.grad = torch.ones(2)
    optimizer.step()
    assert torch.equal(state["state"][0]["exp_avg"], optimizer.state[p]["exp_avg"])


def test_sample_access_methods_are_dataset_protocol():
    from torch.utils.data import Dataset

    assert "__getitem__" in catalog.SAMPLE_ACCESS_METHODS and hasattr(Dataset, "__getitem__")
