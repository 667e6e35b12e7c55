"""The Discord channel: an adapter per bot account, on discord.py (the optional extra
``parley-home[discord]``). Only the modules of this package import discord; ``available`` says
whether it is installed without importing it."""
