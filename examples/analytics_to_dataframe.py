"""Analytics into dataframes: summary rows load into pandas and polars as they are.

Each row of ``client.analytics.summary`` is a plain dict with ``date`` as ``datetime.date``,
so ``pandas.DataFrame(rows)`` and ``polars.DataFrame(rows)`` need no conversion.

    python examples/analytics_to_dataframe.py
"""

from __future__ import annotations

import datetime as dt

import pandas as pd
import polars as pl

from pushwire.testing import Emulator


def main() -> None:
    start = dt.date(2026, 3, 1)
    with Emulator() as emu:
        # Some subscribers joined over the first week of March.
        for day in range(7):
            for n in range(day + 1):
                emu.add_subscriber(
                    country="US" if n % 2 else "DE",
                    device_type="mobile" if n % 3 else "desktop",
                    subscribed_at=dt.datetime(2026, 3, 1 + day, 12, tzinfo=dt.timezone.utc),
                )
        client = emu.client()
        rows = client.analytics.summary(start, start + dt.timedelta(days=6), group_by="day")

        frame = pd.DataFrame(rows).set_index("date")
        print(frame[["subscriber_count", "desktop_subscriber_count", "mobile_subscriber_count"]])
        print("total new subscribers (pandas):", int(frame["subscriber_count"].sum()))

        weekly = pl.DataFrame(
            client.analytics.summary(start, start + dt.timedelta(days=13), group_by="week")
        )
        print(weekly.select("date", "subscriber_count", "ctr"))

        by_country = client.analytics.subscribers(types=["country", "device_type"])
        print(pd.DataFrame(by_country).fillna(0).astype(int))


if __name__ == "__main__":
    main()
