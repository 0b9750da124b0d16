"""A job split across Celery workers over Redis: see README.md in this directory.

- ``config``: the Celery app's settings, from the environment (no pushwire client).
- ``tasks``: the worker side, with the process's one ``pushwire.Client()``.
- ``driver``: the caller side, which splits a job into chunks, enqueues them and reports.
"""
