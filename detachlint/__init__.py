"""detachlint: find unsafe copy, detach and aliasing patterns in PyTorch code.

Importing this package never imports torch; only ``detachlint.runtime`` does, lazily.
"""

__version__ = "0.1.0"
