"""flatfab: intent-driven automation for flat L3 AI fabrics."""

__version__ = "0.1.0"
