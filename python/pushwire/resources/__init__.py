"""The resource namespaces of the clients (``client.triggers``, ...), one module per resource
as in ``src/client/``, each holding the blocking class and its async twin."""

from pushwire.resources.analytics import Analytics, AsyncAnalytics
from pushwire.resources.drips import AsyncDrips, Drips
from pushwire.resources.events import AsyncEvents, Events
from pushwire.resources.notifications import AsyncNotifications, Notifications
from pushwire.resources.products import AsyncProducts, Products
from pushwire.resources.segments import AsyncSegments, Segments
from pushwire.resources.triggers import AsyncTriggers, Triggers

__all__ = [
    "Analytics",
    "AsyncAnalytics",
    "AsyncDrips",
    "AsyncEvents",
    "AsyncNotifications",
    "AsyncProducts",
    "AsyncSegments",
    "AsyncTriggers",
    "Drips",
    "Events",
    "Notifications",
    "Products",
    "Segments",
    "Triggers",
]
