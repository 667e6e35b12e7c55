"""Tests of the channel adapters and the local fakes of the services they speak to."""
