"""Brains: how an ai agent thinks. The foundation only knows how to read a brain spec."""
