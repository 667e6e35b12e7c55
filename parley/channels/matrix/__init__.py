"""The Matrix channel: an adapter per bot user, on mautrix (the optional extra
``parley-home[matrix]``). Only the modules of this package import mautrix."""
