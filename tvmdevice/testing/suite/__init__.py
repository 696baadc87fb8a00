"""The ready-made conformance suite: ``pytest --pyargs tvmdevice.testing.suite --tvmdevice-device NAME``.

It lives inside the package, outside any project's ``testpaths``, so it runs
only when asked for by name.
"""
