"""The MCP bridge: ``headctl mcp`` serving memhtml's tools over stdio from the daemon."""
