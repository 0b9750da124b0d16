"""Analytics into dataframes: summary rows load into pandas (and polars) as they are.

    pip install pushwire pandas           # polars too, for its part: pip install polars
    python examples/analytics_to_dataframe.py

Each row of ``client.analytics.summary`` is a plain dict whose ``date`` is a
``datetime.date``, the period's first day (a UTC calendar day, not an instant). polars reads
it as ``Date``; pandas, which has no date dtype, as an ``object`` column, made ``datetime64``
in the same line for its time-based windows. The polars part is skipped without polars.
"""

from __future__ import annotations

import datetime as dt

import pandas as pd

from pushwire.testing import Emulator


def main() -> None:
    start = dt.date(2026, 3, 1)
    with Emulator() as emu:
        # Some subscribers joined over the first two weeks of March, one more each day.
        for day in range(14):
            for n in range(day + 1):
                emu.add_subscriber(
                    country="US" if n % 2 else "DE",
                    device_type="mobile" if n % 3 else "desktop",
                    subscribed_at=dt.datetime(2026, 3, 1 + day, 12, tzinfo=dt.timezone.utc),
                )
        client = emu.client()
        rows = client.analytics.summary(start, start + dt.timedelta(days=13), group_by="day")

        daily = pd.DataFrame(rows).astype({"date": "datetime64[s]"}).set_index("date")
        daily["new_last_7_days"] = daily["subscriber_count"].rolling("7D").sum().astype(int)
        print(daily[["subscriber_count", "new_last_7_days", "mobile_subscriber_count"]])
        print("total new subscribers (pandas):", int(daily["subscriber_count"].sum()))

        by_country = client.analytics.subscribers(types=["country", "device_type"])
        print(pd.DataFrame(by_country).fillna(0).astype(int))

        try:
            import polars as pl
        except ImportError:
            print("polars is not installed: pip install polars for the weekly frame")
            return
        weekly = pl.DataFrame(
            client.analytics.summary(start, start + dt.timedelta(days=13), group_by="week")
        )
        print(weekly.select("date", "subscriber_count", "ctr"))  # date: Date


if __name__ == "__main__":
    main()
