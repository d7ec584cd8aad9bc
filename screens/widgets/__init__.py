"""Widgets shared by the wizard screens."""
