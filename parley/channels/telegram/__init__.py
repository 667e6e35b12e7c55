"""The Telegram channel: an adapter per bot account, on python-telegram-bot (the optional extra
``parley-home[telegram]``), long-polling ``getUpdates``. Only the modules of this package import
telegram."""
