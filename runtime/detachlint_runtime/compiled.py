"""Programs that compile (torch.compile): Dynamo's import, its compiles and the regions its code
ran, as the observer needs them (mixed into ``Observer``). Nothing here imports Dynamo: the
program's own import of it does."""

from __future__ import annotations

import contextlib
import sys
import threading


class CompiledRegions:
    """The observer's hooks into Dynamo; the observer's state (``lines``, ``compiled``, patches)."""

    def _in_compiled(self, path: str, code) -> None:
        """Note the lines of a function whose Dynamo-compiled code ran (its ops have no line)."""
        key = (path, code.co_name, code.co_firstlineno)
        if key in self.compiled:
            return
        from torch._dynamo.convert_frame import input_codes

        last = code.co_firstlineno
        for ref in list(input_codes.seen):
            original = ref()
            if original is not None and (original.co_filename, original.co_name, original.co_firstlineno) == \
                    (code.co_filename, code.co_name, code.co_firstlineno):
                last = max([last] + [line for _, _, line in original.co_lines() if line])
        self.compiled[key] = last

    @contextlib.contextmanager
    def _dynamo_import(self):
        self.lines.pause()
        self._remove_patches()
        try:
            yield
        finally:
            if not self._stopped:
                self._dynamo_imported()
                self._install_patches()
            self.lines.resume()

    def _dynamo_imported(self) -> None:
        type(self._mode).skip_dynamo()  # before anything can compile: Dynamo must never trace our handler
        _prime_dynamo()
        try:
            from torch._dynamo.convert_frame import output_codes

            self._compiled_codes = output_codes.seen_ids
        except (ImportError, AttributeError):
            pass
        try:  # the probes in a compiled function (lines.py, before 3.12) run after its graph, no break
            import torch._dynamo.config as dynamo_config

            dynamo_config.reorderable_logging_functions.update(self.lines.probes())
        except (ImportError, AttributeError):
            pass
        try:  # no user line runs while Dynamo or Inductor compiles: the line counter need not either
            from torch._dynamo.callback import callback_handler

            callback_handler.register_start_callback(self._compile_start)
            callback_handler.register_end_callback(self._compile_end)
            self._compile_callbacks = callback_handler
        except (ImportError, AttributeError):
            pass

    def _compile_start(self, *_args) -> None:
        if threading.get_ident() == self._thread:
            self.lines.pause()

    def _compile_end(self, *_args) -> None:
        if threading.get_ident() == self._thread:
            self.lines.resume()

    def _compiled_regions(self) -> None:
        """Functions of user files that Dynamo compiled: their lines run as compiled code, which
        neither the line counter nor (with the dispatch mode off) the op observer attributes."""
        if "torch._dynamo.convert_frame" not in sys.modules:
            return  # nothing was compiled (and importing it now would cost seconds)
        try:
            from torch._dynamo.convert_frame import input_codes
        except ImportError:
            return
        for ref in list(input_codes.seen):
            code = ref()
            state = self._state(code.co_filename) if code is not None else None
            if state is not None:
                last = max([code.co_firstlineno] + [line for _, _, line in code.co_lines() if line])
                self.compiled.setdefault((state.path, code.co_name, code.co_firstlineno), last)


class _OnImport:
    """A meta path finder for one module: its import (the module's whole execution, with the imports
    it makes) runs inside ``around()``. It steps aside once it has found the module."""

    def __init__(self, name: str, around) -> None:
        self.name = name
        self.around = around

    def find_spec(self, fullname, path, target=None):
        if fullname != self.name:
            return None
        if self in sys.meta_path:
            sys.meta_path.remove(self)
        for finder in sys.meta_path:
            find = getattr(finder, "find_spec", None)
            spec = find(fullname, path, target) if find is not None else None
            if spec is not None:
                if spec.loader is not None and hasattr(spec.loader, "exec_module"):
                    spec.loader = _Around(spec.loader, self.around)
                return spec
        return None


class _Around:
    def __init__(self, loader, around) -> None:
        self.loader = loader
        self.around = around

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def exec_module(self, module) -> None:
        try:
            with self.around():
                self.loader.exec_module(module)
        finally:  # the module keeps the loader it would have had
            module.__loader__ = self.loader
            if getattr(module, "__spec__", None) is not None:
                module.__spec__.loader = self.loader

    def __getattr__(self, name):
        return getattr(self.loader, name)


def _prime_dynamo() -> None:
    """Dynamo builds its tables of torch functions (which are traced into the graph, which have a
    handler of their own, such as ``torch.tensor`` of a list of tensors) on first use, by looking the
    names up in ``torch``; built while our wrappers are installed, they would hold the wrappers and
    trace the user's compiled regions differently. Build them now, before patching."""
    try:
        from torch._dynamo import trace_rules
        from torch._dynamo.variables.torch import TorchInGraphFunctionVariable

        trace_rules.get_torch_obj_rule_map()
        TorchInGraphFunctionVariable._get_handlers()
    except (ImportError, AttributeError):  # another torch: its compile may then see the wrappers
        pass
