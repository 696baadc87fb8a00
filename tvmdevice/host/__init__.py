"""The built-in host device ``c``: the reference implementation of the Device API."""
