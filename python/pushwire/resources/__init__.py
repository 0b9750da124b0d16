"""The resource namespaces of the clients (``client.triggers``, ...), one module per resource
as in ``src/client/``, each holding the blocking class, its async twin, and the raw twins of both
(``client.with_raw_response``)."""

from pushwire.resources.analytics import (
    Analytics,
    AnalyticsWithRawResponse,
    AsyncAnalytics,
    AsyncAnalyticsWithRawResponse,
)
from pushwire.resources.drips import (
    AsyncDrips,
    AsyncDripsWithRawResponse,
    Drips,
    DripsWithRawResponse,
)
from pushwire.resources.events import (
    AsyncEvents,
    AsyncEventsWithRawResponse,
    Events,
    EventsWithRawResponse,
)
from pushwire.resources.notifications import (
    AsyncNotifications,
    AsyncNotificationsWithRawResponse,
    Notifications,
    NotificationsWithRawResponse,
)
from pushwire.resources.products import (
    AsyncProducts,
    AsyncProductsWithRawResponse,
    Products,
    ProductsWithRawResponse,
)
from pushwire.resources.segments import (
    AsyncSegments,
    AsyncSegmentsWithRawResponse,
    Segments,
    SegmentsWithRawResponse,
)
from pushwire.resources.triggers import (
    AsyncTriggers,
    AsyncTriggersWithRawResponse,
    Triggers,
    TriggersWithRawResponse,
)

__all__ = [
    "Analytics",
    "AnalyticsWithRawResponse",
    "AsyncAnalytics",
    "AsyncAnalyticsWithRawResponse",
    "AsyncDrips",
    "AsyncDripsWithRawResponse",
    "AsyncEvents",
    "AsyncEventsWithRawResponse",
    "AsyncNotifications",
    "AsyncNotificationsWithRawResponse",
    "AsyncProducts",
    "AsyncProductsWithRawResponse",
    "AsyncSegments",
    "AsyncSegmentsWithRawResponse",
    "AsyncTriggers",
    "AsyncTriggersWithRawResponse",
    "Drips",
    "DripsWithRawResponse",
    "Events",
    "EventsWithRawResponse",
    "Notifications",
    "NotificationsWithRawResponse",
    "Products",
    "ProductsWithRawResponse",
    "Segments",
    "SegmentsWithRawResponse",
    "Triggers",
    "TriggersWithRawResponse",
]
