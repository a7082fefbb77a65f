"""detachlint: find unsafe copy, detach and aliasing patterns in PyTorch code.

Importing this package never imports torch. The runtime companion is a separate distribution
(``runtime/`` in the checkout, package ``detachlint_runtime``); the CLI calls into it only for
``check --confirm`` and ``run``.
"""

__version__ = "0.1.0"
