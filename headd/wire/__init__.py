"""What the daemon and its clients share about the wire; both import it, it imports neither.

- ``framing``: a byte stream split into lines under the contract's line limit (sans-I/O).
- ``nesting``: how deep a line nests, bounded before any decoder recurses into it.
- ``socket_path``: where the store and the socket are; binding, probing and peer credentials.
- ``filter``: the one parse of a search's ``filter`` that both planes' scopes compile from.

The JSON-RPC dispatch stays in the daemon (``headd.daemon.json_rpc``); the error tree both sides
raise is ``headd.errors``; what a memory path may be is ``headd.paths``.
"""
