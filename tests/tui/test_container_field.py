"""The Model step's "Container" field: typing an image runs the launch in that image, Review shows
the container command, clearing it goes back to the host's python."""

from __future__ import annotations

from pathlib import Path

from screens.app import WizardApp
from screens.forms import FieldInput
from screens.widgets.command import CodeView
from wizard.profile_schema import Profile


async def test_container_image_field_and_review(ready_dir: Path) -> None:
    profile = Profile.model_validate({"model": {"path": "/models/m"}, "parallel": {"tp": 2}})
    app = WizardApp(initial=profile, ready_dir=ready_dir)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("f2")
        field = app.screen.query_one("#container-image", FieldInput)
        field.focus()
        await pilot.press(*"img:1")
        await pilot.pause()
        assert app.profile.container is not None and app.profile.container.image == "img:1"
        await pilot.press("f5")
        await pilot.pause()
        command = app.screen.query_one("#review-command", CodeView).text
        assert "docker run" in command and "img:1" in command and "--init" in command
        assert "python3 -m sglang.launch_server" in command
        await pilot.press("f2")
        field = app.screen.query_one("#container-image", FieldInput)
        field.focus()
        await pilot.press(*["backspace"] * 5)
        await pilot.pause()
        assert app.profile.container is None
