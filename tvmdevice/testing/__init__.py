"""Testing helpers and the conformance kit for device plugin authors.

The kit checks that a device type honours every contract of the C Device
API — lifecycle, memory, copies and streams, attributes, kernels (bit-exact
with the host reference) and struct layout — against any installed device:

* ``tvmdevice check NAME`` prints a report (``--json``, ``--contract C``,
  ``--examples N``, ``-o KEY=VALUE``); exit status 0 only if nothing failed;
* ``pytest --pyargs tvmdevice.testing.suite --tvmdevice-device NAME`` runs
  the same checks as pytest tests (the pytest plugin,
  :mod:`tvmdevice.testing.pytest_plugin`, is registered through the
  ``pytest11`` entry point);
* :mod:`tvmdevice.testing.contracts` holds the checks as plain functions
  raising :class:`~tvmdevice.testing.contracts.ContractViolation`, and
  :mod:`tvmdevice.testing.runner` runs them and builds reports.

:mod:`tvmdevice.testing.sample_plugin` is a small conformant device to start
a plugin from; :mod:`tvmdevice.testing.oracle` runs TFLite Micro as an oracle.
Nothing here is imported by ``import tvmdevice``.
"""
