"""The console: a local web view of the memory for the person who owns it (``headctl ui``).

A client of the daemon like ``headctl``: every read is a daemon method or git's own history, and
every change a daemon session or method. ``command.py`` registers ``headctl ui`` without
importing the web stack, which loads only when the console starts.
"""
