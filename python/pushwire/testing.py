"""A faithful local emulator of the push notification service, for tests and demos.

>>> from pushwire.testing import Emulator
>>> with Emulator(api_key="test-key") as emu:
...     vip = emu.create_segment("vip")
...     # point your code at emu.base_url / emu.events_url with emu.api_key
"""

from pushwire._testing._clients import openapi
from pushwire._testing._data import DEFAULT_RETENTION, Records
from pushwire._testing.emulator import Emulator
from pushwire._testing.process import EmulatorProcess

__all__ = ["DEFAULT_RETENTION", "Emulator", "EmulatorProcess", "Records", "openapi"]

# Named by the module they are imported from (their repr, and a pickled Records).
for _cls in (Emulator, EmulatorProcess, Records):
    _cls.__module__ = __name__
