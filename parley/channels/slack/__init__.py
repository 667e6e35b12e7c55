"""The Slack channel: an adapter per Slack app (bot token and app-level token), on slack-sdk
(the optional extra ``parley-home[slack]``), its events over Socket Mode. Only the modules of
this package import slack_sdk."""
