"""What detachlint knows about PyTorch, as data: which ops and methods write in place, return views
or may return their input's memory, save tensors for backward, and what ``torch.nn`` modules do
(``catalog``, ``saved_ops`` measured by ``tools/saved_for_backward.py``), with the questions asked of
it (``torch_facts``). The front end and the analyses both read it, so it sits below both and
imports neither (``tests/test_layers.py``); it never imports torch (``tests/test_catalog.py`` checks
it against the installed torch)."""
