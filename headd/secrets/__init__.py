"""Credentials never enter the store: the rules (``rules``), the write door's check (``door``)
and the scan of a store's whole history (``history``)."""
