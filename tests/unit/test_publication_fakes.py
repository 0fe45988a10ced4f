"""The fakes of Crossref and OpenAlex answer in the shape of the answers they were recorded from."""

from __future__ import annotations

import json
from typing import Any
from urllib.request import Request, urlopen

import pytest

from tests.fakecrossref import FakeCrossref
from tests.fakeopenalex import FakeOpenAlex
from tests.recordedservice import recorded, recorded_text


def _get(url: str) -> tuple[int, str, bytes]:
    request = Request(url, headers={"User-Agent": "syncd-test mailto:lab@example.org"})
    try:
        with urlopen(request, timeout=10) as response:
            return response.status, response.headers["Content-Type"], response.read()
    except Exception as exc:  # HTTPError carries the status and the body
        status = getattr(exc, "code", None)
        if status is None:
            raise
        return status, exc.headers["Content-Type"], exc.read()  # type: ignore[attr-defined]


def _keys(value: dict[str, Any]) -> set[str]:
    return set(value)


@pytest.fixture
def crossref() -> Any:
    with FakeCrossref() as fake:
        fake.publish(
            "10.1038/s42256-024-00832-8",
            title="Augmenting large language models with chemistry tools",
            authors=("Andres M. Bran", "Sam Cox"),
            year=2024,
            preprint="2304.05376",
            link="doi",
        )
        fake.add_notice("10.1038/s42256-024-00832-8", "10.1038/s42256-024-00900-1")
        yield fake


def test_a_crossref_list_has_the_recorded_envelope_and_items(crossref: FakeCrossref) -> None:
    status, content_type, body = _get(
        f"{crossref.url}/works?filter=relation.object:10.48550/arXiv.2304.05376,"
        "relation.object:2304.05376&rows=20"
    )
    assert (status, content_type) == (200, "application/json")
    answer, model = json.loads(body), recorded("crossref/works-filter-bibliographic.json")
    assert _keys(answer) == _keys(model)
    assert _keys(answer["message"]) == _keys(model["message"])
    (item,) = answer["message"]["items"]
    published = recorded("crossref/works-query-title.json")["message"]["items"][0]
    assert _keys(item) == _keys(published) | {"relation", "updated-by"}
    relation = item["relation"]["has-preprint"][0]
    assert _keys(relation) == {"id-type", "id", "asserted-by"}
    assert relation["id"] == "10.48550/arXiv.2304.05376"
    recorded_update = recorded("crossref/work-updated-by.json")["message"]["updated-by"][0]
    assert _keys(item["updated-by"][0]) == _keys(recorded_update)
    (request,) = crossref.requests_of("link")
    assert request.user_agent == "syncd-test mailto:lab@example.org"


def test_a_crossref_notice_list_carries_update_to(crossref: FakeCrossref) -> None:
    _, _, body = _get(f"{crossref.url}/works?filter=updates:10.1038/s42256-024-00832-8")
    (notice,) = json.loads(body)["message"]["items"]
    model = next(
        item
        for item in recorded("crossref/works-filter-update-to.json")["message"]["items"]
        if item.get("update-to")
    )
    assert _keys(notice) == _keys(model) - {"updated-by"}
    assert notice["update-to"][0]["DOI"] == "10.1038/s42256-024-00832-8"
    assert crossref.requests_of("notices")


def test_select_keeps_only_the_fields_asked_for(crossref: FakeCrossref) -> None:
    _, _, body = _get(f"{crossref.url}/works?query.bibliographic=chemistry+Bran&select=DOI,title")
    (item,) = json.loads(body)["message"]["items"]
    assert _keys(item) == {"DOI", "title"}


def test_a_crossref_work_and_the_recorded_404(crossref: FakeCrossref) -> None:
    status, _, body = _get(f"{crossref.url}/works/10.1038/s42256-024-00832-8")
    answer, model = json.loads(body), recorded("crossref/work-updated-by.json")
    assert status == 200 and _keys(answer) == _keys(model)
    for doi in ("10.48550/arXiv.2304.05376", "10.1000/unknown"):
        status, content_type, body = _get(f"{crossref.url}/works/{doi}")
        assert (status, content_type) == (404, "text/plain")
        assert body.decode() == recorded_text("crossref/work-not-found.txt")
    assert [r.kind for r in crossref.requests] == ["work", "work", "work"]


def test_a_failing_crossref_answers_its_status(crossref: FakeCrossref) -> None:
    crossref.fail(500)
    assert _get(f"{crossref.url}/works/10.1038/s42256-024-00832-8")[0] == 500
    crossref.fail(None)
    assert _get(f"{crossref.url}/works/10.1038/s42256-024-00832-8")[0] == 200


def test_an_openalex_work_has_the_recorded_shape() -> None:
    with FakeOpenAlex(key="k") as openalex:
        openalex.merged(
            "2401.00001",
            doi="10.1038/x-1",
            venue="Nature Physics",
            title="T",
            authors=("A B",),
            year=2024,
        )
        openalex.preprint("2304.05376", title="T", authors=("A B",), year=2023)
        published, preprint = recorded("openalex/works-title-search.json")["results"]
        for arxiv_id, model in (("2401.00001", published), ("2304.05376", preprint)):
            status, _, body = _get(f"{openalex.url}/works/doi:10.48550/arXiv.{arxiv_id}?api_key=k")
            work = json.loads(body)
            assert status == 200 and _keys(work) == _keys(model)
            location_keys = {frozenset(location) for location in model["locations"]}
            assert all(frozenset(location) in location_keys for location in work["locations"])
        status, content_type, body = _get(f"{openalex.url}/works/doi:10.48550/arXiv.2401.00001")
        assert status == 401 and content_type == "application/json"
        assert _keys(json.loads(body)) == {"error", "message"}
        status, _, body = _get(f"{openalex.url}/works/doi:10.48550/arXiv.2501.00009?api_key=k")
        assert status == 404 and body.decode() == recorded_text("openalex/not-found.html")
        assert [r.status for r in openalex.requests] == [200, 200, 401, 404]
