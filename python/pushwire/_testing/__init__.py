"""The emulator's Python side, by idea; :mod:`pushwire.testing` is its public face."""
