"""A project on disk: its file, its folders, the intent and plan loaded from them."""
