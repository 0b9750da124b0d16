"""A faithful local emulator of the push notification service, for tests and demos.

>>> from pushwire.testing import Emulator
>>> with Emulator(api_key="test-key") as emu:
...     vip = emu.create_segment("vip")
...     # point your code at emu.base_url / emu.events_url with emu.api_key
"""

from pushwire.testing._data import DEFAULT_RETENTION, Records
from pushwire.testing.emulator import Emulator
from pushwire.testing.process import EmulatorProcess

__all__ = ["DEFAULT_RETENTION", "Emulator", "EmulatorProcess", "Records"]
