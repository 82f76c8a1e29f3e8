"""Adapters: thin modules that connect midturn to agent frameworks (extras)."""
