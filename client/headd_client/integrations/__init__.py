"""Connecting coding agents: per-client config writers with receipts, and the hooks."""
