"""An account's secret as each chat service has it: one printable word, or Slack's two tokens
in either order; anything else refused with what the secret should be, and nothing kept."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from parley.channels.accounts import MAX_TOKEN, checked_token
from parley.channels.kinds import KINDS
from parley.errors import Invalid

WORD = st.text(st.characters(min_codepoint=0x21, max_codepoint=0x7E), min_size=1, max_size=40)
GAP = st.sampled_from([" ", "\n", "\r\n", "  \t"])


@given(bot=WORD, app=WORD, gap=GAP, bot_first=st.booleans())
def test_slack_takes_its_two_tokens_in_either_order_and_keeps_bot_then_app(
    bot: str, app: str, gap: str, bot_first: bool
) -> None:
    words = [f"xoxb-{bot}", f"xapp-{app}"]
    given_text = gap.join(words if bot_first else reversed(words)) + "\n"
    assert checked_token("slack", given_text) == f"xoxb-{bot} xapp-{app}"


@pytest.mark.parametrize(
    "secret",
    ["xoxb-1", "xapp-1", "xoxb-1 xoxb-2", "xapp-1 xapp-2", "xoxb-1 xapp-2 xapp-3", "a b", ""],
)
def test_slack_refuses_what_is_not_one_of_each(secret: str) -> None:
    with pytest.raises(Invalid, match="xoxb-"):
        checked_token("slack", secret)


@pytest.mark.parametrize("channel", sorted(k for k in KINDS if not KINDS[k].secret_prefixes))
@given(word=WORD)
def test_a_one_word_secret_is_kept_trimmed(channel: str, word: str) -> None:
    assert checked_token(channel, f"  {word}\n") == word


@pytest.mark.parametrize("channel", sorted(k for k in KINDS if not KINDS[k].secret_prefixes))
@pytest.mark.parametrize("secret", ["two words", "", "x" * (MAX_TOKEN + 1), "nul\x00", "é"])
def test_a_one_word_secret_refuses_the_rest(channel: str, secret: str) -> None:
    with pytest.raises(Invalid, match=KINDS[channel].secret):
        checked_token(channel, secret)


def test_a_channel_without_secrets_takes_none() -> None:
    with pytest.raises(Invalid, match="takes no token"):
        checked_token("web", "abc")
