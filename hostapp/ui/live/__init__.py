"""The live view: eight piezo scopes, eight load traces, events as they come."""
