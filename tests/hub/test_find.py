"""Finding models: the HF cache, Hub search, and draft candidates with their fit checks."""

from __future__ import annotations

from pathlib import Path

import pytest
from stand_in_hub import StandInHub

from wizard.choices import draft_candidates
from wizard.hub import (
    HubError,
    HubSettings,
    cached_models,
    load_hub_facts,
    search_models,
)


def test_search_by_name_most_downloaded_first(hub: StandInHub) -> None:
    found = search_models("qwen3")
    assert found[:2] == ["Qwen/Qwen3-8B", "Qwen/Qwen3.6-27B"]
    assert "AngelSlim/Qwen3-8B_eagle3" in found
    assert search_models("no-such-thing") == []
    assert any(p.startswith("/api/models?") and "search=qwen3" in p for _, p in hub.requests)


def test_cache_lists_what_was_read(hub: StandInHub) -> None:
    assert cached_models() == []
    load_hub_facts("Qwen/Qwen3.6-27B")
    listed = cached_models()
    assert [m.repo_id for m in listed] == ["Qwen/Qwen3.6-27B"]
    assert listed[0].has_config and listed[0].snapshot is not None
    assert Path(listed[0].snapshot, "config.json").is_file()


def test_offline_search_looks_in_the_cache(hub: StandInHub, monkeypatch: pytest.MonkeyPatch) -> None:
    load_hub_facts("Qwen/Qwen3-8B")
    hub.clear()
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert search_models("qwen3") == ["Qwen/Qwen3-8B"]
    assert hub.requests == []


def test_search_on_an_unreachable_endpoint_is_a_hub_error(
    hf_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{port}")
    with pytest.raises(HubError) as info:
        search_models("qwen3")
    assert info.value.kind == "network"
    # a search term is not a repo id: no `hf download qwen3`, no "qwen3 is not in the HF cache"
    text = str(info.value)
    assert "hf download" not in text and "not in the HF cache" not in text, text
    assert "search the Hub" in text and "'qwen3'" in text and "HF_ENDPOINT" in text


def test_eagle3_drafts_for_qwen3_8b_with_fit(hub: StandInHub) -> None:
    target = load_hub_facts("Qwen/Qwen3-8B")
    found = {c.repo_id: c for c in draft_candidates("Qwen/Qwen3-8B", target, "EAGLE3")}
    assert set(found) == {
        "Tengyunw/qwen3_8b_eagle3",  # found by the name spelt with underscores
        "AngelSlim/Qwen3-8B_eagle3",
        "someone/Qwen3-8B-EAGLE",
        "other/Qwen3-8B-eagle3-wide",
    }
    assert found["AngelSlim/Qwen3-8B_eagle3"].fits and found["Tengyunw/qwen3_8b_eagle3"].fits
    assert found["AngelSlim/Qwen3-8B_eagle3"].kind == "EAGLE3"
    wide = found["other/Qwen3-8B-eagle3-wide"]
    assert not wide.fits and "expects hidden size 5120" in wide.problems[0]
    eagle2 = found["someone/Qwen3-8B-EAGLE"]
    assert not eagle2.fits and eagle2.kind == "EAGLE"
    assert "algorithm is EAGLE3" in " ".join(eagle2.problems)
    ordered = draft_candidates("Qwen/Qwen3-8B", target, "EAGLE3")
    assert ordered[0].fits and not ordered[-1].fits
    assert hub.weight_requests() == []


def test_eagle_drafts_fit_the_eagle_layout(hub: StandInHub) -> None:
    target = load_hub_facts("Qwen/Qwen3-8B")
    found = {c.repo_id: c for c in draft_candidates("Qwen/Qwen3-8B", target, "EAGLE")}
    assert found["someone/Qwen3-8B-EAGLE"].fits
    assert not found["AngelSlim/Qwen3-8B_eagle3"].fits  # an EAGLE-3 head under EAGLE


def test_cached_drafts_are_found_offline(hub: StandInHub, monkeypatch: pytest.MonkeyPatch) -> None:
    target = load_hub_facts("Qwen/Qwen3-8B")
    load_hub_facts("Tengyunw/qwen3_8b_eagle3")  # in the cache now; name has qwen3_8b
    hub.clear()
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    found = draft_candidates("Qwen/Qwen3-8B", target, "EAGLE3", settings=HubSettings.from_env())
    assert [(c.repo_id, c.where, c.fits) for c in found] == [
        ("Tengyunw/qwen3_8b_eagle3", "cache", True)
    ]
    assert hub.requests == []


def test_completion_of_folders_and_cached_repo_ids(
    hub: StandInHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from wizard.hub import complete_model_path

    (tmp_path / "models" / "Qwen3.6-27B").mkdir(parents=True)
    (tmp_path / "models" / "Qwen3-8B").mkdir()
    (tmp_path / "models" / "notes.txt").write_text("")
    assert complete_model_path(str(tmp_path / "models" / "Qwen3")) == [
        str(tmp_path / "models" / "Qwen3-8B"),
        str(tmp_path / "models" / "Qwen3.6-27B"),
    ]
    monkeypatch.chdir(tmp_path)
    assert complete_model_path("./models/Qwen3.") == ["./models/Qwen3.6-27B"]
    assert complete_model_path("qwen/") == []
    load_hub_facts("Qwen/Qwen3.6-27B")
    assert complete_model_path("qwen/") == ["Qwen/Qwen3.6-27B"]
    assert complete_model_path("") == []
