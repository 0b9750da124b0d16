"""The extension's models under the name of their stub, ``_core_models.pyi`` (the extension's
stub, ``_core.pyi``, re-exports them from there), so that ``mypy.stubtest`` holds that stub to
the classes it describes."""

from pushwire._core import *
