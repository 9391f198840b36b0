"""What the daemon and its clients share about the wire: framing and where the socket lives.

Both sides import this package and nothing of the other: ``framing`` splits a byte stream into
lines under the contract's line limit (sans-I/O), ``socket_path`` resolves the store and the
socket and binds or probes it. The JSON-RPC dispatch stays in the daemon; the error tree both
sides raise lives in ``headd.errors``.
"""
