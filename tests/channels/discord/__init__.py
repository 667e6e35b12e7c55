"""A local fake Discord that discord.py really connects to, and its tests."""
