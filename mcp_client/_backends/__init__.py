"""The one place that tells asyncio from trio, chosen once per connection.

:mod:`.base` (:func:`~.base.current_backend` and what a backend offers) and :mod:`.waiter` (a request's one-shot
wake-up, one kind per backend). Nothing else in the package sniffs the backend.
"""
