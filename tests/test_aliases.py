"""Unit tests of the alias and mutation dataflow (analysis/aliases.py), separate from the rules."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper

from detachlint.analysis.alias_model import Relation
from detachlint.analysis.aliases import AliasAnalysis
from detachlint.context import Context
from detachlint.engine import lint_source

HEADER = "import copy\nimport torch\nimport torch as T\nimport numpy as np\nimport torch.nn as nn\n"


def analyse(source: str, function: str = "f"):
    """The analysis of ``function`` in ``source`` and a finder for nodes by their code."""
    text = HEADER + textwrap.dedent(source)
    wrapper = MetadataWrapper(cst.parse_module(text), unsafe_skip_copy=True)
    ctx = Context(text, "t.py", wrapper.module, wrapper)
    scope = wrapper.module
    for node in _functions(wrapper.module):
        if node.name.value == function:
            scope = node
    analysis = AliasAnalysis.build(ctx, scope)
    return analysis, _Finder(wrapper.module)


def _functions(node):
    for child in node.body if isinstance(node, cst.Module) else node.body.body:
        if isinstance(child, cst.FunctionDef):
            yield child
        elif isinstance(child, cst.ClassDef):
            yield from _functions(child)


class _Finder:
    def __init__(self, module: cst.Module) -> None:
        self.module = module

    def all(self, code: str, kind=cst.CSTNode):
        found = []

        class V(cst.CSTVisitor):
            def on_visit(v, node):  # noqa: N805
                if isinstance(node, kind) and self.module.code_for_node(node) == code:
                    found.append(node)
                return True

        self.module.visit(V())
        return found

    def __call__(self, code: str, kind=cst.CSTNode, index: int = 0):
        return self.all(code, kind)[index]


def stale_keys(analysis: AliasAnalysis, node) -> set:
    mutation = analysis.mutation(node)
    assert mutation is not None
    return {r.key for r in analysis.stale_reads(mutation)}


# ------------------------------------------------------------------ which names share storage

def test_detach_and_conversion_chain_share_storage():
    a, find = analyse("""
        def f(x):
            img = x.detach().cpu().numpy()
            return img
    """)
    read = find("img", cst.Name, 1)
    (origin,) = a.origins_at(read)
    assert origin.relations() == [Relation.ENTRY, Relation.DETACH, Relation.CONVERSION, Relation.CONVERSION]
    assert origin.ops() == ["detach", "cpu", "numpy"]
    assert a.aliases_of(read) == {"x"}


@pytest.mark.parametrize("expr", ["x.clone()", "copy.deepcopy(x)", "x + 1", "torch.tensor(x)",
                                  "x.detach().numpy().copy()", "x.to(torch.float64, copy=True)", "x[[0, 1]]"])
def test_fresh_storage_ends_the_alias(expr):
    a, find = analyse(f"""
        def f(x: torch.Tensor):
            y = {expr}
            return y
    """)
    assert a.aliases_of(find("y", cst.Name, 1)) == set()


@pytest.mark.parametrize("expr,relation", [("x[0]", Relation.VIEW), ("x[:, 1:]", Relation.VIEW),
                                           ("x.view(-1)", Relation.VIEW), ("x.T", Relation.VIEW),
                                           ("T.transpose(x, 0, 1)", Relation.VIEW),
                                           ("x.float()", Relation.CONVERSION), ("T.as_tensor(x)", Relation.CONVERSION),
                                           ("x.data", Relation.DATA), ("x", Relation.PLAIN)])
def test_alias_relations(expr, relation):
    a, find = analyse(f"""
        def f(x: torch.Tensor):
            y = {expr}
            return y
    """)
    (origin,) = a.origins_at(find("y", cst.Name, 1))
    assert origin.relation is relation


def test_tuple_unpacking_of_views():
    a, find = analyse("""
        def f(x: torch.Tensor):
            left, right = x.chunk(2)
            return left, right
    """)
    assert a.aliases_of(find("left", cst.Name, 1)) == {"x"}
    assert a.aliases_of(find("right", cst.Name, 1)) == {"x"}


def test_list_comprehension_of_detached_parameters():
    a, find = analyse("""
        def f(model):
            saved = [p.detach() for p in model.parameters()]
            return saved
    """)
    (origin,) = a.origins_at(find("saved", cst.Name, 1))
    assert origin.relations() == [Relation.ENTRY, Relation.PARAMS, Relation.DETACH]


# ------------------------------------------------------------------ writes and reads after them

def test_plain_alias_goes_stale_when_the_source_is_written():
    a, find = analyse("""
        def f(x: torch.Tensor):
            old = x
            x += 1
            return old
    """)
    assert stale_keys(a, find("x += 1", cst.AugAssign)) == {"old"}


def test_read_before_the_write_is_not_stale():
    a, find = analyse("""
        def f(x: torch.Tensor):
            old = x
            total = old.sum()
            x += 1
            return x, total
    """)
    assert stale_keys(a, find("x += 1", cst.AugAssign)) == set()


def test_writing_through_the_alias_changes_the_parameter_held_by_the_caller():
    a, find = analyse("""
        def f(batch):
            images = batch.cpu().float().numpy()
            images *= 255
            return images
    """)
    mutation = a.mutation(find("images *= 255", cst.AugAssign))
    (read,) = a.stale_reads(mutation)
    assert read.key == "batch" and read.escape
    assert mutation.op == "mul_"


def test_rebinding_ends_the_alias():
    a, find = analyse("""
        def f(x: torch.Tensor):
            y = x.detach()
            y = y * 2
            y += 1
            return x
    """)
    assert a.mutation(find("y += 1", cst.AugAssign)).origins
    assert stale_keys(a, find("y += 1", cst.AugAssign)) == set()


def test_copy_on_every_branch_versus_one_branch():
    a, find = analyse("""
        def f(x: torch.Tensor, flag):
            if flag:
                y = x.detach().clone()
            else:
                y = x.clone()
            y.add_(1)
            return x
    """)
    assert stale_keys(a, find("y.add_(1)", cst.Call)) == set()
    b, find = analyse("""
        def f(x: torch.Tensor, flag):
            if flag:
                y = x.detach().clone()
            else:
                y = x.detach()
            y.add_(1)
            return x
    """)
    assert stale_keys(b, find("y.add_(1)", cst.Call)) == {"x"}


def test_loop_back_edge_reaches_earlier_statements():
    a, find = analyse("""
        def f(model, optimizer, loader):
            best = None
            for batch in loader:
                optimizer.step()
                if batch:
                    best = model.state_dict()
            return best
    """)
    (mutation,) = [m for m in a.mutations() if m.op == "step"]
    reads = a.stale_reads(mutation)
    assert {r.key for r in reads} == {"best"}
    # taken after the last update of every iteration: nothing stale
    b, find = analyse("""
        def f(model, optimizer, loader):
            for batch in loader:
                optimizer.step()
                best = model.state_dict()
            return best
    """)
    (mutation,) = [m for m in b.mutations() if m.op == "step"]
    assert b.stale_reads(mutation) == []


def test_rebinding_at_the_top_of_a_loop_is_not_stale():
    a, find = analyse("""
        def f(x: torch.Tensor, n):
            for i in range(n):
                first = x[0]
                print(first)
                x.add_(1)
    """)
    assert stale_keys(a, find("x.add_(1)", cst.Call)) == set()


def test_break_leaves_the_loop_with_its_state():
    a, find = analyse("""
        def f(x: torch.Tensor, items):
            old = x
            for item in items:
                if item:
                    x.mul_(2)
                    break
            return old
    """)
    assert stale_keys(a, find("x.mul_(2)", cst.Call)) == {"old"}


def test_return_ends_a_path():
    a, find = analyse("""
        def f(x: torch.Tensor, flag):
            old = x
            if flag:
                x.mul_(2)
                return x
            return old
    """)
    assert stale_keys(a, find("x.mul_(2)", cst.Call)) == set()


def test_self_attributes_outlive_the_method():
    a, find = analyse("""
        class Runner:
            def run(self, model, optimizer):
                self.best = model.state_dict()
                optimizer.step()
    """, "run")
    (mutation,) = a.mutations()
    (read,) = a.stale_reads(mutation)
    assert read.key == "self.best" and read.escape


def test_optimizer_updates_only_the_module_it_was_given():
    a, find = analyse("""
        def f(G, D):
            opt_g = torch.optim.Adam(G.parameters())
            d_state = D.state_dict()
            g_state = G.state_dict()
            opt_g.step()
            return d_state, g_state
    """)
    (mutation,) = a.mutations()
    assert {r.key for r in a.stale_reads(mutation)} == {"g_state"}


def test_out_argument_init_and_item_assignment_are_writes():
    a, find = analyse("""
        def f(x: torch.Tensor, y: torch.Tensor):
            torch.add(x, 1, out=y)
            nn.init.zeros_(x)
            x[0] = 1
            arr = x.numpy()
            np.copyto(arr, 0)
    """)
    ops = sorted(m.op for m in a.mutations())
    assert ops == ["__setitem__", "add(out=)", "copyto", "zeros_"]


def test_unknown_kinds_stay_silent():
    a, find = analyse("""
        def f(n, items):
            total = n
            n += 1
            other = items
            items[0] = 1
            return total, other
    """)
    assert a.mutations() == []


def test_module_level_scope():
    a, find = analyse("""
        x = torch.zeros(3)
        old = x
        x.add_(1)
        print(old)
    """, function="<module>")
    assert stale_keys(a, find("x.add_(1)", cst.Call)) == {"old"}


# ------------------------------------------------------------------ built lazily, once per scope

def test_built_once_per_scope_and_only_when_asked(monkeypatch):
    built = []
    original = AliasAnalysis.build.__func__

    def counting(cls, ctx, scope):
        built.append(getattr(scope, "name", None) and scope.name.value)
        return original(cls, ctx, scope)

    monkeypatch.setattr(AliasAnalysis, "build", classmethod(counting))
    source = HEADER + textwrap.dedent("""
        def quiet(x):
            return x + 1

        def busy(x: torch.Tensor):
            y = x.detach()
            y.add_(1)
            y.mul_(2)
            x += 1
            return x
    """)
    lint_source(source, "t.py", ["TAL201", "TAL301", "TAL401"], screen=False)
    assert built == ["busy"]
    built.clear()  # with the screen, once on the tree built from Python's too: it reports there
    lint_source(source, "t.py", ["TAL201", "TAL301", "TAL401"])
    assert built == ["busy", "busy"]


def test_a_write_reads_its_possible_origins_in_the_order_they_were_made():
    """``o = grad.bfloat16(); if c: o = o.T; o.div_(2)``: two origins may be written. A set of
    objects iterates by address, so the reported one (and its runtime signature) changed from run
    to run (torch's ``optim/_muon.py``); they are read in creation order."""
    analysis, find = analyse("""
        def f(grad, c):
            o = grad.bfloat16()
            if c:
                o = o.T
            o.div_(2)
    """)
    mutation = analysis.mutation(find("o.div_(2)", cst.Call))
    ordered = mutation.ordered_origins()
    assert len(ordered) == 2 and ordered[0].op == "bfloat16"
    assert [o.serial for o in ordered] == sorted(o.serial for o in mutation.origins)
