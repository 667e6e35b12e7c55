"""GET /api/v1/deliveries: the outbox for owners — a page at a time, newest first, by state."""

from __future__ import annotations

from parley.deliveries.deliverers import Deliverers
from parley.hub.outbox import OutboxWorker
from tests.hub.receiver import Frame
from tests.runs.support import get
from tests.support import Harness


async def _written(parley: Harness, count: int) -> None:
    """``count`` items of a kind this installation has no deliverer for, left pending."""
    await parley.context.runtime.outbox.stop()
    async with parley.context.store.transaction() as tx:
        for n in range(1, count + 1):
            await tx.outbox.put(f"frame:{n}", Frame(body=str(n)), parley.clock.now())


async def test_deliveries_are_paged_newest_first_and_filtered_by_state(parley: Harness) -> None:
    await _written(parley, 5)
    pages, cursor = [], None
    while True:
        page = await get(
            parley.owner, "/deliveries?limit=2" + (f"&before={cursor}" if cursor else "")
        )
        pages.append([item["key"] for item in page["items"]])
        if (cursor := page["next"]) is None:
            break
    assert pages == [["frame:5", "frame:4"], ["frame:3", "frame:2"], ["frame:1"]]
    [first, *_] = (await get(parley.owner, "/deliveries?state=pending"))["items"]
    assert (first["state"], first["kind"], first["attempts"]) == ("pending", "test_frame", 0)
    assert first["next_attempt_at"] == first["created_at"]  # due at once
    assert (await get(parley.owner, "/deliveries?state=failed"))["items"] == []

    await OutboxWorker(parley.context.store, parley.clock, Deliverers()).deliver_due()
    failed = (await get(parley.owner, "/deliveries?state=failed&state=delivered"))["items"]
    assert [item["key"] for item in failed] == [f"frame:{n}" for n in range(5, 0, -1)]
    assert {(i["last_error"], i["attempts"], i["next_attempt_at"]) for i in failed} == {
        ("no deliverer for kind 'test_frame'", 1, None)
    }
    assert (await get(parley.owner, "/deliveries?state=pending"))["items"] == []


async def test_only_owners_read_deliveries(parley: Harness) -> None:
    ada = parley.client(await parley.add_person("ada"))
    refused = await ada.get("/api/v1/deliveries")
    assert (refused.status_code, refused.json()["message"]) == (
        403,
        "only an owner may read the deliveries; ada is a member",
    )


async def test_bad_list_parameters_are_refused_clearly(parley: Harness) -> None:
    for query, expected in (
        ("state=lost", "state.0: Input should be 'pending', 'delivered' or 'failed'"),
        ("before=abc", "before: 'abc' is not a cursor this list gave out"),
        ("limit=0", "limit: Input should be greater than or equal to 1"),
        ("before=99999999999999999999", "is not a cursor this list gave out"),
        ("before=%C2%B2", "is not a cursor this list gave out"),  # '²' is a digit to Python
    ):
        response = await parley.owner.get(f"/api/v1/deliveries?{query}")
        assert response.status_code == 400, response.text
        assert expected in response.json()["message"]
