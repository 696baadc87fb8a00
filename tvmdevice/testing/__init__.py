"""Testing helpers and the conformance kit for device plugin authors."""
